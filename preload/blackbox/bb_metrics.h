/* Live metrics of black-box mode: a Prometheus text-format file per rank,
 * <TSCOPE_OUT>/metrics/tscope_r<rank>.prom, rewritten whole (temporary
 * file, then rename) every flush period, for node_exporter's textfile
 * collector or any scraper that reads files.  Writer thread only. */
#ifndef TSC_BB_METRICS_H
#define TSC_BB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "bb_steps.h"
#include "config.h"
#include "identity.h"
#include "self_cost.h"

#define BB_BUCKETS 15

typedef struct bb_metrics {
    char path[4400], tmp[4400];
    char labels[900];          /* job="..",rank="..",host="..",device=".." */
    uint64_t steps, anomalies, nccl_calls, nccl_bytes;
    uint64_t nccl_ns, gpu_busy_ns, step_ns;
    uint64_t gemm_flops, gemm_no_peak, gemm_peak_ns, data_stall_ns;
    uint64_t period_peak_ns, period_step_ns; /* GEMM time at peak, step time: this period */
    uint64_t buckets[BB_BUCKETS + 1]; /* step times per le bound, +Inf last */
    double last_step_s, mfu;
    int failed;
} bb_metrics;

/* What the writer knows besides the summarized steps when it rewrites the
 * file. */
typedef struct bb_metrics_now {
    const bb_steps *steps;     /* per-op counters; which GPU records exist */
    uint64_t captures, dropped, capture_bytes;
    uint32_t in_flight;        /* NCCL calls in flight */
    double oldest_in_flight_s; /* age of the oldest, 0 when none */
    const tsc_cost_figure *cost; /* tscope's own cost (self_cost.h) */
    uint32_t cost_level;       /* the budget's level */
} bb_metrics_now;

void bb_metrics_init(bb_metrics *m, const tsc_config *cfg, const tsc_identity *id,
                     const char *host);

/* Account steps (and their extras) as they are written to the summary. */
void bb_metrics_steps(bb_metrics *m, const tsc_step_summary *s, const bb_step_extra *x,
                      size_t n);

/* Rewrite the file. */
void bb_metrics_write(bb_metrics *m, const bb_metrics_now *now);

#endif
