/* DATA.EVERY_NTH: data stalls that come back every Nth step (advisory.h). */
#ifndef TSA_FINDINGS_NTH_H
#define TSA_FINDINGS_NTH_H

#include "model/analysis.h"

/* A step is stalled when its data stall is over this share of the rank's
 * median step time; DATA.EVERY_NTH needs this many stalled steps. */
#define TSA_TH_NTH_STALL 0.10
#define TSA_NTH_MIN_STALLED 3

int tsa_nth_stall_findings(const tsa_analysis *a, tsa_findings *out);

#endif
