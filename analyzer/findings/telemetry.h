/* HW.THROTTLE, HOST.CPU_OVERSUBSCRIBED and HOST.DATALOADER from the
 * telemetry samples (telemetry.c; thresholds in docs/report.md). */
#ifndef TSA_FINDINGS_TELEMETRY_H
#define TSA_FINDINGS_TELEMETRY_H

#include "model/analysis.h"
#include "load/rank_telemetry.h"

/* Share of the window with power/thermal clock-event reasons set. */
#define TSA_TH_THROTTLE_SHARE 0.05
/* ... while the mean SM clock is this far below the device's maximum. */
#define TSA_TH_THROTTLE_CLOCK_DROP 0.05
/* Mean runnable threads over the CPUs the process may use. */
#define TSA_TH_OVERSUB 1.25
/* Host samples a window needs before a host finding may fire. */
#define TSA_TELEMETRY_MIN_SAMPLES 3
/* A DataLoader worker using this share of a CPU is saturated. */
#define TSA_TH_WORKER_SATURATED 0.85

int tsa_telemetry_findings(const tsa_analysis *a, tsa_findings *out);

#endif
