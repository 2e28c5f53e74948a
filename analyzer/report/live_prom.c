/* Prometheus text of the live job series: see live_prom.h.  Base units
 * (seconds, ratios), _total for counters; a rank is named by a label
 * (rank="2") on the series about it, and by value in the *_rank gauges
 * (-1: none), which graph over time. */
#include "live_prom.h"

#include <math.h>
#include <stdlib.h>

#include "model/self_cost.h"

typedef struct prom {
    FILE *out;
    char job[600];   /* job="...", escaped */
} prom;

static void head(const prom *p, const char *name, const char *type, const char *help)
{
    fprintf(p->out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void value(const prom *p, const char *name, const char *type, const char *help, double v)
{
    head(p, name, type, help);
    fprintf(p->out, "%s{%s} %.17g\n", name, p->job, v);
}

/* A series about one rank (rank < 0: none, nothing written). */
static void of_rank(const prom *p, const char *name, const char *help, int rank, double v)
{
    if (rank < 0)
        return;
    head(p, name, "gauge", help);
    fprintf(p->out, "%s{%s,rank=\"%d\"} %.17g\n", name, p->job, rank, v);
}

static void histogram(const prom *p, const tsa_live *L)
{
    const char *n = "tscope_job_step_duration_seconds";
    head(p, n, "histogram", "Job step time (the slowest rank's) of the steps every rank "
                            "summarized.");
    uint64_t cum = 0;
    for (int b = 0; b < TSA_LIVE_BUCKETS; b++) {
        cum += L->buckets[b];
        fprintf(p->out, "%s_bucket{%s,le=\"%g\"} %llu\n", n, p->job, tsa_live_bucket_le[b],
                (unsigned long long)cum);
    }
    cum += L->buckets[TSA_LIVE_BUCKETS];
    fprintf(p->out, "%s_bucket{%s,le=\"+Inf\"} %llu\n", n, p->job, (unsigned long long)cum);
    fprintf(p->out, "%s_sum{%s} %.9f\n%s_count{%s} %llu\n", n, p->job, L->job_step_ns / 1e9, n,
            p->job, (unsigned long long)L->complete);
}

static int rank_of(const tsa_live *L, int32_t i) { return i >= 0 ? L->ranks[i].rank : -1; }

static void last_step(const prom *p, const tsa_live *L)
{
    if (!L->have_last)
        return;
    value(p, "tscope_job_last_step", "gauge", "Number of the last step every rank summarized.",
          (double)L->last_step);
    value(p, "tscope_job_last_step_max_seconds", "gauge",
          "Last complete step: the slowest rank's step time.", L->last_max_ns / 1e9);
    value(p, "tscope_job_last_step_median_seconds", "gauge",
          "Last complete step: the median over ranks of the step time.",
          L->last_median_ns / 1e9);
    value(p, "tscope_job_last_step_slowest_rank", "gauge",
          "Last complete step: the rank with the most time outside NCCL calls (-1: a tie).",
          rank_of(L, L->last_slowest));
    if (!isnan(L->last_z))
        of_rank(p, "tscope_job_last_step_slowest_zscore",
                "Last complete step: the slowest rank's time outside NCCL as a z-score "
                "against the other ranks.",
                rank_of(L, L->last_slowest), L->last_z);
}

static void straggler(const prom *p, const tsa_live *L)
{
    value(p, "tscope_job_straggler_window_steps", "gauge",
          "Complete steps in the straggler window.", (double)L->win_n);
    value(p, "tscope_job_straggler_rank", "gauge",
          "The rank named a straggler over the window (-1: none).",
          L->named ? rank_of(L, L->top) : -1);
    int top = rank_of(L, L->top);
    of_rank(p, "tscope_job_straggler_persistence_ratio",
            "Share of the window's steps in which this rank, the most frequent, was the slowest.",
            top, L->top_share);
    of_rank(p, "tscope_job_straggler_zscore",
            "Binomial z-score of that count (each rank slowest with probability 1/ranks).", top,
            L->top_z);
    of_rank(p, "tscope_job_straggler_slowdown_ratio",
            "Median over the window of its time outside NCCL over the step's median rank's, "
            "minus 1.",
            top, L->top_slowdown);
}

/* What the ranks' extras give (CUPTI copies, cuBLAS GEMMs): omitted, not
 * 0, when no rank measured it. */
static void gpu_figures(const prom *p, const tsa_live *L)
{
    if (L->stall_rank_steps) {
        value(p, "tscope_job_data_stall_seconds_total", "counter",
              "Data stall (GPU idle before a step's first host-to-device copy) of complete "
              "steps, summed over the ranks that measured it.",
              L->stall_ns / 1e9);
        if (!isnan(L->stall_ratio))
            value(p, "tscope_job_data_stall_ratio", "gauge",
                  "Straggler window: data stall over step time, over the ranks that measured it.",
                  L->stall_ratio);
    }
    if (L->have_last && L->last_stall_ranks) {
        value(p, "tscope_job_last_step_data_stall_median_seconds", "gauge",
              "Last complete step: the median over ranks of the data stall.",
              L->last_stall_median_ns / 1e9);
        value(p, "tscope_job_last_step_data_stall_max_seconds", "gauge",
              "Last complete step: the largest data stall of a rank.",
              L->last_stall_max_ns / 1e9);
        value(p, "tscope_job_last_step_data_stall_max_rank", "gauge",
              "Last complete step: the rank with the largest data stall (-1: a tie).",
              rank_of(L, L->last_stall_max));
    }
    if (!isnan(L->mfu))
        value(p, "tscope_job_mfu_ratio", "gauge",
              "Straggler window: MFU estimate, the mean over ranks of GEMM time at peak "
              "FLOP/s over step time.",
              L->mfu);
}

/* The job="..." label, escaped. */
static void prom_open(prom *p, FILE *out, const char *job)
{
    p->out = out;
    size_t n = (size_t)snprintf(p->job, sizeof p->job, "job=\"");
    for (const char *c = job && *job ? job : "none"; *c && n + 4 < sizeof p->job; c++) {
        if (*c == '\\' || *c == '"' || *c == '\n')
            p->job[n++] = '\\';
        p->job[n++] = *c == '\n' ? 'n' : *c;
    }
    snprintf(p->job + n, sizeof p->job - n, "\"");
}

static int by_rank(const void *a, const void *b)
{
    int ra = (*(const tsa_bb_source *const *)a)->rank, rb = (*(const tsa_bb_source *const *)b)->rank;
    return (ra > rb) - (ra < rb);
}

void tsa_live_write_self_cost(FILE *out, const tsa_bb_follow *fw, const char *job)
{
    prom p;
    prom_open(&p, out, job);
    /* In rank order, not the order the files were found: the sum below is
     * then the same double however the ranks' files appeared. */
    const tsa_bb_source **by = fw->n ? malloc(fw->n * sizeof *by) : NULL;
    if (fw->n && !by)
        return; /* absent, like a figure nobody said yet */
    size_t n = 0;
    for (size_t i = 0; i < fw->n; i++)
        if (fw->src[i].active)
            by[n++] = &fw->src[i];
    if (n > 1)
        qsort(by, n, sizeof *by, by_rank);
    double cpu_ms = 0, wall_ms = 0;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const tsa_bb_source *s = by[i];
        tsa_cost_figure f;
        if (tsa_self_cost_figure(&s->cost, &f) < 0)
            continue;
        if (!any++)
            head(&p, "tscope_job_rank_self_cost_ratio", "gauge",
                 "A rank's tscope CPU time over its run's wall time, as its dump's metadata "
                 "last said (about once a minute in black-box mode).");
        fprintf(out, "tscope_job_rank_self_cost_ratio{%s,rank=\"%d\"} %.17g\n", p.job, s->rank,
                f.pct / 100.0);
        cpu_ms += f.cpu_ms;
        wall_ms += (double)s->cost.wall_ns / 1e6;
    }
    free(by);
    if (any && wall_ms > 0) /* absent, not 0, when no rank said it yet */
        value(&p, "tscope_job_self_cost_ratio", "gauge",
              "tscope's CPU time over wall time, summed over the ranks that said it.",
              cpu_ms / wall_ms);
}

void tsa_live_write_prom(FILE *out, const tsa_live *L, const char *job, int world_size)
{
    prom p;
    prom_open(&p, out, job);
    uint64_t dropped = 0;
    for (size_t i = 0; i < L->n_ranks; i++)
        dropped += L->ranks[i].dropped;
    value(&p, "tscope_job_ranks", "gauge", "Ranks with a summary file.", (double)L->n_ranks);
    if (world_size > 0)
        value(&p, "tscope_job_world_size", "gauge", "World size the ranks report.", world_size);
    value(&p, "tscope_job_complete_steps_total", "counter",
          "Steps every rank has summarized.", (double)L->complete);
    value(&p, "tscope_job_incomplete_steps_total", "counter",
          "Steps some rank's summary of is missing (lost or overwritten before the others "
          "caught up).",
          (double)L->incomplete);
    histogram(&p, L);
    last_step(&p, L);
    value(&p, "tscope_job_nccl_host_seconds_total", "counter",
          "Host time inside NCCL calls of complete steps, summed over ranks.", L->nccl_ns / 1e9);
    value(&p, "tscope_job_nccl_host_ratio", "gauge",
          "Straggler window: host time inside NCCL calls over step time, over all ranks.",
          L->nccl_ratio);
    value(&p, "tscope_job_dropped_records_total", "counter",
          "Records the ranks dropped, over the steps they summarized.", (double)dropped);
    value(&p, "tscope_job_anomalous_steps_total", "counter",
          "Complete steps some rank flagged slower than TSCOPE_BB_K times its median.",
          (double)L->anomalous);
    value(&p, "tscope_job_step_mismatches_total", "counter",
          "Complete steps whose opening NCCL call has different sequence numbers on different "
          "ranks.",
          (double)L->mismatched);
    straggler(&p, L);
    gpu_figures(&p, L);
    value(&p, "tscope_job_lag_steps", "gauge",
          "How many steps the rank furthest behind has summarized fewer than the one ahead.",
          (double)L->lag_steps);
    value(&p, "tscope_job_lagging_rank", "gauge", "The rank furthest behind (-1: none).",
          rank_of(L, L->lagging));
}
