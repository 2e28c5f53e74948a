/* The per-rank stages (rank_stages.h) and the runner that runs them here. */
#include "rank_stages.h"

#include <stdlib.h>
#include <string.h>

#include "gpu_span.h"
#include "load/rank_view.h"
#include "hta_view.h"
#include "partial.h"
#include "steps.h"
#include "tables.h"

int tsa_stage_steps(const tsa_job *job, tsa_rank *r, const char *marker, tsa_rank_result *rr,
                    tsa_rank_digest *d)
{
    tsa_step_method m;
    if (tsa_find_steps(r, marker, &m))
        return -1;
    d->cut_note[0] = 0;
    d->cut = tsa_trim_cut_rank(job, r, d->cut_note, sizeof d->cut_note) >= 0;
    rr->method = m;
    rr->steps_found = r->n_steps;
    return 0;
}

static void mark_warmup(tsa_rank *r, const tsa_window_plan *p)
{
    for (size_t s = 0; s < r->n_steps; s++)
        r->steps[s].warmup = s < (size_t)p->warmup || s >= p->steps_total;
}

int tsa_stage_mark_warmup(tsa_rank *r, const tsa_window_plan *p)
{
    tsa_rank_view v;
    tsa_rank *rk = tsa_view_open_mut(r, TSA_VIEW_STEPS, &v);
    if (rk)
        mark_warmup(rk, p);
    int rc = rk ? tsa_view_store_steps(r, &v) : -1;
    tsa_view_close(&v);
    return rc;
}

/* GEMM FLOPs in the window, by the kernel's start when linked, else by
 * the host call's. */
static void gemm_flops(const tsa_rank *r, const tsa_rank_result *rr, tsa_rank_digest *d)
{
    d->gemm_flops = 0;
    memset(d->gemm_flops_by_dtype, 0, sizeof d->gemm_flops_by_dtype);
    for (size_t i = 0; i < r->n_gemms; i++) {
        const tsa_gemm *g = &r->gemms[i];
        int64_t t = g->kernel >= 0 && (size_t)g->kernel < r->n_kernels
                        ? r->kernels[g->kernel].start_ns
                        : g->start_ns;
        if (t < rr->window_start_ns || t >= rr->window_end_ns)
            continue;
        d->gemm_flops += g->flops;
        if (g->dtype < TSA_DTYPE_COUNT)
            d->gemm_flops_by_dtype[g->dtype] += g->flops;
    }
}

static int window(tsa_rank *r, const tsa_window_plan *p, tsa_rank_result *rr,
                  tsa_rank_digest *d)
{
    mark_warmup(r, p);
    if (p->steps && r->n_steps >= p->steps_total) {
        rr->window_start_ns = r->steps[p->warmup].start_ns;
        rr->window_end_ns = r->steps[p->steps_total - 1].end_ns;
    } else {
        rr->window_start_ns = r->first_ns;
        rr->window_end_ns = r->last_ns;
    }
    int by_steps = p->steps && r->n_steps >= p->steps_total;
    if (p->window == TSA_WINDOW_GPU_SPAN &&
        tsa_rank_hta_span(r, &rr->window_start_ns, &rr->window_end_ns) < 0)
        return -1;
    /* The analysed steps already end before the cut (job_steps.c). */
    if (p->records_end_ns && (!by_steps || p->window == TSA_WINDOW_GPU_SPAN) &&
        rr->window_end_ns > p->records_end_ns)
        rr->window_end_ns = p->records_end_ns;
    if (rr->window_end_ns < rr->window_start_ns)
        rr->window_end_ns = rr->window_start_ns;
    gemm_flops(r, rr, d);
    return 0;
}

int tsa_stage_window(tsa_rank *r, const tsa_window_plan *p, tsa_rank_result *rr,
                     tsa_rank_digest *d)
{
    tsa_rank_view v;
    tsa_rank *rk = tsa_view_open_mut(r, TSA_VIEW_STEPS, &v);
    int rc = rk ? window(rk, p, rr, d) : -1;
    if (!rc)
        rc = tsa_view_store_steps(r, &v);
    tsa_view_close(&v);
    return rc;
}

int tsa_stage_pass(tsa_rank *r, const tsa_pass_plan *p, tsa_rank_result *rr,
                   tsa_rank_digest *d)
{
    int rc = (p->window == TSA_WINDOW_GPU_SPAN ? tsa_rank_pass_hta : tsa_rank_pass)(
        r, p->arrivals, rr->flops, p->peak_flops, rr);
    if (rc)
        return -1;
    d->has_kernels = r->n_kernels > 0;
    d->has_copies = r->n_copies > 0;
    tsa_copy_totals(r, rr, d->copies, d->copy_known_ns);
    memset(&d->mix, 0, sizeof d->mix);
    memset(&d->sync, 0, sizeof d->sync);
    tsa_rank_digest_free(d);
    if (tsa_kernel_totals(r, rr, &d->kernels, &d->n_kernels) ||
        tsa_mix_measure_rank(r, rr->window_start_ns, rr->window_end_ns, &d->mix) ||
        tsa_sync_measure_rank(r, rr, &d->sync))
        return -1;
    return 0;
}

/* ---- the stages run here, on the ranks whose records are here ---- */

static int local_steps(void *ctx, tsa_analysis *a)
{
    (void)ctx;
    for (size_t i = 0; i < a->job->n_ranks; i++)
        if (!a->job->ranks[i].remote &&
            tsa_stage_steps(a->job, &a->job->ranks[i], a->opt.step_marker, &a->ranks[i],
                            &a->digests[i]))
            return -1;
    return 0;
}

static int local_window(void *ctx, tsa_analysis *a, const tsa_window_plan *p)
{
    (void)ctx;
    for (size_t i = 0; i < a->job->n_ranks; i++)
        if (!a->job->ranks[i].remote &&
            tsa_stage_window(&a->job->ranks[i], p, &a->ranks[i], &a->digests[i]))
            return -1;
    return 0;
}

static int local_pass(void *ctx, tsa_analysis *a, const tsa_pass_plan *p)
{
    (void)ctx;
    for (size_t i = 0; i < a->job->n_ranks; i++)
        if (!a->job->ranks[i].remote &&
            tsa_stage_pass(&a->job->ranks[i], p, &a->ranks[i], &a->digests[i]))
            return -1;
    return 0;
}

const tsa_rank_runner tsa_local_runner = {local_steps, local_window, local_pass, NULL, NULL, NULL, 0};
