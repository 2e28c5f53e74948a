/* HOST.SYNC: blocking host synchronisations inside the analysed steps
 * (advisory.h; measured per rank by passes/sync_measure.h). */
#ifndef TSA_FINDINGS_SYNC_H
#define TSA_FINDINGS_SYNC_H

#include "model/analysis.h"

/* Share of wall time the GPU sits idle right after in-step host syncs. */
#define TSA_TH_SYNC_IDLE 0.01

int tsa_sync_findings(const tsa_analysis *a, tsa_findings *out);

#endif
