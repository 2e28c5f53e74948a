/* DATA.EVERY_NTH: data stalls that hit every Nth step, the signature of a
 * DataLoader with too few workers.  Each worker builds a whole batch; when
 * one batch takes longer to load than N steps take to compute, the N
 * prefetched batches are used up and the loop waits for worker 0 again:
 * one long stall every N steps (N = num_workers), none in between.
 *
 * Per rank, over the analysed steps: a step is stalled when its data stall
 * (the step's GPU idle before its first work, the same as DATA.STALL) is
 * over TSA_TH_NTH_STALL of the rank's median step time.  The pattern holds
 * when at least TSA_NTH_MIN_STALLED steps are stalled, at most half of the
 * steps are (stalls on most steps are DATA.STALL's case), and at least
 * three quarters of the distances between consecutive stalled steps equal
 * one period N >= 2. */
#include "nth.h"
#include "load/rank_view.h"
#include "util/cmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct nth_pattern {
    int period;             /* N, 0 when no pattern */
    size_t stalled, steps;
    double stall_ms;        /* mean stall of a stalled step */
    double compute_ms;      /* median length of the other steps */
} nth_pattern;

static int64_t median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, tsa_cmp_i64);
    return v[n / 2];
}

/* Most common distance between consecutive stalled steps, if it covers
 * three quarters of them. */
static int common_period(const size_t *idx, size_t n)
{
    int best = 0;
    size_t best_count = 0;
    for (size_t i = 1; i < n; i++) {
        size_t d = idx[i] - idx[i - 1], count = 0;
        for (size_t j = 1; j < n; j++)
            count += idx[j] - idx[j - 1] == d;
        if (count > best_count) {
            best_count = count;
            best = d > 1000000 ? 0 : (int)d;
        }
    }
    return 4 * best_count >= 3 * (n - 1) && best >= 2 ? best : 0;
}

static int rank_pattern(const tsa_rank *r, nth_pattern *p)
{
    memset(p, 0, sizeof *p);
    size_t n = 0;
    for (size_t s = 0; s < r->n_steps; s++)
        n += !r->steps[s].warmup;
    if (n < 2 * TSA_NTH_MIN_STALLED)
        return 0;
    int64_t *len = malloc(n * sizeof *len);
    size_t *idx = malloc(n * sizeof *idx);
    if (!len || !idx) {
        free(len);
        free(idx);
        return -1;
    }
    size_t k = 0;
    for (size_t s = 0; s < r->n_steps; s++)
        if (!r->steps[s].warmup)
            len[k++] = r->steps[s].end_ns - r->steps[s].start_ns;
    double limit = TSA_TH_NTH_STALL * (double)median(len, n);
    size_t stalled = 0, others = 0, pos = 0;
    double stall_sum = 0;
    for (size_t s = 0; s < r->n_steps; s++) {
        const tsa_step *st = &r->steps[s];
        if (st->warmup)
            continue;
        if ((double)st->phase_ns[TSA_PHASE_DATA] > limit) {
            idx[stalled++] = pos;
            stall_sum += (double)st->phase_ns[TSA_PHASE_DATA];
        } else {
            len[others++] = st->end_ns - st->start_ns; /* len is free to reuse */
        }
        pos++;
    }
    if (stalled >= TSA_NTH_MIN_STALLED && 2 * stalled <= n) {
        p->period = common_period(idx, stalled);
        p->stalled = stalled;
        p->steps = n;
        p->stall_ms = stall_sum / (double)stalled / 1e6;
        p->compute_ms = (double)median(len, others) / 1e6;
    }
    free(len);
    free(idx);
    return 0;
}

int tsa_nth_stall_findings(const tsa_analysis *a, tsa_findings *out)
{
    nth_pattern first, p;
    memset(&first, 0, sizeof first);
    size_t ranks = 0;
    int32_t rank = -1;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&a->job->ranks[i], TSA_VIEW_STEPS, &v);
        int rc = r ? rank_pattern(r, &p) : -1;
        tsa_view_close(&v);
        if (rc)
            return -1;
        if (!p.period)
            continue;
        if (!ranks++) {
            first = p;
            rank = a->job->ranks[i].rank;
        }
    }
    if (!ranks)
        return 0;
    /* One batch per worker per period: a worker needs N steps' compute plus
     * the stall to load one, so about N + stall/step workers keep up. */
    double workers = first.compute_ms > 0
                         ? ceil((double)first.period + first.stall_ms / first.compute_ms)
                         : (double)first.period + 1;
    tsa_finding *f = tsa_findings_add(
        out, "DATA.EVERY_NTH", TSA_SEV_WARNING, 0, ranks == 1 ? rank : -1,
        "The input pipeline has too few workers: raise DataLoader num_workers (the period "
        "suggests it is now about N; this rate wants at least the number in the title), set "
        "persistent_workers=True and prefetch_factor >= 2",
        "every %d steps the GPU waits %.1f ms for data (%zu of %zu steps, %zu rank(s)): "
        "about %.0f DataLoader workers would keep up",
        first.period, first.stall_ms, first.stalled, first.steps, ranks, workers);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "step records: every %d steps a step's data stall (%zu of %zu "
                            "steps, %.1f ms each) against %.1f ms for a step without it",
                         first.period, first.stalled, first.steps, first.stall_ms,
                         first.compute_ms);
    tsa_finding_evidence(f, "the same period on %zu rank(s)", ranks);
    tsa_finding_number(f, "period_steps", first.period);
    tsa_finding_number(f, "stalled_steps", (double)first.stalled);
    tsa_finding_number(f, "stall_per_stalled_step_ms", first.stall_ms);
    tsa_finding_number(f, "step_without_stall_ms", first.compute_ms);
    tsa_finding_number(f, "workers_estimate", workers);
    tsa_finding_number(f, "ranks", (double)ranks);
    return 0;
}
