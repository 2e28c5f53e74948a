/* Kernel-mix and copy findings (advisory, advisory.h): MEM.COPIES,
 * MEM.FILLS, MEM.PAGEABLE, EFF.FP32_GEMM, from the per-rank measurements of
 * passes/mix_measure.h.  docs/findings.md says how each is computed. */
#ifndef TSA_FINDINGS_MIX_H
#define TSA_FINDINGS_MIX_H

#include "model/analysis.h"
#include "passes/mix_measure.h"

/* Shares of GPU busy time (union of kernels and copies in the window);
 * a rule fires when the share is strictly over its threshold.  Memory ops
 * count where no kernel runs beside them (HTA's "MEMORY" alone): a copy
 * overlapped with compute is the healthy, prefetched case. */
#define TSA_TH_MEM_OPS 0.10     /* memcpy + memset, exposed */
#define TSA_TH_FILLS 0.05       /* memset, exposed */
#define TSA_TH_PAGEABLE 0.01    /* host-to-device copies from pageable memory */
#define TSA_TH_FP32_GEMM 0.10   /* GEMM kernels computing in plain fp32 */

/* The job's totals: the ranks' parts (their digests) added in rank order. */
int tsa_mix_measure(const tsa_analysis *a, tsa_mix *out);

int tsa_mix_findings(const tsa_analysis *a, tsa_findings *out);

#endif
