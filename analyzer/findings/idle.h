/* HOST.LAUNCH_BOUND, HOST.BLOCKING, HOST.CPU_BOUND: the GPU idles while the
 * host is busy; one finding, named after the cause that holds the most of
 * the host idle line (idle.c). */
#ifndef TSA_FINDINGS_IDLE_H
#define TSA_FINDINGS_IDLE_H

#include "model/analysis.h"

/* Share of the budget on the host idle line (docs/report.md). */
#define TSA_TH_HOST_WARN 0.10
#define TSA_TH_HOST_CRIT 0.30

int tsa_idle_findings(const tsa_analysis *a, tsa_findings *out);

/* The id of that finding (whether emitted or not) and, in *what, its
 * "while the host ..." phrase. */
const char *tsa_host_idle_finding(const tsa_analysis *a, const char **what);

#endif
