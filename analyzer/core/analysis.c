/* tsa_analyze: runs the passes in order and assembles the result. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attribution.h"
#include "findings_core.h"
#include "findings_mix.h"
#include "hta_view.h"
#include "idle_cause.h"
#include "input_facts.h"
#include "hang/hang.h"
#include "job_build.h"
#include "sat_math.h"
#include "partial.h"
#include "rank_pass.h"
#include "rank_stages.h"
#include "steps.h"
#include "tables.h"
#include "throughput.h"
#include "verdict.h"

void tsa_analysis_default_options(tsa_analysis_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->warmup = -1;
    tsa_xrank_default_options(&opt->xrank);
}

const char *tsa_budget_line_name(tsa_budget_line l)
{
    static const char *const names[TSA_BL_COUNT] = {
        "useful_compute", "compute_overhead", "data_stall", "exposed_comm_wait",
        "exposed_comm_transfer", "host_launch_idle", "copy_only", "other"};
    return (unsigned)l < TSA_BL_COUNT ? names[l] : "?";
}

const char *tsa_budget_line_label(tsa_budget_line l)
{
    static const char *const names[TSA_BL_COUNT] = {
        "useful compute", "compute overhead", "data stall", "exposed comm (wait)",
        "exposed comm (transfer)", "host/launch idle", "memcpy/memset only", "other"};
    return (unsigned)l < TSA_BL_COUNT ? names[l] : "?";
}

int tsa_budget_line_recoverable(tsa_budget_line l)
{
    /* Copy-only time is GPU work (HTA counts it as busy), not idle to win back. */
    return l != TSA_BL_USEFUL && l != TSA_BL_OTHER && l != TSA_BL_COPY &&
           (unsigned)l < TSA_BL_COUNT;
}

int tsa_budget_line_measured(const tsa_budget *b, tsa_budget_line l, int gpu)
{
    /* Without FLOPs and a peak, useful compute is all measured compute, so
     * the overhead is unknown rather than 0.  Host records alone cannot see
     * the GPU wait for data or for a launch, nor copies: those lines are 0
     * by construction there, not a measured 0. */
    if (l == TSA_BL_OVERHEAD)
        return !isnan(b->mfu);
    return gpu || (l != TSA_BL_DATA_STALL && l != TSA_BL_HOST_IDLE && l != TSA_BL_COPY);
}

const char *tsa_step_method_name(tsa_step_method m)
{
    switch (m) {
    case TSA_STEPS_COLLECTIVES: return "collective pattern";
    case TSA_STEPS_NVTX: return "ProfilerStep ranges";
    case TSA_STEPS_MARKER: return "step marker";
    case TSA_STEPS_AUTOGRAD: return "forward/backward thread cycle";
    case TSA_STEPS_DATALOADER: return "DataLoader iterations";
    case TSA_STEPS_OPTIMIZER: return "Optimizer.step calls";
    default: return "none (whole run)";
    }
}

const char *tsa_verdict_name(tsa_verdict v)
{
    switch (v) {
    case TSA_VERDICT_GPU_BOUND: return "gpu-bound";
    case TSA_VERDICT_DATA_BOUND: return "data-bound";
    case TSA_VERDICT_COMM_BOUND: return "communication-bound";
    case TSA_VERDICT_HOST_BOUND: return "host-bound";
    case TSA_VERDICT_STRAGGLER_BOUND: return "straggler-bound";
    case TSA_VERDICT_COMPUTE_BOUND: return "compute-bound";
    default: return "unknown";
    }
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

/* FLOPs of one rank's window: its GEMMs (stage 2), unless an option gives
 * them per step. */
static double rank_flops(const tsa_analysis *a, const tsa_rank_digest *d, size_t steps,
                         double *by_dtype)
{
    const tsa_analysis_options *o = &a->opt;
    if (o->flops_per_step > 0)
        return o->flops_per_step * (double)steps;
    if (o->params > 0 && o->tokens_per_step > 0) {
        double per_token = 6.0 * o->params;
        if (o->layers > 0 && o->seq > 0 && o->hidden > 0)
            per_token += 12.0 * o->layers * (double)o->seq * o->hidden;
        return per_token * o->tokens_per_step * (double)steps;
    }
    for (int t = 0; t < TSA_DTYPE_COUNT; t++)
        by_dtype[t] += d->gemm_flops_by_dtype[t];
    return d->gemm_flops;
}

static const char *flops_source(const tsa_analysis_options *o, double flops)
{
    if (o->flops_per_step > 0)
        return "flops-per-step";
    if (o->params > 0 && o->tokens_per_step > 0)
        return "formula";
    return flops > 0 ? "gemm" : "none";
}

static int find_steps(tsa_analysis *a, const tsa_rank_runner *run)
{
    tsa_job *job = a->job;
    size_t min_steps = SIZE_MAX;
    int method_votes[TSA_STEPS_METHODS] = {0};
    if (run->steps(run->ctx, a))
        return -1;
    for (size_t i = 0; i < job->n_ranks; i++) {
        a->cut_short |= a->digests[i].cut;
        if (a->digests[i].cut_note[0])
            tsa_note_append(a->partial, sizeof a->partial, a->digests[i].cut_note);
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
    a->steps_total = min_steps == SIZE_MAX ? 0 : min_steps;
    int w = a->opt.warmup >= 0 ? a->opt.warmup : tsa_default_warmup(a->steps_total);
    if (a->method == TSA_STEPS_NONE)
        w = 0;
    if ((size_t)w >= a->steps_total)
        w = a->steps_total > 0 ? (int)a->steps_total - 1 : 0;
    a->warmup = w;
    a->steps = a->steps_total > (size_t)w ? a->steps_total - (size_t)w : 0;
    /* Same step indices on every rank: [warmup, steps_total). */
    tsa_window_plan plan = {w, a->steps_total, a->steps, a->opt.window};
    if (run->window(run->ctx, a, &plan))
        return -1;
    /* Remote ranks' steps were marked where they live; mark this copy. */
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].remote)
            tsa_stage_mark_warmup(&job->ranks[i], &plan);
    return 0;
}

static void step_stats(tsa_analysis *a)
{
    int64_t *med = malloc((a->n_ranks + 1) * sizeof *med);
    size_t n_med = 0;
    double sum = 0, sum2 = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const tsa_rank *r = &a->job->ranks[i];
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
            qsort(d, nd, sizeof *d, cmp_i64);
            a->ranks[i].median_step_ns = d[nd / 2];
            if (med)
                med[n_med++] = d[nd / 2];
        }
        free(d);
    }
    if (med && n_med) {
        qsort(med, n_med, sizeof *med, cmp_i64);
        a->median_step_ns = med[n_med / 2];
    }
    free(med);
    if (cnt > 1) {
        double mean = sum / (double)cnt;
        double var = sum2 / (double)cnt - mean * mean;
        a->step_cv = mean > 0 && var > 0 ? sqrt(var) / mean : 0;
    }
}

static int count_hosts(const tsa_job *job)
{
    int n = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const char *h = job->ranks[i].host ? job->ranks[i].host : "";
        size_t j = 0;
        while (j < i && strcmp(job->ranks[j].host ? job->ranks[j].host : "", h))
            j++;
        if (j == i)
            n++;
    }
    return n;
}

/* A straggler-bound verdict lists the late rank's finding first: it is
 * what sets the pace, whatever the size of the other findings. */
static void lead_with_verdict(tsa_analysis *a)
{
    if (a->verdict != TSA_VERDICT_STRAGGLER_BOUND)
        return;
    tsa_finding *v = a->findings.items;
    for (size_t i = 0; i < a->findings.n; i++)
        if (tsa_finding_is_late_rank(v[i].id) && v[i].rank == a->verdict_rank &&
            strcmp(v[i].id, "DIST.INTERMITTENT")) {
            tsa_finding lead = v[i];
            memmove(v + 1, v, i * sizeof *v);
            v[0] = lead;
            return;
        }
}

static void summary(tsa_analysis *a)
{
    tsa_summary *s = &a->summary;
    memset(s, 0, sizeof *s);
    s->run_id = a->job->run_id;
    s->ranks = a->job->n_ranks;
    s->hosts = a->hosts;
    s->steps = a->steps;
    s->wall_ns = a->wall_ns;
    s->median_step_ns = a->median_step_ns;
    s->mfu = a->budget.mfu;
    s->top_recoverable = -1;
    for (int l = 0; l < TSA_BL_COUNT; l++) {
        s->lines[l].name = tsa_budget_line_name((tsa_budget_line)l);
        s->lines[l].ns = a->budget.line_ns[l];
        s->lines[l].recoverable = tsa_budget_line_recoverable((tsa_budget_line)l);
        if (s->lines[l].recoverable && s->lines[l].ns > 0 &&
            (s->top_recoverable < 0 || s->lines[l].ns > s->lines[s->top_recoverable].ns))
            s->top_recoverable = l;
    }
    double w = (double)a->budget.wall_ns;
    s->exposed_comm_share = w > 0 ? (double)a->overlap.exposed_ns / w : 0;
    s->data_stall_share = w > 0 ? (double)a->budget.line_ns[TSA_BL_DATA_STALL] / w : 0;
    memcpy(s->kcat_ns, a->kcat_ns, sizeof s->kcat_ns);
    for (size_t i = 0; i < a->n_colls && s->n_colls < 16; i++) {
        tsa_summary_coll *c = &s->colls[s->n_colls++];
        c->op = a->colls[i].op;
        c->name = tsa_nccl_op_name(a->colls[i].op);
        c->count = a->colls[i].count;
        c->bytes = a->colls[i].bytes;
        c->ns = a->colls[i].ns;
        c->busbw_gbps = a->colls[i].busbw_gbps;
    }
    s->straggler_rank = -1;
    if (a->have_xrank && a->xrank.straggler) {
        s->straggler_rank = a->xrank.straggler->rank;
        s->straggler_host = a->xrank.straggler->host;
    }
    s->verdict = a->verdict;
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
    if (opt)
        a->opt = *opt;
    else
        tsa_analysis_default_options(&a->opt);
    a->n_ranks = job->n_ranks;
    a->ranks = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *a->ranks);
    a->digests = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *a->digests);
    if (!a->ranks || !a->digests)
        goto fail;
    a->hosts = (size_t)count_hosts(job);
    for (size_t i = 0; i < job->n_ranks; i++) {
        a->ranks[i].rank = job->ranks[i].rank;
        a->ranks[i].host = job->ranks[i].host;
        if (!a->device_name && job->ranks[i].device_name)
            a->device_name = job->ranks[i].device_name;
    }
    a->budget.mfu = NAN;

    if (find_steps(a, runner))
        goto fail;
    if (!a->opt.no_xrank) {
        if (tsa_xrank_run(job, &a->opt.xrank, &a->xrank, &a->findings))
            goto fail;
        a->have_xrank = 1;
    }
    step_stats(a);

    /* FLOPs and the peak they are measured against. */
    double by_dtype[TSA_DTYPE_COUNT] = {0};
    double *flops = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *flops);
    if (!flops)
        goto fail;
    for (size_t i = 0; i < job->n_ranks; i++) {
        flops[i] = rank_flops(a, &a->digests[i], a->steps, by_dtype);
        a->flops += flops[i];
    }
    a->flops_source = flops_source(&a->opt, a->flops);
    a->dtype = TSA_DTYPE_UNKNOWN;
    for (int d = 1; d < TSA_DTYPE_COUNT; d++)
        if (by_dtype[d] > by_dtype[a->dtype])
            a->dtype = (tsa_dtype)d;
    if (a->opt.peak_tflops > 0) {
        a->peak_flops = a->opt.peak_tflops * 1e12;
        a->peak_source = "--peak-tflops";
    } else {
        a->peak_flops = tsa_peak_flops(a->device_name, a->dtype, &a->peak_source);
    }

    a->cpu_only = job->n_ranks > 0;
    tsa_arrivals arr;
    if (tsa_arrivals_build(job, &arr)) {
        free(flops);
        goto fail;
    }
    for (size_t i = 0; i < job->n_ranks; i++)
        a->ranks[i].flops = flops[i];
    tsa_pass_plan plan = {&arr, a->peak_flops, a->opt.window};
    if (runner->pass(runner->ctx, a, &plan)) {
        tsa_arrivals_free(&arr);
        free(flops);
        goto fail;
    }
    for (size_t i = 0; i < job->n_ranks; i++) {
        tsa_rank_result *rr = &a->ranks[i];
        a->gpu |= rr->gpu;
        a->cpu_only &= !a->digests[i].has_kernels && !a->digests[i].has_copies &&
                       !tsa_rank_gpu_collectives(&job->ranks[i]);
        int64_t wall = rr->budget.wall_ns;
        if (wall > a->wall_ns)
            a->wall_ns = wall;
        TSA_SAT_ACC(a->budget.wall_ns, wall);
        for (int l = 0; l < TSA_BL_COUNT; l++)
            TSA_SAT_ACC(a->budget.line_ns[l], rr->budget.line_ns[l]);
        TSA_SAT_ACC(a->overlap.comm_ns, rr->overlap.comm_ns);
        TSA_SAT_ACC(a->overlap.overlapped_ns, rr->overlap.overlapped_ns);
        TSA_SAT_ACC(a->overlap.exposed_ns, rr->overlap.exposed_ns);
        TSA_SAT_ACC(a->overlap.exposed_wait_ns, rr->overlap.exposed_wait_ns);
        TSA_SAT_ACC(a->overlap.exposed_transfer_ns, rr->overlap.exposed_transfer_ns);
        for (int c = 0; c < TSA_KCAT_COUNT; c++) {
            TSA_SAT_ACC(a->kcat_ns[c], rr->kcat_ns[c]);
            a->kcat_count[c] += rr->kcat_count[c];
        }
        for (int c = 0; c < TSA_IDLE_COUNT; c++)
            TSA_SAT_ACC(a->idle_ns[c], rr->idle_ns[c]);
        a->host_data |= rr->host_data;
        a->host_records |= job->ranks[i].host_records;
    }
    tsa_arrivals_free(&arr);
    free(flops);
    if (a->flops > 0 && a->peak_flops > 0 && a->budget.wall_ns > 0)
        a->budget.mfu = (double)a->budget.line_ns[TSA_BL_USEFUL] / (double)a->budget.wall_ns;

    if (tsa_build_tables(a) || tsa_memory_measure(job, &a->memory))
        goto fail;
    if (tsa_core_findings(a, &a->findings) || tsa_advisory_findings(a, &a->findings))
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
    lead_with_verdict(a);
    summary(a);
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
    tsa_findings_free(&a->findings);
    tsa_memory_free(&a->memory);
    tsa_hang_free(a->hang);
    free(a);
}
