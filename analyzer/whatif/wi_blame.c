/* Replays, savings and the class of the problem.
 *
 * Per step: the record replayed as is (its length is the step's actual
 * time), with every operation at its ideal (the ideal time: every slow
 * operation fixed; actual - ideal is the recoverable time R the fixes are
 * measured against), at its typical duration (the typical time: the job as
 * its peers run it, S's denominator; it keeps no luck that made an
 * operation faster than usual, which the ideal keeps), and with one
 * group at a time fixed: a worker, a stage, a DP rank, a kind of
 * operation.  A group that has no operation with a gap to its ideal on the
 * step's critical path cannot shorten the step (that path keeps its length
 * and nothing gets longer), so only the groups met on the path are
 * replayed.  Savings add up over steps; fixes of different groups overlap
 * and are never added to each other. */
#include <stdlib.h>
#include <string.h>

#include "wi_internal.h"

#define WI_MATERIAL 0.05     /* recoverable share of step time before naming a culprit */
/* ... and before calling it a spread: run-to-run noise alone (sleep and
 * wake-up jitter on a busy machine) replays to 5-7% on the test bed, and
 * a spread names no one to act on below this. */
#define WI_MATERIAL_SPREAD 0.10
/* Share of the slowdown one fix must give back to be named: a single
 * worker that stands out (4x the next one) at 60%; a stage or DP rank, a
 * fix of many workers at once, at 75% (below, the slowdown is spread and
 * the best stage is only the worst part of it). */
#define WI_EXPLAINS_WORKER 0.60
#define WI_EXPLAINS_GROUP 0.75
#define WI_PATH_CAP 65536
/* A group whose operations together exceed their ideals by less than
 * this share of the step's recoverable time cannot save more than that
 * (a fix shortens any path by at most the group's excess on it): it is not
 * replayed and counts as saving nothing. */
#define WI_MIN_EXCESS 0.02

typedef struct cand {
    wi_fix_by by;
    int32_t value;
} cand;

static int seen_cand(const cand *c, size_t n, wi_fix_by by, int32_t value)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].by == by && c[i].value == value)
            return 1;
    return 0;
}

/* Each group's excess over its ideal in step s (upper bound of its saving). */
static void excess(const wi_graph *g, size_t s, const tsa_pipe_result *r, int64_t *w, int64_t *st,
                   int64_t *dp, int64_t *kind)
{
    memset(w, 0, r->n_ranks * sizeof *w);
    memset(st, 0, r->n_stages * sizeof *st);
    memset(dp, 0, r->n_dp * sizeof *dp);
    memset(kind, 0, TSA_OK_COUNT * sizeof *kind);
    for (size_t i = g->step_node[s]; i < g->step_node[s + 1]; i++) {
        const wi_node *v = &g->nodes[i];
        int64_t x = v->dur - v->ideal;
        if (x <= 0)
            continue;
        w[v->rank] += x;
        st[r->stage_of[v->rank]] += x;
        dp[r->dp_of[v->rank]] += x;
        kind[v->okind] += x;
    }
}

static int64_t *slot(tsa_pipe_result *r, wi_fix_by by, int32_t value)
{
    switch (by) {
    case WI_FIX_WORKER: return &r->saved_worker_ns[value];
    case WI_FIX_STAGE: return &r->saved_stage_ns[value];
    case WI_FIX_DP: return &r->saved_dp_ns[value];
    default: return &r->saved_kind_ns[value];
    }
}

/* Appends a step's critical path after the `have` hops stored so far. */
static int add_hops(tsa_pipe_result *r, const wi_graph *g, const uint32_t *path,
                    const uint8_t *via, size_t n, size_t have, size_t *cap)
{
    if (have + n > *cap) {
        size_t c = *cap ? *cap : 1024;
        while (c < have + n)
            c *= 2;
        tsa_pipe_hop *p = realloc(r->hops, c * sizeof *p);
        if (!p)
            return -1;
        r->hops = p;
        *cap = c;
    }
    for (size_t i = 0; i < n; i++) {
        const wi_node *v = &g->nodes[path[i]];
        tsa_pipe_hop *h = &r->hops[have + i];
        h->rank = r->global_rank[v->rank];
        h->lane = v->lane;
        h->kind = v->kind;
        h->okind = v->okind;
        h->via_start = via[i];
        h->start_ns = v->rec_start;
        h->end_ns = v->rec_end;
    }
    return 0;
}

int wi_blame(wi_build *b, tsa_pipe_result *r)
{
    wi_graph *g = &b->g;
    size_t S = g->n_steps;
    wi_times t = {0};
    uint32_t *path = malloc(WI_PATH_CAP * sizeof *path);
    uint8_t *via = malloc(WI_PATH_CAP);
    cand *cands = malloc(4 * (size_t)WI_PATH_CAP * sizeof *cands);
    size_t hop_cap = 0;
    int rc = -1;
    r->step_actual_ns = calloc(S + 1, sizeof *r->step_actual_ns);
    r->step_ideal_ns = calloc(S + 1, sizeof *r->step_ideal_ns);
    r->step_typical_ns = calloc(S + 1, sizeof *r->step_typical_ns);
    r->hop_first = calloc(S + 1, sizeof *r->hop_first);
    int64_t *xw = malloc((r->n_ranks + 1) * sizeof *xw);
    int64_t *xs = malloc((r->n_stages + 1) * sizeof *xs);
    int64_t *xd = malloc((r->n_dp + 1) * sizeof *xd);
    int64_t xk[TSA_OK_COUNT];
    if (!xw || !xs || !xd)
        goto out;
    if (!path || !via || !cands || wi_times_alloc(&t, g) || !r->step_actual_ns ||
        !r->step_ideal_ns || !r->step_typical_ns || !r->hop_first)
        goto out;
    wi_fix all = {.by = WI_FIX_ALL}, none = {.by = WI_FIX_NONE}, typ = {.by = WI_FIX_TYPICAL};
    wi_fix record = {.by = WI_FIX_NONE, .raw_gaps = 1};
    int64_t slowest = -1;
    for (size_t s = 0; s < S; s++) {
        /* the record replayed: the check, and the critical path shown */
        int64_t replayed = wi_replay_step(g, s, &record, &t);
        int64_t rec = wi_step_recorded(g, s);
        int64_t err = replayed > rec ? replayed - rec : rec - replayed;
        if (err > r->replay_error_ns)
            r->replay_error_ns = err;
        size_t len = wi_critical_path(g, s, &t, path, via, WI_PATH_CAP);
        if (len > WI_PATH_CAP)
            len = WI_PATH_CAP;
        if (add_hops(r, g, path, via, len, r->hop_first[s], &hop_cap))
            goto out;
        r->hop_first[s + 1] = r->hop_first[s] + len;
        if (rec > slowest) {
            slowest = rec;
            r->slowest_step = s;
        }
        r->recorded_ns += rec;
        /* the baseline of every fix: gaps at their peers' */
        int64_t actual = wi_replay_step(g, s, &none, &t);
        len = wi_critical_path(g, s, &t, path, via, WI_PATH_CAP);
        if (len > WI_PATH_CAP)
            len = WI_PATH_CAP;
        int64_t ideal = wi_replay_step(g, s, &all, &t);
        int64_t typical = wi_replay_step(g, s, &typ, &t);
        /* the groups met on the path where a fix could change something */
        excess(g, s, r, xw, xs, xd, xk);
        int64_t floor = (int64_t)(WI_MIN_EXCESS * (double)(actual - ideal));
        size_t nc = 0;
        for (size_t i = 0; i < len; i++) {
            const wi_node *v = &g->nodes[path[i]];
            if (v->ideal >= v->dur)
                continue;
            cand opts[4] = {{WI_FIX_WORKER, v->rank}, {WI_FIX_STAGE, r->stage_of[v->rank]},
                            {WI_FIX_DP, r->dp_of[v->rank]}, {WI_FIX_KIND, v->okind}};
            int64_t ub[4] = {xw[v->rank], xs[r->stage_of[v->rank]], xd[r->dp_of[v->rank]],
                             xk[v->okind]};
            for (int k = 0; k < 4; k++)
                if (ub[k] > floor && !seen_cand(cands, nc, opts[k].by, opts[k].value))
                    cands[nc++] = opts[k];
        }
        for (size_t i = g->step_node[s]; i < g->step_node[s + 1]; i++)
            r->kind_seen[g->nodes[i].okind] = 1;
        for (size_t c = 0; c < nc; c++) {
            wi_fix f = {.by = cands[c].by, .value = cands[c].value, .stage_of = r->stage_of,
                        .dp_of = r->dp_of};
            int64_t fixed = wi_replay_step(g, s, &f, &t);
            if (fixed < actual)
                *slot(r, f.by, f.value) += actual - fixed;
        }
        r->step_actual_ns[s] = actual;
        r->step_ideal_ns[s] = ideal;
        r->step_typical_ns[s] = typical;
        r->actual_ns += actual;
        r->ideal_ns += ideal;
        r->typical_ns += typical;
    }
    r->steps = S;
    r->slowdown = r->typical_ns > 0 ? (double)r->actual_ns / (double)r->typical_ns : 1.0;

    /* the class */
    int64_t R = r->actual_ns - r->ideal_ns;
    size_t bw = 0, bs = 0, bd = 0;
    for (size_t i = 1; i < r->n_ranks; i++)
        if (r->saved_worker_ns[i] > r->saved_worker_ns[bw])
            bw = i;
    for (size_t i = 1; i < r->n_stages; i++)
        if (r->saved_stage_ns[i] > r->saved_stage_ns[bs])
            bs = i;
    for (size_t i = 1; i < r->n_dp; i++)
        if (r->saved_dp_ns[i] > r->saved_dp_ns[bd])
            bd = i;
    int64_t W = r->saved_worker_ns[bw], St = r->saved_stage_ns[bs], D = r->saved_dp_ns[bd];
    int64_t W2 = 0;   /* the next best worker */
    for (size_t i = 0; i < r->n_ranks; i++)
        if (i != bw && r->saved_worker_ns[i] > W2)
            W2 = r->saved_worker_ns[i];
    int64_t best = W > St ? W : St;
    best = best > D ? best : D;
    r->worst_stage = (int32_t)bs;
    r->explained = R > 0 ? (double)best / (double)R : 0;
    r->cls = TSA_PIPE_NONE;
    r->culprit = -1;
    if (R > 0 && (double)R >= WI_MATERIAL * (double)r->actual_ns) {
        if ((double)W >= WI_EXPLAINS_WORKER * (double)R && W >= 4 * W2 && r->n_dp > 1) {
            r->cls = TSA_PIPE_SLOW_WORKER;
            r->culprit = (int32_t)bw;
        } else if ((double)(St > D ? St : D) >= WI_EXPLAINS_GROUP * (double)R) {
            r->cls = St >= D || r->n_dp == 1 ? TSA_PIPE_SLOW_STAGE : TSA_PIPE_SLOW_DP;
            r->culprit = r->cls == TSA_PIPE_SLOW_STAGE ? (int32_t)bs : (int32_t)bd;
        } else if ((double)R >= WI_MATERIAL_SPREAD * (double)r->actual_ns) {
            r->cls = TSA_PIPE_SPREAD;
            r->culprit = (int32_t)bs;
        }
    }
    rc = 0;
out:
    wi_times_free(&t);
    free(xw);
    free(xs);
    free(xd);
    free(path);
    free(via);
    free(cands);
    return rc;
}
