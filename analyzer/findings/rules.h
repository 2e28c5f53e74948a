/* The rule families the report runs over an analysis, in this order (the
 * order findings are added; the report sorts them afterwards).  A family
 * is one file, findings/<name>.c, defining
 *     int tsa_<name>_findings(const tsa_analysis *a, tsa_findings *out);
 * that adds its findings (0, or -1 when out of memory).  Adding a family:
 * that file, one line here, one line in meson.build (docs/architecture.md).
 *
 * Not here: DIST.* come from the cross-rank pass (crossrank/xr_findings.c,
 * they need its matched instances) and DIST.HANG, DIST.DESYNC,
 * RANK.EXITED_EARLY from the hang analysis (hang/), after attribution. */
#ifndef TSA_FINDINGS_RULES_H
#define TSA_FINDINGS_RULES_H

#include "model/analysis.h"

#define TSA_FINDING_FAMILIES(X)                                                  \
    X(core)      /* COMM.EXPOSED, DATA.STALL, HOST.LAUNCH_BOUND, EFF.LOW_MFU, ... */ \
    X(data)      /* LOAD.LOST_WRITES, LOAD.DUPLICATE_RANK */                      \
    X(mix)       /* MEM.COPIES, MEM.FILLS, MEM.PAGEABLE, EFF.FP32_GEMM */         \
    X(sync)      /* HOST.SYNC */                                                  \
    X(nth_stall) /* DATA.EVERY_NTH */                                             \
    X(mem)       /* MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN */                        \
    X(telemetry) /* HW.THROTTLE, HOST.CPU_OVERSUBSCRIBED, HOST.DATALOADER */ \
    X(netlink)   /* NET.SLOW_LINK */

#define TSA_FINDING_FAMILY_DECL(name) \
    int tsa_##name##_findings(const tsa_analysis *a, tsa_findings *out);
TSA_FINDING_FAMILIES(TSA_FINDING_FAMILY_DECL)
#undef TSA_FINDING_FAMILY_DECL

/* Every family, in order; 0, or -1 when out of memory. */
int tsa_findings_run(const tsa_analysis *a, tsa_findings *out);

#endif
