/* Advisory findings from the kernel mix, the copies and the host's
 * synchronisations: what common profilers' rule sets flag (memory-op heavy
 * GPU time, fills, pageable copies, fp32 GEMMs, syncs inside the step,
 * every-Nth-step data stalls).
 *
 *   MEM.COPIES, MEM.FILLS, MEM.PAGEABLE, EFF.FP32_GEMM   findings_mix.c
 *   HOST.SYNC                                            findings_sync.c
 *   DATA.EVERY_NTH                                       findings_nth.c
 *   MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN                  findings_mem.c (memory.h)
 *
 * They are advisory: recoverable_s is 0.  Their time is already inside the
 * budget lines that the core and cross-rank findings attribute (copy and
 * sync bubbles are GPU idle or compute, a periodic stall is data stall), so
 * claiming it again would count a nanosecond twice.  docs/findings.md says
 * how each is computed. */
#ifndef TSA_FINDINGS_MIX_H
#define TSA_FINDINGS_MIX_H

#include "model/analysis.h"

/* Shares of GPU busy time (union of kernels and copies in the window);
 * a rule fires when the share is strictly over its threshold.  Memory ops
 * count where no kernel runs beside them (HTA's "MEMORY" alone): a copy
 * overlapped with compute is the healthy, prefetched case. */
#define TSA_TH_MEM_OPS 0.10     /* memcpy + memset, exposed */
#define TSA_TH_FILLS 0.05       /* memset, exposed */
#define TSA_TH_PAGEABLE 0.01    /* host-to-device copies from pageable memory */
#define TSA_TH_FP32_GEMM 0.10   /* GEMM kernels computing in plain fp32 */
/* Share of wall time the GPU sits idle right after in-step host syncs. */
#define TSA_TH_SYNC_IDLE 0.01
/* A step is stalled when its data stall is over this share of the rank's
 * median step time; DATA.EVERY_NTH needs this many stalled steps. */
#define TSA_TH_NTH_STALL 0.10
#define TSA_NTH_MIN_STALLED 3

/* Kernel-mix totals over the ranks whose dumps carry compute kernels (a
 * light-mode capture records only NCCL kernels: its mix would be wrong). */
typedef struct tsa_mix {
    size_t ranks;               /* ranks measured */
    int64_t gpu_ns;             /* union of kernels and copies, windows */
    int64_t mem_ns;             /* union of memcpy and memset records */
    int64_t mem_exposed_ns;     /* the part of it with no kernel running */
    int64_t fill_exposed_ns;    /* memset records with no kernel running */
    int64_t pageable_ns;        /* union of pageable host-to-device copies */
    uint64_t pageable_count, pageable_bytes;
    int64_t fp32_gemm_ns;       /* union of fp32 GEMM kernels */
    int64_t dir_ns[7];          /* copy time by tsa_copy_dir (durations summed) */
} tsa_mix;

/* Adds one rank's part (window [w0, w1)) to m.  -1 on OOM. */
int tsa_mix_measure_rank(const tsa_rank *r, int64_t w0, int64_t w1, tsa_mix *m);
/* The job's totals: the ranks' parts (their digests) added in rank order. */
int tsa_mix_measure(const tsa_analysis *a, tsa_mix *out);

/* HOST.SYNC totals over the ranks measured (findings_sync.c). */
typedef struct tsa_sync_totals {
    uint64_t syncs;
    int64_t host_ns;            /* host time blocked in them */
    int64_t idle_ns;            /* GPU idle after them (the bubbles) */
    int64_t wall_ns;            /* windows of the ranks measured */
    uint64_t steps;             /* analysed steps of the ranks measured */
} tsa_sync_totals;

/* Adds one rank's part to t (rr: its window and step method).  -1 on OOM. */
int tsa_sync_measure_rank(const tsa_rank *r, const tsa_rank_result *rr, tsa_sync_totals *t);

/* Each adds its findings (if any) to out; 0, or -1 when out of memory. */
int tsa_mix_findings(const tsa_analysis *a, tsa_findings *out);
int tsa_sync_findings(const tsa_analysis *a, tsa_findings *out);
int tsa_nth_stall_findings(const tsa_analysis *a, tsa_findings *out);

/* All of the above: the one hook in tsa_analyze. */
int tsa_advisory_findings(const tsa_analysis *a, tsa_findings *out);

/* Severity of an advisory finding: a warning from twice its threshold. */
static inline tsa_severity tsa_advisory_level(double share, double threshold)
{
    return share >= 2 * threshold ? TSA_SEV_WARNING : TSA_SEV_INFO;
}

/* 1 when `token` occurs in `name` bounded by non-alphanumerics (or the
 * ends): "sgemm" in "volta_sgemm_128x64_nn", not in "s1688gemm". */
int tsa_name_has_token(const char *name, const char *token);

#endif
