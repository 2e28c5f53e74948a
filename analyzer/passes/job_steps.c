/* The job-level step plan: which steps every rank analyses (the per-rank
 * stages find and window them), and the step-time statistics. */
#include "job_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "load/rank_view.h"
#include "partial.h"
#include "records_cut.h"
#include "steps.h"
#include "util/cmp.h"

int tsa_job_find_steps(tsa_analysis *a, const tsa_rank_runner *run)
{
    tsa_job *job = a->job;
    size_t min_steps = SIZE_MAX;
    int method_votes[TSA_STEPS_METHODS] = {0};
    if (run->steps(run->ctx, a))
        return -1;
    for (size_t i = 0; i < job->n_ranks; i++) {
        a->cut_short |= a->digests[i].cut;
        if (a->digests[i].cut_note[0]) {
            char text[sizeof a->digests[i].cut_note + 24];
            snprintf(text, sizeof text, "rank %d: %s", job->ranks[i].rank, a->digests[i].cut_note);
            tsa_note_append(a->partial, sizeof a->partial, text);
        }
        method_votes[a->ranks[i].method < TSA_STEPS_METHODS ? a->ranks[i].method : 0]++;
        if (job->ranks[i].n_steps && job->ranks[i].n_steps < min_steps)
            min_steps = job->ranks[i].n_steps;
    }
    tsa_note_missing_ranks(job, a->partial, sizeof a->partial);
    int best = 0;
    for (int m = 1; m < TSA_STEPS_METHODS; m++)
        if (method_votes[m] > method_votes[best])
            best = m;
    a->method = (tsa_step_method)best;
    /* Per-kernel records stop at a step to light: the analysed steps end
     * before it, on every rank (the same step indices everywhere). */
    if (tsa_records_cut_find(a))
        return -1;
    if (a->kernels_cut.rank >= 0 && min_steps != SIZE_MAX &&
        a->kernels_cut.steps_before < min_steps)
        min_steps = a->kernels_cut.steps_before;
    a->steps_total = min_steps == SIZE_MAX ? 0 : min_steps;
    int w = a->opt.warmup >= 0 ? a->opt.warmup : tsa_default_warmup(a->steps_total);
    if (a->method == TSA_STEPS_NONE)
        w = 0;
    if ((size_t)w >= a->steps_total)
        w = a->steps_total > 0 ? (int)a->steps_total - 1 : 0;
    a->warmup = w;
    a->steps = a->steps_total > (size_t)w ? a->steps_total - (size_t)w : 0;
    /* Same step indices on every rank: [warmup, steps_total). */
    tsa_window_plan plan = {w, a->steps_total, a->steps, a->opt.window,
                            a->kernels_cut.rank >= 0 ? a->kernels_cut.at_ns : 0};
    if (run->window(run->ctx, a, &plan))
        return -1;
    /* Remote ranks' steps were marked where they live; mark this copy. */
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].remote && !run->marks_remote_steps &&
            tsa_stage_mark_warmup(&job->ranks[i], &plan))
            return -1;
    return 0;
}

int tsa_job_step_stats(tsa_analysis *a)
{
    int64_t *med = malloc((a->n_ranks + 1) * sizeof *med);
    size_t n_med = 0;
    double sum = 0, sum2 = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&a->job->ranks[i], TSA_VIEW_STEPS, &v);
        if (!r) {
            tsa_view_close(&v);
            free(med);
            return -1;
        }
        int64_t *d = malloc((r->n_steps + 1) * sizeof *d);
        size_t nd = 0;
        for (size_t s = 0; s < r->n_steps; s++) {
            if (r->steps[s].warmup)
                continue;
            int64_t len = r->steps[s].end_ns - r->steps[s].start_ns;
            if (d)
                d[nd++] = len;
            sum += (double)len;
            sum2 += (double)len * (double)len;
            cnt++;
        }
        if (d && nd) {
            qsort(d, nd, sizeof *d, tsa_cmp_i64);
            a->ranks[i].median_step_ns = d[nd / 2];
            if (med)
                med[n_med++] = d[nd / 2];
        }
        free(d);
        tsa_view_close(&v);
    }
    if (med && n_med) {
        qsort(med, n_med, sizeof *med, tsa_cmp_i64);
        a->median_step_ns = med[n_med / 2];
    }
    free(med);
    if (cnt > 1) {
        double mean = sum / (double)cnt;
        double var = sum2 / (double)cnt - mean * mean;
        a->step_cv = mean > 0 && var > 0 ? sqrt(var) / mean : 0;
    }
    return 0;
}
