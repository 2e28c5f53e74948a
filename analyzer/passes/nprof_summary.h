/* What NCCL's profiler plugin saw in a job, summed over the ranks: its
 * collectives (by kernel or by the copy engines) and how many joined
 * their NCCL call, the kernel channels' GPU time, what the plugin could
 * not record, the operations it ran for other processes (PXN), and the
 * collectives without an NCCL call (replayed from CUDA graphs), grouped
 * with their steps.  Read by the report (report/plugin_text.c). */
#ifndef TSA_PASSES_NPROF_SUMMARY_H
#define TSA_PASSES_NPROF_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "load/nprof_lean.h"   /* tsa_np_replay */
#include "model/model.h"

typedef struct tsa_np_summary {
    size_t ranks;           /* ranks with plugin records */
    int version_min, version_max;
    size_t colls, ce_colls, p2p;   /* collectives (of them by the copy engines), send/recv */
    size_t joined, no_call, captured_calls;
    size_t kch;             /* kernel channel records */
    int kch_gpu;            /* 1 when some carry GPU timer times (v4+) */
    double kernel_ns_median, kernel_ns_p95; /* GPU time per collective; -1 none */
    size_t proxies;
    uint64_t lost, pxn_ops;
    tsa_np_replay *replays; size_t n_replays;
} tsa_np_summary;

/* 0, or -1 when out of memory (out is then empty). */
int tsa_np_summarize(const tsa_job *job, tsa_np_summary *out);
void tsa_np_summary_free(tsa_np_summary *s);

/* 1 when some rank has plugin records or counters. */
int tsa_np_any(const tsa_job *job);

#endif
