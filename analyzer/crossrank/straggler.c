/* Straggler, imbalance, slow host or noise.
 *
 * Two independent tests must agree before a rank is called slow:
 *  - persistence: in each step the rank that waited least arrived last;
 *    under noise every rank is last with probability 1/n, so its count of
 *    last steps is compared with that Poisson-binomial expectation as a
 *    z-score;
 *  - materiality: its median (over steps) work relative to the step's
 *    median rank is at least min_slowdown, and beyond what the run's own
 *    noise (robust sigma of all relative work figures) could produce over
 *    its number of steps.
 * One slow rank that is also persistently last is a straggler; several
 * slow ranks are a load imbalance, unless they are exactly the ranks of one
 * host, which is then the slow host.  A rank that is not slow overall but
 * far beyond the noise in at least three steps, more often than the other
 * ranks are, is an intermittent straggler. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xr_internal.h"

#define BURST_MIN_STEPS 3
#define BURST_SIGMAS 5.0
#define MAX_BURSTS 16

static void per_rank_stats(xr_ctx *c, tsa_xrank_result *out, double *scratch)
{
    size_t S = c->n_steps;
    for (size_t r = 0; r < c->n_ranks; r++) {
        tsa_rank_blame *b = &out->ranks[r];
        size_t n = 0;
        for (size_t s = 0; s < S; s++) {
            double x = c->rel[r * S + s];
            if (!isnan(x))
                scratch[n++] = x;
        }
        b->steps = n;
        b->slowdown = n ? xr_median_d(scratch, n) : 0;
        n = 0;
        for (size_t s = 0; s < S; s++)
            if (c->work[r * S + s] >= 0)
                scratch[n++] = (double)c->work[r * S + s];
        b->compute_median_ns = n ? (int64_t)llround(xr_median_d(scratch, n)) : 0;
    }
    size_t n = 0;
    for (size_t r = 0; r < c->n_ranks; r++)
        if (out->ranks[r].steps)
            scratch[n++] = (double)out->ranks[r].compute_median_ns;
    double med = n ? xr_median_d(scratch, n) : 0;
    for (size_t r = 0; r < c->n_ranks; r++)
        out->ranks[r].compute_rel_median =
            (med > 0 && out->ranks[r].steps) ? out->ranks[r].compute_median_ns / med : 0;
}

/* Robust sigma of every relative work figure. */
static double noise_sigma(const xr_ctx *c, double *all)
{
    size_t n = 0, cells = c->n_steps * c->n_ranks;
    for (size_t i = 0; i < cells; i++)
        if (!isnan(c->rel[i]))
            all[n++] = c->rel[i];
    if (n < 2)
        return 0;
    double med = xr_median_d(all, n);
    for (size_t i = 0; i < n; i++)
        all[i] = fabs(all[i] - med);
    return 1.4826 * xr_median_d(all, n);
}

/* Steps in which each rank waited least: the step's last arriver. */
static void persistence(xr_ctx *c, tsa_xrank_result *out, double *expect, double *var)
{
    size_t S = c->n_steps;
    memset(expect, 0, c->n_ranks * sizeof *expect);
    memset(var, 0, c->n_ranks * sizeof *var);
    for (size_t s = 0; s < S; s++) {
        size_t nv = 0;
        int64_t best = INT64_MAX;
        int32_t who = -1;
        int tie = 0;
        for (size_t r = 0; r < c->n_ranks; r++) {
            if (c->work[r * S + s] < 0)
                continue;
            nv++;
            int64_t w = c->wait[r * S + s];
            if (w < best) {
                best = w;
                who = (int32_t)r;
                tie = 0;
            } else if (w == best) {
                tie = 1;
            }
        }
        if (nv < 2)
            continue;
        out->steps++;
        double p = 1.0 / (double)nv;
        for (size_t r = 0; r < c->n_ranks; r++) {
            if (c->work[r * S + s] < 0)
                continue;
            expect[r] += p;
            var[r] += p * (1 - p);
        }
        if (!tie)
            out->ranks[who].steps_last++;
    }
    for (size_t r = 0; r < c->n_ranks; r++) {
        tsa_rank_blame *b = &out->ranks[r];
        b->z = var[r] > 0 ? ((double)b->steps_last - expect[r]) / sqrt(var[r]) : 0;
    }
}

static int is_slow(const tsa_rank_blame *b, double sigma, const tsa_xrank_options *opt)
{
    if (b->steps < BURST_MIN_STEPS || b->slowdown < opt->min_slowdown)
        return 0;
    /* the median of n noisy figures has a standard error of ~1.25 sigma/sqrt(n) */
    double se = 1.2533 * sigma / sqrt((double)b->steps);
    return b->slowdown >= opt->z_threshold * se;
}

/* Steps where rank r was far beyond the noise; returns the count, fills
 * steps (when not NULL). */
static size_t burst_steps(const xr_ctx *c, size_t r, double thr, uint32_t *steps)
{
    size_t n = 0, S = c->n_steps;
    for (size_t s = 0; s < S; s++) {
        double x = c->rel[r * S + s];
        if (!isnan(x) && x >= thr) {
            if (steps)
                steps[n] = (uint32_t)s;
            n++;
        }
    }
    return n;
}

static int by_saving(const void *pa, const void *pb)
{
    const tsa_xrank_burst *a = pa, *b = pb;
    if (a->whatif_saved_ns != b->whatif_saved_ns)
        return a->whatif_saved_ns < b->whatif_saved_ns ? 1 : -1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int find_bursts(xr_ctx *c, tsa_xrank_result *out, uint8_t *mask)
{
    const tsa_xrank_options *opt = c->opt;
    double thr = BURST_SIGMAS * out->noise;
    if (thr < opt->min_slowdown)
        thr = opt->min_slowdown;
    size_t flagged = 0, cells = 0;
    for (size_t r = 0; r < c->n_ranks; r++) {
        if (out->ranks[r].slow)
            continue;
        flagged += burst_steps(c, r, thr, NULL);
        cells += out->ranks[r].steps;
    }
    if (!cells)
        return 0;
    double q = (double)(flagged + 1) / (double)(cells + 1);
    for (size_t r = 0; r < c->n_ranks; r++) {
        const tsa_rank_blame *b = &out->ranks[r];
        if (b->slow || !b->steps)
            continue;
        size_t f = burst_steps(c, r, thr, NULL);
        if (f < BURST_MIN_STEPS)
            continue;
        double nq = (double)b->steps * q;
        double z = (f - nq) / sqrt(nq * (1 - q));
        if (z < opt->z_threshold)
            continue;
        if (out->n_bursts == MAX_BURSTS)
            break;
        if (!out->bursts && !(out->bursts = calloc(MAX_BURSTS, sizeof *out->bursts)))
            return -1;
        tsa_xrank_burst *bu = &out->bursts[out->n_bursts];
        bu->slow_steps = malloc(f * sizeof *bu->slow_steps);
        if (!bu->slow_steps)
            return -1;
        out->n_bursts++;
        bu->n_slow_steps = burst_steps(c, r, thr, bu->slow_steps);
        bu->rank = (int32_t)r;   /* rank index; crossrank.c maps it */
        bu->host = b->host;
        bu->z = z;
        /* what the bursts cost: the what-if's saving in those steps only */
        int64_t *per_step = calloc(c->n_steps, sizeof *per_step);
        if (!per_step)
            return -1;
        memset(mask, 0, c->n_ranks);
        mask[r] = 1;
        xr_whatif(c, mask, per_step);
        bu->whatif_saved_ns = 0;
        for (size_t i = 0; i < bu->n_slow_steps; i++)
            bu->whatif_saved_ns += per_step[bu->slow_steps[i]];
        free(per_step);
    }
    if (out->n_bursts > 1)
        qsort(out->bursts, out->n_bursts, sizeof *out->bursts, by_saving);
    return 0;
}

int xr_classify(xr_ctx *c, tsa_xrank_result *out)
{
    const tsa_xrank_options *opt = c->opt;
    size_t cells = c->n_steps * c->n_ranks;
    size_t nscratch = cells > c->n_ranks ? cells : c->n_ranks;
    double *scratch = malloc((nscratch ? nscratch : 1) * sizeof *scratch);
    double *expect = malloc((c->n_ranks ? c->n_ranks : 1) * sizeof *expect);
    double *var = malloc((c->n_ranks ? c->n_ranks : 1) * sizeof *var);
    uint8_t *mask = calloc(c->n_ranks ? c->n_ranks : 1, 1);
    int rc = -1;
    if (!scratch || !expect || !var || !mask)
        goto out;
    if (!c->n_steps) {
        rc = 0;
        goto out;
    }
    per_rank_stats(c, out, scratch);
    out->noise = noise_sigma(c, scratch);
    persistence(c, out, expect, var);

    size_t n_slow = 0;
    int32_t one = -1;
    for (size_t r = 0; r < c->n_ranks; r++) {
        out->ranks[r].slow = is_slow(&out->ranks[r], out->noise, opt);
        if (out->ranks[r].slow) {
            n_slow++;
            one = (int32_t)r;
        }
    }

    if (n_slow == 1 && out->ranks[one].z >= opt->z_threshold) {
        tsa_rank_blame *b = &out->ranks[one];
        tsa_straggler *st = calloc(1, sizeof *st);
        if (!st)
            goto out;
        out->straggler = st;
        st->rank = (int32_t)one;   /* rank index; crossrank.c maps it */
        st->host = b->host;
        st->z = b->z;
        st->slowdown = b->slowdown;
        st->wall_lost_ns = b->wall_lost_ns;
        mask[one] = 1;
        st->whatif_saved_ns = xr_whatif(c, mask, NULL);
        st->whatif_step_saved_ns = out->steps ? st->whatif_saved_ns / (int64_t)out->steps : 0;
    } else if (n_slow >= 2) {
        /* exactly the ranks of one host, with other hosts to compare to? */
        int32_t h = -1;
        int one_host = c->n_hosts >= 2;
        for (size_t r = 0; r < c->n_ranks && one_host; r++) {
            if (!out->ranks[r].slow)
                continue;
            if (h < 0)
                h = c->host_of[r];
            else if (c->host_of[r] != h)
                one_host = 0;
        }
        for (size_t r = 0; r < c->n_ranks && one_host; r++)
            if (c->host_of[r] == h && !out->ranks[r].slow)
                one_host = 0;
        size_t k = 0;
        int32_t *list = malloc(n_slow * sizeof *list);
        if (!list)
            goto out;
        for (size_t r = 0; r < c->n_ranks; r++) {
            mask[r] = (uint8_t)out->ranks[r].slow;
            if (mask[r]) {
                list[k] = (int32_t)r;
                scratch[k++] = out->ranks[r].slowdown;
            }
        }
        double sd = xr_median_d(scratch, k);
        int64_t saved = xr_whatif(c, mask, NULL);
        if (one_host) {
            out->slow_host = c->job->ranks[c->host_rep[h]].host;
            out->slow_host_ranks = list;
            out->n_slow_host_ranks = k;
            out->slow_host_slowdown = sd;
            out->slow_host_saved_ns = saved;
        } else {
            out->imbalance = 1;
            out->imbalanced_ranks = list;
            out->n_imbalanced = k;
            out->imbalance_slowdown = sd;
            out->imbalance_saved_ns = saved;
        }
    }
    if (find_bursts(c, out, mask))
        goto out;
    rc = 0;
out:
    free(scratch);
    free(expect);
    free(var);
    free(mask);
    return rc;
}
