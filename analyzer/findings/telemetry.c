/* Hardware and host findings from the telemetry samples: HW.THROTTLE,
 * HOST.CPU_OVERSUBSCRIBED, HOST.DATALOADER (docs/findings.md).  Advisory:
 * recoverable 0, their time already lives in the budget lines the core and
 * cross-rank findings attribute; HW.THROTTLE also becomes the evidence of
 * the DIST.STRAGGLER finding when it names the same rank. */
#include "telemetry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "advisory.h"
#include "tsc_format.h"

static const char *role_label(const tsa_task_use *u)
{
    static const char *const roles[] = {"", "main thread", "autograd", "NCCL", "worker", "tscope"};
    return u->role < sizeof roles / sizeof roles[0] && u->role ? roles[u->role] : u->name;
}

/* "tsc-testbed-ran (main thread) 0.52, burner 0.47" */
static void top_list(const tsa_cpu_window *c, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < c->n_top && at + 1 < cap; i++) {
        int n = snprintf(buf + at, cap - at, "%s%s %.0f%%", i ? ", " : "", role_label(&c->top[i]),
                         100 * c->top[i].cpus);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

/* Appends the throttle evidence to the straggler finding of that rank. */
static int cite_in_straggler(tsa_findings *out, int rank, const tsa_gpu_window *g)
{
    for (size_t i = 0; i < out->n; i++) {
        tsa_finding *f = &out->items[i];
        if (strcmp(f->id, "DIST.STRAGGLER") || f->rank != rank)
            continue;
        char extra[256];
        snprintf(extra, sizeof extra,
                 "; evidence: its GPU was held down by %s for %.0f%% of the window "
                 "(SM clock %.0f of %u MHz, HW.THROTTLE)",
                 tsa_throttle_cause(g->reasons), 100 * g->throttled_share, g->sm_clock_mean,
                 g->max_sm_clock);
        size_t l = strlen(f->title);
        char *t = realloc(f->title, l + strlen(extra) + 1);
        if (!t)
            return -1;
        memcpy(t + l, extra, strlen(extra) + 1);
        f->title = t;
        tsa_finding_number(f, "throttled_share", g->throttled_share);
    }
    return 0;
}

static int throttle(const tsa_analysis *a, size_t i, tsa_findings *out)
{
    const tsa_rank_result *rr = &a->ranks[i];
    tsa_gpu_window g;
    tsa_gpu_window_of(&a->job->ranks[i], rr->window_start_ns, rr->window_end_ns, &g);
    if (!g.have || g.throttled_share < TSA_TH_THROTTLE_SHARE)
        return 0;
    /* The reasons alone are not a slowdown: the clock must be down too. */
    if (g.sm_clock_mean > 0 && g.max_sm_clock &&
        g.sm_clock_mean > (1 - TSA_TH_THROTTLE_CLOCK_DROP) * g.max_sm_clock)
        return 0;
    tsa_finding *f = tsa_findings_add(
        out, "HW.THROTTLE", tsa_advisory_level(g.throttled_share, TSA_TH_THROTTLE_SHARE), 0,
        rr->rank,
        "Check the node's cooling, power cap and GPU health (nvidia-smi -q -d "
        "PERFORMANCE,TEMPERATURE,POWER); if it persists, drain the node: one throttled GPU "
        "sets the pace of every rank",
        "rank %d%s%s%s: GPU %d clocks held down by %s for %.0f%% of the window "
        "(SM clock %.0f MHz mean, %u MHz min, %u MHz max; %u C peak, %.0f W peak)",
        rr->rank, rr->host ? " (" : "", rr->host ? rr->host : "", rr->host ? ")" : "", g.device,
        tsa_throttle_cause(g.reasons), 100 * g.throttled_share, g.sm_clock_mean,
        g.sm_clock_min, g.max_sm_clock, g.temp_max, g.power_max_w);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "GPU telemetry samples of device %d in rank %d's window: throttle "
                            "reasons set %.0f%% of the time (threshold %.0f%%)", g.device, rr->rank,
                         100 * g.throttled_share, 100 * TSA_TH_THROTTLE_SHARE);
    if (g.sm_clock_mean > 0 && g.max_sm_clock)
        tsa_finding_evidence(f, "SM clock %.0f MHz mean against %u MHz max: down by at least "
                                "%.0f%%", g.sm_clock_mean, g.max_sm_clock,
                             100 * TSA_TH_THROTTLE_CLOCK_DROP);
    else
        tsa_finding_evidence(f, "SM clock not recorded: the throttle reasons alone");
    tsa_finding_number(f, "throttled_share", g.throttled_share);
    tsa_finding_number(f, "sm_clock_mean_mhz", g.sm_clock_mean);
    tsa_finding_number(f, "max_sm_clock_mhz", g.max_sm_clock);
    tsa_finding_number(f, "temp_max_c", g.temp_max);
    tsa_finding_number(f, "power_max_w", g.power_max_w);
    tsa_finding_number(f, "reasons", (double)g.reasons);
    return cite_in_straggler(out, rr->rank, &g);
}

static int oversubscribed(const tsa_analysis *a, size_t i, const tsa_cpu_window *c,
                          tsa_findings *out)
{
    const tsa_rank_result *rr = &a->ranks[i];
    if (!c->have || c->samples < TSA_TELEMETRY_MIN_SAMPLES || c->limit_cpus <= 0)
        return 0;
    double over = c->runnable_mean / c->limit_cpus;
    if (over <= TSA_TH_OVERSUB || c->runnable_mean - c->limit_cpus < 0.5)
        return 0;
    char top[256], quota[32];
    top_list(c, top, sizeof top);
    if (c->quota_cpus > 0)
        snprintf(quota, sizeof quota, "%.2g", c->quota_cpus);
    else
        snprintf(quota, sizeof quota, "none");
    const struct tsa_telemetry *tm = a->job->ranks[i].telemetry;
    tsa_finding *f = tsa_findings_add(
        out, "HOST.CPU_OVERSUBSCRIBED", over >= 2 * TSA_TH_OVERSUB ? TSA_SEV_WARNING : TSA_SEV_INFO,
        0, rr->rank,
        "Give the process the CPUs its threads need (cgroup quota, taskset/numactl, "
        "--cpus-per-task) or run fewer threads: OMP_NUM_THREADS and torch.set_num_threads "
        "to CPUs per rank, fewer DataLoader workers, no stray busy threads",
        "rank %d%s%s%s: %.1f runnable threads on average for %.3g CPU(s) (cgroup quota %s, "
        "affinity %d of %d CPUs, OMP_NUM_THREADS %s): threads wait for a CPU; process busy "
        "%.0f%%, busiest: %s",
        rr->rank, rr->host ? " (" : "", rr->host ? rr->host : "", rr->host ? ")" : "",
        c->runnable_mean, c->limit_cpus, quota, c->affinity_cpus, c->online_cpus,
        tm && tm->omp_threads[0] ? tm->omp_threads : "unknown", c->busy_pct, top);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "CPU telemetry samples of rank %d: %zu, runnable threads %.1f mean",
                         rr->rank, (size_t)c->samples, c->runnable_mean);
    tsa_finding_evidence(f, "CPUs the process may use: %.3g (cgroup quota and affinity), ratio "
                            "%.2f against the threshold %.2f", c->limit_cpus, over, TSA_TH_OVERSUB);
    tsa_finding_number(f, "runnable_mean", c->runnable_mean);
    tsa_finding_number(f, "cpu_limit", c->limit_cpus);
    tsa_finding_number(f, "busy_pct", c->busy_pct);
    tsa_finding_number(f, "quota_cpus", c->quota_cpus);
    tsa_finding_number(f, "affinity_cpus", c->affinity_cpus);
    tsa_finding_number(f, "threads", c->threads);
    return 0;
}

static int dataloader(const tsa_analysis *a, size_t i, const tsa_cpu_window *c,
                      tsa_findings *out)
{
    const tsa_rank_result *rr = &a->ranks[i];
    int64_t wall = rr->budget.wall_ns;
    if (!c->have || wall <= 0)
        return 0;
    double stall = (double)rr->budget.line_ns[TSA_BL_DATA_STALL] / (double)wall;
    if (stall < TSA_TH_STALL_WARN)
        return 0;
    int none = c->workers == 0;
    const struct tsa_telemetry *tm = a->job->ranks[i].telemetry;
    if (none && tm && tm->workers_visible == 0)
        return 0; /* the host could not list child processes: unknown, not none */
    if (!none && c->worker_cpus_mean < TSA_TH_WORKER_SATURATED)
        return 0;
    tsa_finding *f = tsa_findings_add(
        out, "HOST.DATALOADER", tsa_advisory_level(stall, TSA_TH_STALL_WARN), 0, rr->rank,
        none ? "Load data in DataLoader worker processes (num_workers > 0, pin_memory=True, "
               "persistent_workers=True) so the next batch is ready when the step ends"
             : "The workers are CPU-bound: add workers if CPUs are free, make the transforms "
               "cheaper (decode once, cache, GPU augmentation) or move them off the step's path",
        none ? "rank %d: data stall is %.1f%% of the window and the process has no DataLoader "
               "workers: the training process loads every batch itself"
             : "rank %d: data stall is %.1f%% of the window while its %zu DataLoader workers are "
               "saturated (%.0f%% CPU each)",
        rr->rank, 100 * stall, c->workers, 100 * c->worker_cpus_mean);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "data stall line of rank %d's budget: %.1f%% of the window "
                            "(threshold %.0f%%)", rr->rank, 100 * stall, 100 * TSA_TH_STALL_WARN);
    tsa_finding_evidence(f, "DataLoader worker processes in the CPU telemetry: %zu, %.0f%% CPU "
                            "each on average", c->workers, 100 * c->worker_cpus_mean);
    tsa_finding_number(f, "data_stall_share", stall);
    tsa_finding_number(f, "workers", (double)c->workers);
    tsa_finding_number(f, "worker_cpu_mean", c->worker_cpus_mean);
    return 0;
}

int tsa_telemetry_findings(const tsa_analysis *a, tsa_findings *out)
{
    for (size_t i = 0; i < a->n_ranks && i < a->job->n_ranks; i++) {
        const tsa_rank_result *rr = &a->ranks[i];
        tsa_cpu_window c;
        tsa_cpu_window_of(&a->job->ranks[i], rr->window_start_ns, rr->window_end_ns, &c);
        if (throttle(a, i, out) || oversubscribed(a, i, &c, out) || dataloader(a, i, &c, out))
            return -1;
    }
    return 0;
}
