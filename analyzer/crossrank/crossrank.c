/* The cross-rank pass, stage by stage (see xr_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "crossrank.h"
#include "xr_internal.h"

void tsa_xrank_default_options(tsa_xrank_options *opt)
{
    opt->z_threshold = 3.0;
    opt->min_slowdown = 0.03;
}

static void ctx_free(xr_ctx *c)
{
    xr_blocks_free(&c->blocks);
    free(c->inst);
    free(c->comm_ids);
    free(c->host_of);
    free(c->host_rep);
    free(c->offset);
    free(c->comp);
    free(c->work);
    free(c->wait);
    free(c->rel);
}

/* Wall extent on the common clock: the ranks' record extents when known,
 * else the matched collectives'. */
static int64_t job_wall(const xr_ctx *c)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = 0; r < c->n_ranks; r++) {
        const tsa_rank *rk = &c->job->ranks[r];
        if (rk->last_ns <= rk->first_ns)
            continue;
        if (rk->first_ns + c->offset[r] < lo)
            lo = rk->first_ns + c->offset[r];
        if (rk->last_ns + c->offset[r] > hi)
            hi = rk->last_ns + c->offset[r];
    }
    if (hi > lo)
        return hi - lo;
    xr_member *ms = xr_scratch_members(c);
    if (!ms)
        return 0;   /* out of memory: extent unknown */
    for (size_t k = 0; k < c->n_inst; k++) {
        xr_members(c, &c->inst[k], ms);
        for (uint32_t j = 0; j < c->inst[k].n; j++) {
            if (ms[j].arrive < lo)
                lo = ms[j].arrive;
            if (ms[j].end > hi)
                hi = ms[j].end;
        }
    }
    free(ms);
    return hi > lo ? hi - lo : 0;
}

/* The stages work with rank indices; the result speaks global ranks. */
static void to_global_ranks(const tsa_job *job, tsa_xrank_result *out)
{
    if (out->straggler)
        out->straggler->rank = job->ranks[out->straggler->rank].rank;
    for (size_t i = 0; i < out->n_imbalanced; i++)
        out->imbalanced_ranks[i] = job->ranks[out->imbalanced_ranks[i]].rank;
    for (size_t i = 0; i < out->n_slow_host_ranks; i++)
        out->slow_host_ranks[i] = job->ranks[out->slow_host_ranks[i]].rank;
    for (size_t i = 0; i < out->n_bursts; i++)
        out->bursts[i].rank = job->ranks[out->bursts[i].rank].rank;
}

/* No persistent straggler: the intermittent one that cost most stands in
 * the "straggler" slot, flagged intermittent, when it cost at least 1% of
 * the run (scheduling hiccups on a busy machine should not read as a named
 * straggler; they stay in the "intermittent" list). */
static int promote_burst(tsa_xrank_result *out)
{
    if (out->straggler || !out->n_bursts || out->imbalance || out->slow_host)
        return 0;
    const tsa_xrank_burst *bu = &out->bursts[0];
    if (100 * bu->whatif_saved_ns < out->job_wall_ns)
        return 0;
    tsa_straggler *st = calloc(1, sizeof *st);
    if (!st)
        return -1;
    const tsa_rank_blame *b = NULL;
    for (size_t r = 0; r < out->n_ranks; r++)
        if (out->ranks[r].rank == bu->rank)
            b = &out->ranks[r];
    st->rank = bu->rank;
    st->host = bu->host;
    st->z = bu->z;
    st->slowdown = b ? b->slowdown : 0;
    st->wall_lost_ns = b ? b->wall_lost_ns : 0;
    st->whatif_saved_ns = bu->whatif_saved_ns;
    st->whatif_step_saved_ns = bu->n_slow_steps ? bu->whatif_saved_ns / (int64_t)bu->n_slow_steps : 0;
    st->intermittent = 1;
    st->slow_steps = malloc(bu->n_slow_steps * sizeof *st->slow_steps + 1);
    if (!st->slow_steps) {
        free(st);
        return -1;
    }
    memcpy(st->slow_steps, bu->slow_steps, bu->n_slow_steps * sizeof *st->slow_steps);
    st->n_slow_steps = bu->n_slow_steps;
    out->straggler = st;
    return 0;
}

int tsa_xrank_run(tsa_job *job, const tsa_xrank_options *opt,
                  tsa_xrank_result *out, tsa_findings *findings)
{
    tsa_xrank_options defaults;
    memset(out, 0, sizeof *out);
    out->clock_reference_rank = -1;
    if (!opt) {
        tsa_xrank_default_options(&defaults);
        opt = &defaults;
    }
    if (!job || !job->n_ranks || !job->ranks)
        return 0;

    xr_ctx c = {.job = job, .opt = opt, .n_ranks = job->n_ranks};
    out->ranks = calloc(job->n_ranks, sizeof *out->ranks);
    if (!out->ranks)
        goto fail;
    out->n_ranks = job->n_ranks;
    for (size_t r = 0; r < job->n_ranks; r++) {
        out->ranks[r].rank = job->ranks[r].rank;
        out->ranks[r].host = job->ranks[r].host;
    }
    if (xr_match(&c) || xr_clock_align(&c, out) || xr_blame(&c, out) ||
        xr_steps(&c, out) || xr_classify(&c, out))
        goto fail;
    for (size_t r = 0; r < job->n_ranks; r++) {
        out->ranks[r].clock_offset_ns = c.offset[r];
        out->ranks[r].clock_aligned = c.comp[r] == c.ref_comp;
    }
    out->job_wall_ns = job_wall(&c);
    to_global_ranks(job, out);
    if (promote_burst(out))
        goto fail;
    if (findings)
        xr_emit_findings(&c, out, findings);
    ctx_free(&c);
    return 0;
fail:
    ctx_free(&c);
    tsa_xrank_free(out);
    return -1;
}

void tsa_xrank_free(tsa_xrank_result *r)
{
    if (!r)
        return;
    free(r->ranks);
    if (r->straggler)
        free(r->straggler->slow_steps);
    free(r->straggler);
    free(r->imbalanced_ranks);
    free(r->slow_host_ranks);
    for (size_t i = 0; i < r->n_bursts; i++)
        free(r->bursts[i].slow_steps);
    free(r->bursts);
    memset(r, 0, sizeof *r);
    r->clock_reference_rank = -1;
}
