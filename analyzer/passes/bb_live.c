/* Job-level series of a running black-box job: see bb_live.h. */
#include "bb_live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cmp.h"

const double tsa_live_bucket_le[TSA_LIVE_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

#define MIN_RING 2048u
#define MIN_NAMED_STEPS 10u  /* fewer window steps name nobody */
#define Z_SD_FLOOR_NS 1000.0 /* others' spread below 1 us is clock resolution */

struct tsa_live_cell {
    uint64_t step_plus1;     /* 0: empty */
    uint64_t dur_ns, nccl_ns;
    uint64_t stall_ns, peak_ns; /* the extra's, when xflags says so */
    uint32_t seq_lo;
    uint16_t flags, xflags;  /* TSC_STEP_F_*, TSC_STEP_X_* */
};

static int has_stall(const tsa_live_cell *c) { return (c->xflags & TSC_STEP_X_STALL) != 0; }

static int has_peak(const tsa_live_cell *c)
{
    return (c->xflags & (TSC_STEP_X_GEMM | TSC_STEP_X_PEAK)) == (TSC_STEP_X_GEMM | TSC_STEP_X_PEAK);
}

void tsa_live_default_opts(tsa_live_opts *o)
{
    o->window = 100;
    o->z_threshold = 3.0;
    o->min_slowdown = 0.03;
}

int tsa_live_init(tsa_live *L, const tsa_live_opts *opt)
{
    memset(L, 0, sizeof *L);
    L->opt = *opt;
    if (!L->opt.window)
        L->opt.window = 1;
    uint64_t cap = MIN_RING;
    while (cap < 2ull * L->opt.window)
        cap *= 2;
    L->mask = cap - 1;
    L->win = calloc(L->opt.window, sizeof *L->win);
    L->rel = calloc(L->opt.window, sizeof *L->rel);
    L->top = L->last_slowest = L->lagging = L->last_stall_max = -1;
    L->last_z = L->stall_ratio = L->mfu = NAN;
    if (!L->win || !L->rel) {
        tsa_live_free(L);
        return -1;
    }
    return 0;
}

void tsa_live_free(tsa_live *L)
{
    for (size_t i = 0; i < L->n_ranks; i++)
        free(L->ranks[i].ring);
    free(L->ranks);
    free(L->by_rank);
    free(L->counts);
    free(L->own);
    free(L->dur);
    free(L->stall);
    free(L->win);
    free(L->rel);
    memset(L, 0, sizeof *L);
}

void tsa_live_reset(tsa_live *L)
{
    tsa_live_opts opt = L->opt;
    tsa_live_free(L);
    tsa_live_init(L, &opt);
}

static int grow(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

long tsa_live_rank_index(tsa_live *L, int rank)
{
    for (size_t i = 0; i < L->n_ranks; i++)
        if (L->ranks[i].rank == rank)
            return (long)i;
    if (L->n_ranks == L->ranks_cap) {
        size_t cap = L->ranks_cap ? L->ranks_cap * 2 : 16;
        if (grow((void **)&L->ranks, cap, sizeof *L->ranks) < 0 ||
            grow((void **)&L->by_rank, cap, sizeof *L->by_rank) < 0 ||
            grow((void **)&L->counts, cap, sizeof *L->counts) < 0 ||
            grow((void **)&L->own, cap, sizeof *L->own) < 0 ||
            grow((void **)&L->dur, cap, sizeof *L->dur) < 0 ||
            grow((void **)&L->stall, cap, sizeof *L->stall) < 0)
            return -1;
        L->ranks_cap = cap;
    }
    tsa_live_rank *r = &L->ranks[L->n_ranks];
    memset(r, 0, sizeof *r);
    r->rank = rank;
    r->ring = calloc(L->mask + 1, sizeof *r->ring);
    if (!r->ring)
        return -1;
    L->counts[L->n_ranks] = 0;
    size_t at = L->n_ranks;
    while (at && L->ranks[L->by_rank[at - 1]].rank > rank) {
        L->by_rank[at] = L->by_rank[at - 1];
        at--;
    }
    L->by_rank[at] = L->n_ranks;
    return (long)L->n_ranks++;
}

void tsa_live_add(tsa_live *L, size_t i, const tsc_step_summary *s, const tsc_step_extra *x,
                  size_t n)
{
    tsa_live_rank *r = &L->ranks[i];
    for (size_t k = 0; k < n; k++) {
        const tsc_step_summary *y = &s[k];
        if (y->step == UINT64_MAX)
            continue;
        tsa_live_cell *c = &r->ring[y->step & L->mask];
        *c = (tsa_live_cell){.step_plus1 = y->step + 1,
                             .dur_ns = y->end_ns > y->start_ns ? y->end_ns - y->start_ns : 0,
                             .nccl_ns = y->nccl_ns, .seq_lo = (uint32_t)y->opener_seq,
                             .flags = (uint16_t)y->flags};
        if (x && x[k].step == y->step) {
            c->xflags = x[k].flags;
            c->stall_ns = x[k].data_stall_ns;
            c->peak_ns = x[k].gemm_peak_ns;
            L->any_peak |= has_peak(c);
        }
        r->next = y->step + 1 > r->next ? y->step + 1 : r->next;
        r->received++;
        r->dropped += y->dropped;
    }
}

/* The median of v[0..n-1] (sorted in place): the middle value, or the
 * mean of the two middle ones. */
static double median(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, tsa_cmp_u64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/* z-score of the slowest rank's time outside NCCL against the others'
 * (their mean and sample standard deviation, floored at 1 us). */
static double slowest_z(const tsa_live *L, size_t slowest)
{
    size_t n = L->n_ranks;
    if (n < 3)
        return NAN;
    double sum = 0, sq = 0;
    for (size_t k = 0; k < n; k++)
        if (L->by_rank[k] != slowest)
            sum += (double)L->own[L->by_rank[k]];
    double mean = sum / (double)(n - 1);
    for (size_t k = 0; k < n; k++)
        if (L->by_rank[k] != slowest) {
            double d = (double)L->own[L->by_rank[k]] - mean;
            sq += d * d;
        }
    double sd = sqrt(sq / (double)(n - 2));
    return ((double)L->own[slowest] - mean) / (sd > Z_SD_FLOOR_NS ? sd : Z_SD_FLOOR_NS);
}

static void push_window(tsa_live *L, const tsa_live_wstep *w)
{
    size_t cap = L->opt.window;
    if (L->win_n == cap) {
        const tsa_live_wstep *old = &L->win[L->win_head];
        if (old->slowest >= 0)
            L->counts[old->slowest]--;
        L->win_head = (L->win_head + 1) % cap;
        L->win_n--;
    }
    L->win[(L->win_head + L->win_n) % cap] = *w;
    L->win_n++;
    if (w->slowest >= 0)
        L->counts[w->slowest]++;
}

/* Step s's data stall over the ranks that measured it: the median, the
 * largest and its rank; summed into the totals and w. */
static void step_stall(tsa_live *L, uint64_t s, tsa_live_wstep *w)
{
    size_t m = 0;
    uint64_t best = 0;
    int tie = 0;
    int32_t who = -1;
    for (size_t i = 0; i < L->n_ranks; i++) {
        const tsa_live_cell *c = &L->ranks[i].ring[s & L->mask];
        if (!has_stall(c))
            continue;
        if (!m || c->stall_ns > best) {
            best = c->stall_ns;
            who = (int32_t)i;
            tie = 0;
        } else if (c->stall_ns == best) {
            tie = 1;
        }
        L->stall[m++] = c->stall_ns;
        w->stall_ns += c->stall_ns;
        w->stall_step_ns += c->dur_ns;
    }
    L->last_stall_ranks = (uint32_t)m;
    L->last_stall_max_ns = best;
    L->last_stall_max = tie ? -1 : who;
    L->last_stall_median_ns = m ? median(L->stall, m) : 0;
    L->stall_rank_steps += m;
    L->stall_ns += w->stall_ns;
}

/* Step s, which every rank has summarized (or lost). */
static void complete_step(tsa_live *L, uint64_t s)
{
    size_t n = L->n_ranks;
    uint64_t max_dur = 0, nccl = 0, sum_dur = 0, best = 0;
    int any_slow = 0, mismatch = 0, tie = 0;
    size_t slowest = 0;
    uint32_t seq0 = 0;
    for (size_t i = 0; i < n; i++) {
        const tsa_live_cell *c = &L->ranks[i].ring[s & L->mask];
        if (c->step_plus1 != s + 1) {
            L->incomplete++;
            return;
        }
        L->dur[i] = c->dur_ns;
        L->own[i] = c->dur_ns - (c->nccl_ns < c->dur_ns ? c->nccl_ns : c->dur_ns);
        max_dur = c->dur_ns > max_dur ? c->dur_ns : max_dur;
        nccl += c->nccl_ns;
        sum_dur += c->dur_ns;
        any_slow |= (c->flags & TSC_STEP_F_ANOMALY) != 0;
        mismatch |= i && c->seq_lo != seq0;
        seq0 = i ? seq0 : c->seq_lo;
        if (!i || L->own[i] > best) {
            best = L->own[i];
            slowest = i;
            tie = 0;
        } else if (L->own[i] == best) {
            tie = 1;
        }
    }
    L->complete++;
    L->anomalous += any_slow;
    L->mismatched += mismatch;
    L->nccl_ns += nccl;
    L->step_ns += sum_dur;
    L->job_step_ns += max_dur;
    int b = 0;
    while (b < TSA_LIVE_BUCKETS && max_dur / 1e9 > tsa_live_bucket_le[b])
        b++;
    L->buckets[b]++;
    L->have_last = 1;
    L->last_step = s;
    L->last_max_ns = max_dur;
    L->last_slowest = tie ? -1 : (int32_t)slowest;
    L->last_z = tie ? NAN : slowest_z(L, slowest);
    L->last_median_ns = median(L->dur, n);
    tsa_live_wstep w = {.step = s, .slowest = L->last_slowest, .nccl_ns = nccl,
                        .step_ns = sum_dur};
    w.median_own_ns = (uint64_t)median(L->own, n);
    step_stall(L, s, &w);
    push_window(L, &w);
}

/* The window's MFU estimate: each rank's GEMM time at peak over its step
 * time, in the window's steps where it measured it; their mean. */
static void window_mfu(tsa_live *L)
{
    double sum = 0;
    L->mfu_ranks = 0;
    for (size_t j = 0; j < L->n_ranks && L->any_peak; j++) {
        size_t i = L->by_rank[j];
        uint64_t peak = 0, dur = 0;
        for (size_t k = 0; k < L->win_n; k++) {
            uint64_t s = L->win[(L->win_head + k) % L->opt.window].step;
            const tsa_live_cell *c = &L->ranks[i].ring[s & L->mask];
            if (c->step_plus1 == s + 1 && has_peak(c)) {
                peak += c->peak_ns;
                dur += c->dur_ns;
            }
        }
        if (dur) {
            sum += (double)peak / (double)dur;
            L->mfu_ranks++;
        }
    }
    L->mfu = L->mfu_ranks ? sum / L->mfu_ranks : NAN;
}

/* The window's most frequent slowest rank: its share, binomial z-score
 * and slowdown; named when all three say so. */
static void window_stats(tsa_live *L)
{
    L->top = -1;
    L->named = 0;
    L->top_share = L->top_z = L->top_slowdown = 0;
    uint64_t nccl = 0, dur = 0, stall = 0, stall_dur = 0;
    for (size_t k = 0; k < L->win_n; k++) {
        const tsa_live_wstep *w = &L->win[(L->win_head + k) % L->opt.window];
        nccl += w->nccl_ns;
        dur += w->step_ns;
        stall += w->stall_ns;
        stall_dur += w->stall_step_ns;
    }
    L->nccl_ratio = dur ? (double)nccl / (double)dur : 0;
    L->stall_ratio = stall_dur ? (double)stall / (double)stall_dur : NAN;
    window_mfu(L);
    uint32_t most = 0;
    for (size_t k = 0; k < L->n_ranks; k++) /* a tie: the lowest rank */
        if (L->counts[L->by_rank[k]] > most) {
            most = L->counts[L->by_rank[k]];
            L->top = (int32_t)L->by_rank[k];
        }
    if (L->top < 0)
        return;
    double W = (double)L->win_n, p = 1.0 / (double)L->n_ranks;
    L->top_share = most / W;
    L->top_z = L->n_ranks > 1 ? (most - W * p) / sqrt(W * p * (1 - p)) : 0;
    const tsa_live_rank *r = &L->ranks[L->top];
    size_t m = 0;
    for (size_t k = 0; k < L->win_n; k++) {
        const tsa_live_wstep *w = &L->win[(L->win_head + k) % L->opt.window];
        const tsa_live_cell *c = &r->ring[w->step & L->mask];
        if (c->step_plus1 != w->step + 1 || !w->median_own_ns)
            continue;
        uint64_t own = c->dur_ns - (c->nccl_ns < c->dur_ns ? c->nccl_ns : c->dur_ns);
        L->rel[m++] = (double)own / (double)w->median_own_ns - 1;
    }
    if (m) {
        qsort(L->rel, m, sizeof *L->rel, tsa_cmp_double);
        L->top_slowdown = m % 2 ? L->rel[m / 2] : (L->rel[m / 2 - 1] + L->rel[m / 2]) / 2;
    }
    L->named = L->win_n >= MIN_NAMED_STEPS && L->n_ranks > 1 &&
               L->top_z >= L->opt.z_threshold && L->top_slowdown >= L->opt.min_slowdown;
}

void tsa_live_update(tsa_live *L)
{
    if (!L->n_ranks || !L->win)
        return; /* nothing yet, or a reset that found no memory */
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t lag = 0;
    for (size_t k = 0; k < L->n_ranks; k++) { /* a tie: the lowest rank */
        size_t i = L->by_rank[k];
        uint64_t next = L->ranks[i].next;
        if (next < lo) {
            lo = next;
            lag = i;
        }
        hi = next > hi ? next : hi;
    }
    L->lag_steps = hi - lo;
    L->lagging = hi > lo ? (int32_t)lag : -1;
    /* A rank whose file is not there yet would be missing from the steps
     * made complete now. */
    if (L->n_ranks < L->expected)
        return;
    /* Steps further back than a ring are gone on the ranks that are ahead. */
    if (lo > L->next + L->mask + 1) {
        L->incomplete += lo - (L->mask + 1) - L->next;
        L->next = lo - (L->mask + 1);
    }
    for (; L->next < lo; L->next++)
        complete_step(L, L->next);
    window_stats(L);
}
