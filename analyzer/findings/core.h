/* Findings of the budget and the load (the core family): COMM.EXPOSED,
 * DATA.STALL, HOST.LAUNCH_BOUND, EFF.LOW_MFU, STEP.IRREGULAR, LOAD.PROBLEMS,
 * LOAD.DROPPED, LOAD.KERNELS_LOST, LOAD.OTHER_RUNS.
 * Thresholds are documented in docs/report.md (the host idle ones are in
 * idle.h). */
#ifndef TSA_FINDINGS_CORE_H
#define TSA_FINDINGS_CORE_H

#include "model/analysis.h"

#define TSA_TH_EXPOSED_WARN 0.10
#define TSA_TH_EXPOSED_CRIT 0.30
#define TSA_TH_STALL_WARN 0.05
#define TSA_TH_STALL_CRIT 0.20
#define TSA_TH_MFU_WARN 0.25
#define TSA_TH_MFU_INFO 0.40
#define TSA_TH_STEP_CV 0.15

int tsa_core_findings(const tsa_analysis *a, tsa_findings *out);

#endif
