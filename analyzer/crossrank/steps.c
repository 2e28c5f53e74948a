/* Steps.  The persistence test counts steps, not collectives: the bucket
 * all-reduces of one step share the same slow rank, so counting each would
 * overstate the evidence.  Steps come from the step pass when it ran;
 * otherwise from the repeating sequence of collectives (the smallest
 * period under which 90% of the (communicator, op, bytes) signatures
 * repeat, cut before the collective that follows the longest work gap,
 * i.e. optimizer + data + forward); failing that each collective is a step.
 * Per rank and step the pass then sums its work (time outside
 * collectives) and its wait, and relates the work to the step's median
 * rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xr_internal.h"

#define XR_MAX_CELLS (4u << 20)   /* rank x step cells kept (memory bound) */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Median of the sorted v[0..n) once one copy of x is taken out: each rank
 * is compared with the others, which for two ranks means with the other
 * one (a median that included it would halve its slowdown). */
static double median_without(const double *v, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {   /* first index with v >= x */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t skip = lo < n ? lo : n - 1, m = n - 1;
#define AT(j) v[(j) < skip ? (j) : (j) + 1]
    double med = m % 2 ? AT(m / 2) : 0.5 * (AT(m / 2 - 1) + AT(m / 2));
#undef AT
    return med;
}

static int model_has_steps(const tsa_job *job, size_t n_ranks)
{
    int any = 0;
    for (size_t r = 0; r < n_ranks; r++) {
        if (job->ranks[r].n_steps)
            any = 1;
        else if (job->ranks[r].n_nccl)
            return 0;   /* a rank with calls but no steps: do not mix */
    }
    return any;
}

static int by_time(const void *pa, const void *pb, void *arg)
{
    const int64_t *t = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (t[a] != t[b])
        return t[a] < t[b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* Smallest period P (at least 3 repeats) under which 90% of the signature
 * sequence repeats; 0 when none.  Only the first PERIOD_WINDOW collectives
 * are looked at, which bounds the cost on aperiodic million-call runs. */
#define PERIOD_WINDOW 20000

static size_t find_period(const uint64_t *sig, size_t n)
{
    if (n > PERIOD_WINDOW)
        n = PERIOD_WINDOW;
    size_t max_p = n / 3;
    if (max_p > 4096)
        max_p = 4096;
    for (size_t p = 1; p <= max_p; p++) {
        size_t cmp = n - p, allowed = cmp / 10, bad = 0, i;
        for (i = 0; i < cmp && bad <= allowed; i++)
            bad += sig[i] != sig[i + p];
        if (bad <= allowed)
            return p;
    }
    return 0;
}

static int derive_steps(xr_ctx *c, tsa_xrank_result *out)
{
    size_t n = c->n_inst;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int64_t *t = malloc((n ? n : 1) * sizeof *t);
    uint64_t *sig = malloc((n ? n : 1) * sizeof *sig);
    xr_member *ms = xr_scratch_members(c);
    if (!order || !t || !sig || !ms) {
        free(order);
        free(t);
        free(sig);
        free(ms);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        const xr_instance *in = &c->inst[k];
        xr_members(c, in, ms);
        int64_t mx = ms[0].arrive;
        for (uint32_t j = 1; j < in->n; j++)
            if (ms[j].arrive > mx)
                mx = ms[j].arrive;
        t[k] = mx;
        order[k] = k;
    }
    free(ms);
    qsort_r(order, n, sizeof *order, by_time, t);
    for (size_t i = 0; i < n; i++)
        sig[i] = c->inst[order[i]].sig;
    size_t p = find_period(sig, n);
    size_t phase = 0;
    if (p > 1) {
        double best = -1;
        for (size_t f = 0; f < p; f++) {
            double s = 0;
            for (size_t i = f; i < n; i += p) {
                int64_t g = c->inst[order[i]].gap_median;
                s += g == XR_GAP_UNKNOWN ? 0.0 : (double)g;
            }
            if (s > best) {
                best = s;
                phase = f;
            }
        }
    }
    out->step_source = p ? TSA_XSTEPS_DERIVED : TSA_XSTEPS_PER_COLLECTIVE;
    if (!p)
        p = 1;
    for (size_t i = 0; i < n; i++) {
        size_t s = i < phase ? 0 : (i - phase) / p + (phase > 0);
        c->inst[order[i]].step = (int32_t)s;
    }
    free(order);
    free(t);
    free(sig);
    return 0;
}

int xr_steps(xr_ctx *c, tsa_xrank_result *out)
{
    if (!c->n_inst) {
        out->step_source = TSA_XSTEPS_NONE;
        return 0;
    }
    int use_model = model_has_steps(c->job, c->n_ranks);
    if (use_model) {
        out->step_source = TSA_XSTEPS_MODEL;
        int32_t seen = -1;
        size_t distinct = 0;
        for (size_t k = 0; k < c->n_inst; k++) {
            xr_instance *in = &c->inst[k];
            in->step = in->model_step;  /* found at matching (match.c) */
            if (in->step >= 0 && in->step != seen) {
                seen = in->step;
                distinct++;
            }
        }
        /* steps that hold (almost) no collectives, e.g. NVTX ranges with no
         * call ranges filled in: find the structure ourselves */
        if (distinct < 3)
            use_model = 0;
    }
    if (!use_model && derive_steps(c, out))
        return -1;

    int32_t max_step = -1;
    for (size_t k = 0; k < c->n_inst; k++)
        if (c->inst[k].step > max_step)
            max_step = c->inst[k].step;
    size_t n_steps = (size_t)(max_step + 1);
    /* very long runs analyzed per collective: merge neighbours to stay
     * within the memory bound */
    size_t group = 1;
    if (c->n_ranks && n_steps > XR_MAX_CELLS / c->n_ranks) {
        size_t fit = XR_MAX_CELLS / c->n_ranks;
        group = (n_steps + (fit ? fit : 1) - 1) / (fit ? fit : 1);
        for (size_t k = 0; k < c->n_inst; k++)
            if (c->inst[k].step >= 0)
                c->inst[k].step = (int32_t)((size_t)c->inst[k].step / group);
        n_steps = (n_steps + group - 1) / group;
    }
    c->n_steps = n_steps;
    if (!n_steps || !c->n_ranks)
        return 0;

    size_t cells = n_steps * c->n_ranks;
    uint8_t *dirty = calloc(n_steps, 1);
    uint8_t *bad = calloc(cells, 1);
    uint32_t *cnt = calloc(cells, sizeof *cnt);
    double *tmp = malloc(c->n_ranks * sizeof *tmp);
    xr_member *ms = xr_scratch_members(c);
    c->work = calloc(cells, sizeof *c->work);
    c->wait = calloc(cells, sizeof *c->wait);
    c->rel = malloc(cells * sizeof *c->rel);
    int rc = -1;
    if (!dirty || !bad || !cnt || !tmp || !ms || !c->work || !c->wait || !c->rel)
        goto out;

    for (size_t k = 0; k < c->n_inst; k++) {
        const xr_instance *in = &c->inst[k];
        if (in->step < 0)
            continue;
        size_t s = (size_t)in->step;
        if (!in->usable) {
            dirty[s] = 1;   /* a rank missed it: the step's figures are partial */
            continue;
        }
        xr_members(c, in, ms);
        for (uint32_t j = 0; j < in->n; j++) {
            const xr_member *m = &ms[j];
            size_t cell = (size_t)m->rank * n_steps + s;
            cnt[cell]++;
            c->wait[cell] += in->latest - m->arrive;
            if (m->gap == XR_GAP_UNKNOWN)
                bad[cell] = 1;
            else
                c->work[cell] += m->gap;
        }
    }
    for (size_t cell = 0; cell < cells; cell++)
        if (!cnt[cell] || bad[cell] || dirty[cell % n_steps])
            c->work[cell] = -1;

    for (size_t s = 0; s < n_steps; s++) {
        size_t nv = 0;
        for (size_t r = 0; r < c->n_ranks; r++) {
            int64_t w = c->work[r * n_steps + s];
            if (w >= 0)
                tmp[nv++] = (double)w;
        }
        if (nv >= 2)
            qsort(tmp, nv, sizeof *tmp, cmp_double);
        for (size_t r = 0; r < c->n_ranks; r++) {
            int64_t w = c->work[r * n_steps + s];
            double med = (w >= 0 && nv >= 2) ? median_without(tmp, nv, (double)w) : 0;
            /* below a microsecond of work there is nothing to compare */
            c->rel[r * n_steps + s] = med >= 1000.0 ? (double)w / med - 1.0 : NAN;
        }
    }
    rc = 0;
out:
    free(dirty);
    free(bad);
    free(cnt);
    free(tmp);
    free(ms);
    return rc;
}
