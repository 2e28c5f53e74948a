/* One clock.  Every rank leaves a symmetric collective (AllReduce,
 * AllGather, ReduceScatter) within microseconds of the others, so the
 * difference of two hosts' end times for the same instance is the
 * difference of their clocks plus small noise.  Ranks on one host read one
 * CLOCK_REALTIME, so offsets are estimated per host: the median of the
 * differences, outliers beyond 5 MADs dropped, the inliers averaged.
 * Hosts are joined along the pairs with the most evidence (a maximum
 * spanning tree from the reference host) so jobs whose communicators do
 * not all include the reference host still get one clock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/rank_view.h"
#include "xr_internal.h"

#define PAIR_CAP 4096   /* samples kept per host pair: plenty for a median */
/* Ranks of one host name whose clocks sit this far apart do not share a
 * clock: the GPU ends of a collective agree to microseconds.  Host-side
 * ends (no NCCL kernel linked) are later by the time a waiting process
 * takes to be woken, and the last rank to arrive is not woken at all: on a
 * busy host that is hundreds of microseconds, always against the same
 * (late) rank, which must not read as its own clock. */
#define XR_HOST_SPLIT_NS 50000
#define XR_HOST_SPLIT_HOST_TIMED_NS 1000000

typedef struct pair_samples {
    int32_t a, h;           /* sample = offset(h) - offset(a) */
    int64_t *v;
    uint32_t n, stride;
    uint64_t seen;
    int64_t est;
    uint64_t weight;        /* inliers behind est */
} pair_samples;

/* Keep at most PAIR_CAP samples spread over the whole run: when full,
 * drop every other one and keep one in twice as many from then on. */
static int pair_add(pair_samples *p, int64_t x)
{
    if (p->seen++ % p->stride)
        return 0;
    if (!p->v) {
        p->v = malloc(PAIR_CAP * sizeof *p->v);
        if (!p->v)
            return -1;
    }
    if (p->n == PAIR_CAP) {
        for (uint32_t i = 0; i < PAIR_CAP / 2; i++)
            p->v[i] = p->v[2 * i];
        p->n = PAIR_CAP / 2;
        p->stride *= 2;
    }
    p->v[p->n++] = x;
    return 0;
}

static int cmp_host(const void *pa, const void *pb, void *arg)
{
    const tsa_job *job = arg;
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    const char *ha = job->ranks[a].host, *hb = job->ranks[b].host;
    if (ha && hb) {
        int c = strcmp(ha, hb);
        if (c)
            return c;
    } else if (ha || hb) {
        return ha ? -1 : 1;
    }
    return (a > b) - (a < b);
}

/* host_of / host_rep: equal host names share an index; a rank without a
 * host name is a host of its own.  Host 0 is rank index 0's. */
static int assign_hosts(xr_ctx *c)
{
    size_t n = c->n_ranks;
    int32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    c->host_of = malloc((n ? n : 1) * sizeof *c->host_of);
    c->host_rep = malloc((n ? n : 1) * sizeof *c->host_rep);
    if (!idx || !c->host_of || !c->host_rep) {
        free(idx);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = (int32_t)i;
    qsort_r(idx, n, sizeof *idx, cmp_host, c->job);
    int32_t h = -1;
    for (size_t i = 0; i < n; i++) {
        const char *name = c->job->ranks[idx[i]].host;
        const char *prev = i ? c->job->ranks[idx[i - 1]].host : NULL;
        if (i == 0 || !name || !prev || strcmp(name, prev)) {
            h++;
            c->host_rep[h] = idx[i];   /* lowest rank index of the group */
        }
        c->host_of[idx[i]] = h;
    }
    c->n_hosts = (size_t)(h + 1);
    free(idx);
    if (n) {   /* swap so that rank index 0's host is host 0 */
        int32_t h0 = c->host_of[0];
        for (size_t i = 0; i < n; i++) {
            if (c->host_of[i] == h0)
                c->host_of[i] = 0;
            else if (c->host_of[i] == 0)
                c->host_of[i] = h0;
        }
        int32_t t = c->host_rep[0];
        c->host_rep[0] = c->host_rep[h0];
        c->host_rep[h0] = t;
    }
    return 0;
}

/* Robust location of one pair's differences. */
static int pair_estimate(pair_samples *p)
{
    if (!p->n)
        return 0;
    int64_t *tmp = malloc(p->n * sizeof *tmp);
    if (!tmp)
        return -1;
    memcpy(tmp, p->v, p->n * sizeof *tmp);
    int64_t med = xr_median_i64(tmp, p->n);
    for (uint32_t i = 0; i < p->n; i++)
        tmp[i] = llabs(p->v[i] - med);
    double mad = (double)xr_median_i64(tmp, p->n);
    double lim = 5.0 * 1.4826 * mad;
    if (lim < 2000.0)
        lim = 2000.0;   /* clock reads are ns, collective ends jitter by us */
    double sum = 0;
    uint64_t k = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        double d = (double)(p->v[i] - med);
        if (fabs(d) <= lim) {
            sum += d;
            k++;
        }
    }
    p->est = med + (int64_t)llround(k ? sum / (double)k : 0.0);
    p->weight = k;
    free(tmp);
    return 0;
}

/* Differences of host mean end times, per instance, against the lowest
 * host present (the reference host when it took part). */
static int collect_pairs(xr_ctx *c, xr_idmap *map, pair_samples **pairs,
                         size_t *n_pairs, uint64_t *used)
{
    size_t cap = 0;
    double *sum = calloc(c->n_hosts, sizeof *sum);
    uint32_t *cnt = calloc(c->n_hosts, sizeof *cnt);
    int32_t *touched = malloc(c->n_hosts * sizeof *touched);
    xr_member *ms = xr_scratch_members(c);
    int rc = -1;
    if (!sum || !cnt || !touched || !ms)
        goto out;
    for (size_t k = 0; k < c->n_inst; k++) {
        const xr_instance *in = &c->inst[k];
        if (!in->symmetric)
            continue;
        xr_members(c, in, ms);
        size_t nt = 0;
        int64_t base = ms[0].end;
        int32_t anchor = INT32_MAX;
        for (uint32_t j = 0; j < in->n; j++) {
            const xr_member *m = &ms[j];
            int32_t h = c->host_of[m->rank];
            if (!cnt[h]++)
                touched[nt++] = h;
            sum[h] += (double)(m->end - base);
            if (h < anchor)
                anchor = h;
        }
        if (nt >= 2) {
            (*used)++;
            double ra = sum[anchor] / cnt[anchor];
            for (size_t t = 0; t < nt; t++) {
                int32_t h = touched[t];
                if (h == anchor)
                    continue;
                uint64_t key = (uint64_t)anchor * c->n_hosts + (uint64_t)h;
                int64_t pi = xr_idmap_get(map, key, 1);
                if (pi < 0)
                    goto out;
                if ((size_t)pi == *n_pairs) {
                    if (*n_pairs == cap) {
                        cap = cap ? cap * 2 : 64;
                        pair_samples *np = realloc(*pairs, cap * sizeof *np);
                        if (!np)
                            goto out;
                        *pairs = np;
                    }
                    pair_samples *p = &(*pairs)[(*n_pairs)++];
                    memset(p, 0, sizeof *p);
                    p->a = anchor;
                    p->h = h;
                    p->stride = 1;
                }
                double d = ra - sum[h] / cnt[h];
                if (pair_add(&(*pairs)[pi], (int64_t)llround(d)))
                    goto out;
            }
        }
        for (size_t t = 0; t < nt; t++) {
            sum[touched[t]] = 0;
            cnt[touched[t]] = 0;
        }
    }
    rc = 0;
out:
    free(sum);
    free(cnt);
    free(touched);
    free(ms);
    return rc;
}

/* Maximum spanning tree (by inlier count) grown from each unreached host
 * in host order, so host 0 roots the first component. */
static void spanning_offsets(xr_ctx *c, pair_samples *pairs, size_t n_pairs,
                             int64_t *host_off, int32_t *host_comp)
{
    for (size_t h = 0; h < c->n_hosts; h++)
        host_comp[h] = -1;
    int32_t comp = 0;
    for (size_t root = 0; root < c->n_hosts; root++) {
        if (host_comp[root] >= 0)
            continue;
        host_comp[root] = comp;
        host_off[root] = 0;
        for (;;) {
            pair_samples *best = NULL;
            for (size_t i = 0; i < n_pairs; i++) {
                pair_samples *p = &pairs[i];
                if (!p->weight)
                    continue;
                int ka = host_comp[p->a] == comp, kh = host_comp[p->h] == comp;
                if (ka == kh || (ka ? host_comp[p->h] : host_comp[p->a]) >= 0)
                    continue;
                if (!best || p->weight > best->weight)
                    best = p;
            }
            if (!best)
                break;
            int64_t from = host_comp[best->a] == comp ? host_off[best->a] : host_off[best->h];
            int64_t off = host_comp[best->a] == comp ? from + best->est : from - best->est;
            if (off > XR_OFFSET_MAX || off < -XR_OFFSET_MAX) {
                best->weight = 0;   /* decades of skew: corrupt, never use the pair */
                continue;
            }
            if (host_comp[best->a] == comp) {
                host_off[best->h] = off;
                host_comp[best->h] = comp;
            } else {
                host_off[best->a] = off;
                host_comp[best->a] = comp;
            }
        }
        comp++;
    }
}

/* A symmetric instance whose members (ms, decoded) all lie in one clock
 * component. */
static int symmetric_on_one_clock(const xr_ctx *c, const xr_instance *in, const xr_member *ms)
{
    if (!in->symmetric)
        return 0;
    for (uint32_t j = 1; j < in->n; j++)
        if (c->comp[ms[j].rank] != c->comp[ms[0].rank])
            return 0;
    return 1;
}

/* Deviations kept at once, at most (the ranks are taken in groups that fit):
 * a job of 10,000 ranks x 4,000 collectives has 41 million of them. */
#define XR_DEV_CHUNK ((size_t)1 << 24)

/* Per rank, the median (signed, or absolute) deviation of its aligned end
 * times from each symmetric instance's median aligned end, using the
 * offsets in c->offset; instances mixing clock components are skipped.
 * has[r] = 0 for a rank without such instances. */
static int rank_deviation(xr_ctx *c, int absolute, int64_t *med_out, uint8_t *has)
{
    size_t *cnt = calloc(c->n_ranks + 1, sizeof *cnt);
    size_t *pos = calloc(c->n_ranks + 1, sizeof *pos);
    int64_t *inst_med = malloc((c->n_inst + 1) * sizeof *inst_med);
    uint8_t *on_one = calloc(c->n_inst + 1, 1);
    xr_member *ms = xr_scratch_members(c);
    int64_t *scratch = malloc(xr_largest_instance(c) * sizeof *scratch);
    int64_t *dev = NULL;
    size_t total = 0;
    int rc = -1;
    if (!cnt || !pos || !inst_med || !on_one || !ms || !scratch)
        goto out;
    /* each instance's median aligned end, and each rank's count */
    for (size_t k = 0; k < c->n_inst; k++) {
        const xr_instance *in = &c->inst[k];
        if (!in->symmetric)
            continue;
        xr_members(c, in, ms);
        if (!symmetric_on_one_clock(c, in, ms))
            continue;
        on_one[k] = 1;
        for (uint32_t j = 0; j < in->n; j++) {
            cnt[ms[j].rank]++;
            scratch[j] = ms[j].end + c->offset[ms[j].rank];
        }
        inst_med[k] = xr_median_i64(scratch, in->n);
        total += in->n;
    }
    memset(has, 0, c->n_ranks);
    if (!total) {
        rc = 0;
        goto out;
    }
    dev = malloc((total < XR_DEV_CHUNK ? total : XR_DEV_CHUNK) * sizeof *dev);
    if (!dev)
        goto out;
    /* ranks [r0, r1) at a time, their deviations side by side */
    for (size_t r0 = 0, r1; r0 < c->n_ranks; r0 = r1) {
        size_t fill = 0;
        for (r1 = r0; r1 < c->n_ranks && (r1 == r0 || fill + cnt[r1] <= XR_DEV_CHUNK); r1++) {
            pos[r1] = fill;
            fill += cnt[r1];
        }
        if (fill > XR_DEV_CHUNK) {  /* one rank with more than a chunk */
            int64_t *grown = realloc(dev, fill * sizeof *dev);
            if (!grown)
                goto out;
            dev = grown;
        }
        for (size_t k = 0; fill && k < c->n_inst; k++) {
            const xr_instance *in = &c->inst[k];
            if (!on_one[k])
                continue;
            xr_members(c, in, ms);
            for (uint32_t j = 0; j < in->n; j++) {
                size_t r = (size_t)ms[j].rank;
                if (r < r0 || r >= r1)
                    continue;
                int64_t d = ms[j].end + c->offset[r] - inst_med[k];
                dev[pos[r]++] = absolute ? llabs(d) : d;
            }
        }
        for (size_t r = r0, at = 0; r < r1; at += cnt[r], r++)
            if (cnt[r]) {
                med_out[r] = xr_median_i64(dev + at, cnt[r]);
                has[r] = 1;
            }
    }
    rc = 0;
out:
    free(cnt);
    free(pos);
    free(inst_med);
    free(on_one);
    free(ms);
    free(scratch);
    free(dev);
    return rc;
}

/* Offsets per host from scratch: pairs, robust estimates, spanning tree;
 * fills c->offset and c->comp. */
static int estimate_offsets(xr_ctx *c, uint64_t *used)
{
    xr_idmap map = {0};
    pair_samples *pairs = NULL;
    size_t n_pairs = 0;
    int64_t *host_off = calloc(c->n_hosts + 1, sizeof *host_off);
    int32_t *host_comp = calloc(c->n_hosts + 1, sizeof *host_comp);
    int rc = -1;
    *used = 0;
    if (!host_off || !host_comp)
        goto out;
    if (collect_pairs(c, &map, &pairs, &n_pairs, used))
        goto out;
    for (size_t i = 0; i < n_pairs; i++) {
        if (pair_estimate(&pairs[i]))
            goto out;
        if (pairs[i].est > XR_OFFSET_MAX || pairs[i].est < -XR_OFFSET_MAX)
            pairs[i].weight = 0;
    }
    spanning_offsets(c, pairs, n_pairs, host_off, host_comp);
    for (size_t r = 0; r < c->n_ranks; r++) {
        c->offset[r] = host_off[c->host_of[r]];
        c->comp[r] = host_comp[c->host_of[r]];
    }
    rc = 0;
out:
    for (size_t i = 0; i < n_pairs; i++)
        free(pairs[i].v);
    free(pairs);
    free(host_off);
    free(host_comp);
    xr_idmap_free(&map);
    return rc;
}

/* The rank's collectives end on the GPU (NCCL kernels linked to them). */
static int gpu_timed(const tsa_rank *r)
{
    tsa_call_iter it;
    if (tsa_call_iter_open(&it, r))
        return -1;
    int yes = 0;
    for (const tsa_nccl_op *o; !yes && (o = tsa_call_iter_next(&it));)
        yes = o->kernel >= 0;
    tsa_call_iter_close(&it);
    return yes;
}

/* Ranks that share a host name but not a clock (containers all called
 * "localhost", a reused hostname): after a per-host alignment, ranks of one
 * host then sit systematically apart. */
static int host_names_lie(xr_ctx *c, int64_t *dev, uint8_t *has)
{
    if (rank_deviation(c, 0, dev, has))
        return -1;
    int64_t *lo = malloc(c->n_hosts * sizeof *lo), *hi = malloc(c->n_hosts * sizeof *hi);
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return -1;
    }
    uint8_t *host_timed = calloc(c->n_hosts + 1, 1);
    if (!host_timed) {
        free(lo);
        free(hi);
        return -1;
    }
    for (size_t h = 0; h < c->n_hosts; h++) {
        lo[h] = INT64_MAX;
        hi[h] = INT64_MIN;
    }
    int lie = 0;
    for (size_t r = 0; r < c->n_ranks && !lie; r++) {
        int g = gpu_timed(&c->job->ranks[r]);
        lie = g < 0 ? -1 : 0;   /* out of memory */
        host_timed[c->host_of[r]] |= !g;
    }
    for (size_t r = 0; r < c->n_ranks && !lie; r++) {
        if (!has[r])
            continue;
        int32_t h = c->host_of[r];
        if (dev[r] < lo[h])
            lo[h] = dev[r];
        if (dev[r] > hi[h])
            hi[h] = dev[r];
        int64_t limit = host_timed[h] ? XR_HOST_SPLIT_HOST_TIMED_NS : XR_HOST_SPLIT_NS;
        if (hi[h] > lo[h] && hi[h] - lo[h] > limit)
            lie = 1;
    }
    free(host_timed);
    free(lo);
    free(hi);
    return lie;
}

int xr_clock_align(xr_ctx *c, tsa_xrank_result *out)
{
    uint64_t used = 0;
    int64_t *dev = NULL;
    uint8_t *has = NULL;
    int rc = -1;

    if (assign_hosts(c))
        goto out;
    c->offset = calloc(c->n_ranks + 1, sizeof *c->offset);
    c->comp = calloc(c->n_ranks + 1, sizeof *c->comp);
    dev = calloc(c->n_ranks + 1, sizeof *dev);
    has = calloc(c->n_ranks + 1, 1);
    if (!c->offset || !c->comp || !dev || !has)
        goto out;
    if (estimate_offsets(c, &used))
        goto out;
    if (c->n_hosts < c->n_ranks) {
        int lie = host_names_lie(c, dev, has);
        if (lie < 0)
            goto out;
        if (lie) {   /* every rank its own clock, rank index 0 the reference */
            for (size_t r = 0; r < c->n_ranks; r++)
                c->host_of[r] = c->host_rep[r] = (int32_t)r;
            c->n_hosts = c->n_ranks;
            out->clock_hosts_split = 1;
            if (estimate_offsets(c, &used))
                goto out;
        }
    }
    for (size_t r = 0; r < c->n_ranks; r++)
        c->job->ranks[r].clock_offset_ns = c->offset[r];
    c->ref_comp = c->n_ranks ? c->comp[0] : 0;
    out->clock_reference_rank = c->n_ranks ? c->job->ranks[0].rank : -1;
    out->clock_samples = used;
    for (size_t r = 0; r < c->n_ranks; r++)
        if (c->comp[r] != c->ref_comp)
            out->n_unaligned++;

    /* residual: the worst rank's median distance from the instances'
     * median end */
    if (rank_deviation(c, 1, dev, has))
        goto out;
    out->clock_residual_ns = 0;
    for (size_t r = 0; c->n_hosts > 1 && r < c->n_ranks; r++)
        if (has[r] && dev[r] > out->clock_residual_ns)
            out->clock_residual_ns = dev[r];
    /* One clock (one host, not split): no skew, whatever the ends' spread. */

    /* members onto the common clock (xr_members adds the offsets from
     * now on); an instance mixing clock components cannot be compared */
    xr_member *ms = xr_scratch_members(c);
    if (!ms)
        goto out;
    for (size_t k = 0; k < c->n_inst; k++) {
        xr_instance *in = &c->inst[k];
        int same = 1;
        xr_members(c, in, ms);
        int32_t comp0 = c->comp[ms[0].rank];
        for (uint32_t j = 0; j < in->n; j++)
            if (c->comp[ms[j].rank] != comp0)
                same = 0;
        in->usable = in->complete && same;
    }
    free(ms);
    c->aligned = 1;
    rc = 0;
out:
    free(dev);
    free(has);
    return rc;
}
