/* Advisory findings: what common profilers' rule sets flag (memory-op heavy
 * GPU time, fills, pageable copies, fp32 GEMMs, syncs inside the step,
 * every-Nth-step data stalls, memory growth, telemetry).
 *
 *   MEM.COPIES, MEM.FILLS, MEM.PAGEABLE, EFF.FP32_GEMM   mix.c
 *   HOST.SYNC                                            sync.c
 *   DATA.EVERY_NTH                                       nth.c
 *   MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN                  mem.c
 *   HW.THROTTLE, HOST.CPU_OVERSUBSCRIBED, HOST.DATALOADER  telemetry.c
 *
 * They are advisory: recoverable_s is 0.  Their time is already inside the
 * budget lines that the core and cross-rank findings attribute (copy and
 * sync bubbles are GPU idle or compute, a periodic stall is data stall), so
 * claiming it again would count a nanosecond twice. */
#ifndef TSA_FINDINGS_ADVISORY_H
#define TSA_FINDINGS_ADVISORY_H

#include "model/findings.h"

/* Severity of an advisory finding: a warning from twice its threshold. */
static inline tsa_severity tsa_advisory_level(double share, double threshold)
{
    return share >= 2 * threshold ? TSA_SEV_WARNING : TSA_SEV_INFO;
}

#endif
