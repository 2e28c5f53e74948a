/* tsa_analyze: the passes in order, into one tsa_analysis.
 *
 *   per-rank stage 1 and 2 (steps, windows)  passes/job_steps.c
 *   cross-rank pass (one clock, blame)       crossrank/
 *   step statistics, FLOPs and peak          passes/job_steps.c, job_flops.c
 *   per-rank stage 3 (overlap, budget)       passes/rank_stages.c
 *   job budget, tables, memory               passes/job_budget.c, tables.c, memory.c
 *   finding rules, causes, attribution,
 *   verdict                                  findings/
 *   throughput, hangs                        passes/throughput.c, hang/
 *   finding order, summary                   findings/verdict.c, passes/summary.c
 *
 * Nothing below includes this file: each pass reads the model and the
 * results before it and writes its own part. */
#include "analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crossrank/crossrank.h"
#include "findings/attribution.h"
#include "findings/cause.h"
#include "findings/rules.h"
#include "findings/verdict.h"
#include "hang/hang.h"
#include "passes/job_budget.h"
#include "passes/job_flops.h"
#include "passes/job_steps.h"
#include "passes/memory.h"
#include "passes/rank_pass.h"
#include "passes/rank_stages.h"
#include "whatif/whatif.h"
#include "passes/summary.h"
#include "passes/tables.h"
#include "passes/throughput.h"

void tsa_analysis_default_options(tsa_analysis_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->warmup = -1;
    tsa_xrank_default_options(&opt->xrank);
}

tsa_analysis *tsa_analyze(tsa_job *job, const tsa_analysis_options *opt)
{
    return tsa_analyze_with(job, opt, &tsa_local_runner);
}

tsa_analysis *tsa_analyze_with(tsa_job *job, const tsa_analysis_options *opt,
                               const tsa_rank_runner *runner)
{
    tsa_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->job = job;
    a->runner = runner;
    if (opt)
        a->opt = *opt;
    else
        tsa_analysis_default_options(&a->opt);
    a->n_ranks = job->n_ranks;
    a->ranks = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *a->ranks);
    a->digests = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *a->digests);
    if (!a->ranks || !a->digests)
        goto fail;
    a->hosts = (size_t)tsa_job_hosts(job);
    for (size_t i = 0; i < job->n_ranks; i++) {
        a->ranks[i].rank = job->ranks[i].rank;
        a->ranks[i].host = job->ranks[i].host;
        if (!a->device_name && job->ranks[i].device_name) {
            a->device_name = job->ranks[i].device_name;
            a->device_cc = job->ranks[i].compute_capability;
        }
    }
    a->budget.mfu = NAN;

    if (tsa_job_find_steps(a, runner))
        goto fail;
    if (!a->opt.no_xrank) {
        if (tsa_xrank_run(job, &a->opt.xrank, &a->xrank, &a->findings))
            goto fail;
        a->have_xrank = 1;
        /* After the clocks are aligned; on a pipeline its blame replaces
         * the late-rank findings that arrival order alone gives. */
        if (!(a->pipe = calloc(1, sizeof *a->pipe)) || tsa_pipe_run(job, a->pipe, &a->findings))
            goto fail;
        tsa_pipe_supersede(a->pipe, &a->findings, &a->xrank);
    }
    if (tsa_job_step_stats(a))
        goto fail;

    tsa_job_flops(a);
    /* Stage 3 needs every collective's latest arrival (common clock). */
    tsa_arrivals arr;
    if (tsa_arrivals_build(job, &arr))
        goto fail;
    tsa_pass_plan plan = {&arr, a->peak_flops, a->opt.window};
    int failed = runner->pass(runner->ctx, a, &plan);
    if (!failed)
        tsa_job_budget(a);
    failed = failed || tsa_build_tables(a, &arr);
    tsa_arrivals_free(&arr);
    if (failed || tsa_memory_measure(job, &a->memory))
        goto fail;
    if (tsa_findings_run(a, &a->findings) || tsa_cause_run(a, runner))
        goto fail;
    /* Each recoverable nanosecond to one finding, then the verdict on
     * that disjoint budget. */
    if (tsa_attribute_recoverable(a))
        goto fail;
    tsa_decide_verdict(a);
    a->confidence = tsa_findings_confidence(&a->findings);
    if (tsa_throughput_compute(a))
        goto fail;
    if (!(a->hang = tsa_hang_analyze(job)) || tsa_hang_add_findings(a->hang, &a->findings))
        goto fail;
    tsa_findings_sort(&a->findings);
    tsa_verdict_lead(a);
    tsa_summary_fill(a);
    return a;
fail:
    tsa_analysis_free(a);
    return NULL;
}

void tsa_analysis_free(tsa_analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_kernels; i++)
        free(a->kernels[i].name);
    free(a->kernels);
    free(a->colls);
    free(a->ranks);
    for (size_t i = 0; a->digests && i < a->n_ranks; i++)
        tsa_rank_digest_free(&a->digests[i]);
    free(a->digests);
    free(a->throughput.step_ns);
    if (a->have_xrank)
        tsa_xrank_free(&a->xrank);
    tsa_pipe_free(a->pipe);
    free(a->pipe);
    tsa_findings_free(&a->findings);
    tsa_memory_free(&a->memory);
    tsa_hang_free(a->hang);
    tsa_cause_free(&a->cause);
    free(a);
}
