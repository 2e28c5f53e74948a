/* Prometheus textfile of black-box mode: see bb_metrics.h.  Names follow
 * Prometheus conventions: base units (_seconds, _bytes), _total for
 * counters; a histogram for step times. */
#include "bb_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder.h"

static const double bounds[BB_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                          0.5,   1,      2.5,   5,    10,   30,    60};

/* A label value with \, " and newline escaped as the text format wants. */
static size_t escaped(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 3 < cap; s++) {
        if (*s == '\\' || *s == '"') {
            out[n++] = '\\';
            out[n++] = *s;
        } else if (*s == '\n') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            out[n++] = *s;
        }
    }
    out[n] = 0;
    return n;
}

void bb_metrics_init(bb_metrics *m, const tsc_config *cfg, const tsc_identity *id,
                     const char *host)
{
    memset(m, 0, sizeof *m);
    char dir[4300], job[300], h[300];
    snprintf(dir, sizeof dir, "%s/metrics", cfg->out_dir);
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        tsc_warn_once("bb-metrics", "cannot create %s: %s; no metrics file", dir,
                      strerror(errno));
        m->failed = 1;
    }
    char r[16];
    if (id->rank >= 0)
        snprintf(r, sizeof r, "%d", id->rank);
    else
        snprintf(r, sizeof r, "x");
    snprintf(m->path, sizeof m->path, "%s/tscope_r%s.prom", dir, r);
    snprintf(m->tmp, sizeof m->tmp, "%s/.tscope_r%s.prom.%d.tmp", dir, r, (int)getpid());
    escaped(job, sizeof job, id->run_id[0] ? id->run_id : "none");
    escaped(h, sizeof h, host);
    snprintf(m->labels, sizeof m->labels, "job=\"%s\",rank=\"%s\",host=\"%s\",device=\"%d\"",
             job, r, h, id->local_rank);
}

void bb_metrics_steps(bb_metrics *m, const tsc_step_summary *s, const bb_step_extra *x,
                      size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = s[i].end_ns > s[i].start_ns ? s[i].end_ns - s[i].start_ns : 0;
        double sec = ns / 1e9;
        int b = 0;
        while (b < BB_BUCKETS && sec > bounds[b])
            b++;
        m->buckets[b]++;
        m->steps++;
        m->step_ns += ns;
        m->last_step_s = sec;
        m->anomalies += (s[i].flags & TSC_STEP_F_ANOMALY) != 0;
        m->nccl_calls += s[i].nccl_calls;
        m->nccl_bytes += s[i].nccl_bytes;
        m->nccl_ns += s[i].nccl_ns;
        m->gpu_busy_ns += s[i].gpu_busy_ns;
        m->gemm_flops += x[i].gemm_flops;
        m->gemm_no_peak += x[i].gemm_no_peak;
        m->data_stall_ns += x[i].data_stall_ns;
        m->gemm_peak_ns += x[i].gemm_peak_ns;
        m->period_peak_ns += x[i].gemm_peak_ns;
        m->period_step_ns += ns;
    }
}

static void one(FILE *f, const char *name, const char *type, const char *help, const char *labels,
                double v)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %.17g\n", name, help, name, type, name,
            labels, v);
}

/* The per-op counters: one family, a series per op the rank called. */
static void per_op(FILE *f, const char *name, const char *help, const char *labels,
                   const uint64_t *v)
{
    int head = 0;
    for (unsigned op = 1; op < TSC_NCCL_STEP_OP_LIMIT; op++) {
        if (!v[op] || !tsc_nccl_op_name(op))
            continue;
        if (!head++)
            fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
        fprintf(f, "%s{%s,op=\"%s\"} %llu\n", name, labels, tsc_nccl_op_name(op),
                (unsigned long long)v[op]);
    }
}

/* tscope's own cost (docs/self-cost.md): its CPU time by part, as a
 * share of the run, bytes written, the budget's level. */
static void self_cost(FILE *f, const char *L, const tsc_cost_figure *c, uint32_t level)
{
    const char *name = "tscope_self_cpu_seconds_total";
    fprintf(f, "# HELP %s CPU time tscope itself took, by part (its threads' CPU clocks; "
               "the job's records times one record's measured cost).\n# TYPE %s counter\n",
            name, name);
    fprintf(f, "%s{%s,part=\"writer\"} %.9f\n", name, L, c->thread_ns[TSC_COST_WRITER] / 1e9);
    fprintf(f, "%s{%s,part=\"telemetry\"} %.9f\n", name, L,
            c->thread_ns[TSC_COST_TELEMETRY] / 1e9);
    if (c->slot_ps) /* omitted, not 0, before it was measured */
        fprintf(f, "%s{%s,part=\"job_records\"} %.9f\n", name, L, c->hot_ns / 1e9);
    if (c->wall_ns)
        one(f, "tscope_self_cost_ratio", "gauge",
            "tscope's CPU time over the run's wall time so far (one CPU = 1).", L,
            (double)(c->threads_ns + c->hot_ns) / (double)c->wall_ns);
    one(f, "tscope_self_written_bytes_total", "counter", "Bytes tscope wrote for this rank.", L,
        (double)c->in.bytes_written);
    one(f, "tscope_self_memory_bytes", "gauge", "Memory tscope holds for this rank.", L,
        (double)c->in.memory_bytes);
    one(f, "tscope_self_budget_level", "gauge",
        "TSCOPE_BUDGET_PCT's level: 0 full detail, higher records less.", L, (double)level);
}

/* What only GPU records give: omitted, not 0, when the capture has none. */
static void gpu_figures(FILE *f, bb_metrics *m, const bb_steps *t)
{
    const char *L = m->labels;
    if (t->gpu_copies)
        one(f, "tscope_data_stall_seconds_total", "counter",
            "GPU idle before each step's first host-to-device copy (CUPTI records).", L,
            m->data_stall_ns / 1e9);
    if (!t->gemms)
        return;
    one(f, "tscope_gemm_flops_total", "counter", "FLOPs of cuBLAS GEMM calls.", L,
        (double)m->gemm_flops);
    if (m->period_step_ns) { /* a new figure once steps were summarized */
        m->mfu = (double)m->period_peak_ns / (double)m->period_step_ns;
        m->period_peak_ns = m->period_step_ns = 0;
    }
    if (m->gemm_no_peak || !m->gemm_flops)
        return; /* a precision or device without a known peak */
    one(f, "tscope_gemm_peak_seconds_total", "counter",
        "Time the GEMMs would take at the device's peak FLOP/s.", L, m->gemm_peak_ns / 1e9);
    one(f, "tscope_mfu_ratio", "gauge",
        "GEMM time at peak over step time, in the steps summarized last period.", L, m->mfu);
}

void bb_metrics_write(bb_metrics *m, const bb_metrics_now *now)
{
    if (m->failed)
        return;
    FILE *f = fopen(m->tmp, "we");
    if (!f) {
        tsc_warn_once("bb-metrics", "cannot write %s: %s; no metrics file", m->tmp,
                      strerror(errno));
        return;
    }
    const char *L = m->labels;
    fprintf(f, "# HELP tscope_step_duration_seconds Step time (between returns of the step's "
               "opening NCCL call).\n# TYPE tscope_step_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (int b = 0; b <= BB_BUCKETS; b++) {
        cum += m->buckets[b];
        if (b < BB_BUCKETS)
            fprintf(f, "tscope_step_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", L, bounds[b],
                    (unsigned long long)cum);
        else
            fprintf(f, "tscope_step_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", L,
                    (unsigned long long)cum);
    }
    fprintf(f, "tscope_step_duration_seconds_sum{%s} %.9f\n", L, m->step_ns / 1e9);
    fprintf(f, "tscope_step_duration_seconds_count{%s} %llu\n", L, (unsigned long long)m->steps);
    one(f, "tscope_last_step_seconds", "gauge", "Time of the last summarized step.", L,
        m->last_step_s);
    one(f, "tscope_anomalous_steps_total", "counter",
        "Steps slower than TSCOPE_BB_K times the rolling median.", L, (double)m->anomalies);
    one(f, "tscope_nccl_calls_total", "counter", "NCCL calls made.", L, (double)m->nccl_calls);
    one(f, "tscope_nccl_bytes_total", "counter", "Message bytes of NCCL calls.", L,
        (double)m->nccl_bytes);
    one(f, "tscope_nccl_host_seconds_total", "counter",
        "Host time spent inside NCCL calls.", L, m->nccl_ns / 1e9);
    per_op(f, "tscope_nccl_op_calls_total", "NCCL collective and point-to-point calls by op.",
           L, now->steps->op_calls);
    per_op(f, "tscope_nccl_op_bytes_total", "Message bytes of NCCL calls by op.", L,
           now->steps->op_bytes);
    one(f, "tscope_nccl_calls_in_flight", "gauge", "NCCL calls entered and not returned.", L,
        (double)now->in_flight);
    one(f, "tscope_nccl_oldest_call_in_flight_seconds", "gauge",
        "Time since the oldest NCCL call in flight was entered (0 when none).", L,
        now->oldest_in_flight_s);
    one(f, "tscope_gpu_busy_seconds_total", "counter", "Sum of GPU kernel durations.", L,
        m->gpu_busy_ns / 1e9);
    gpu_figures(f, m, now->steps);
    one(f, "tscope_dropped_records_total", "counter",
        "Records lost to full buffers or memory limits.", L, (double)now->dropped);
    one(f, "tscope_captures_total", "counter", "Capture windows this rank wrote.", L,
        (double)now->captures);
    one(f, "tscope_capture_bytes", "gauge", "Bytes of this rank's capture windows on disk.", L,
        (double)now->capture_bytes);
    if (now->cost)
        self_cost(f, L, now->cost, now->cost_level);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(m->tmp, m->path) != 0) {
        tsc_warn_once("bb-metrics", "cannot write %s: %s; the metrics file may be stale",
                      m->path, strerror(errno));
        unlink(m->tmp);
    }
}
