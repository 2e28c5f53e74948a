/* Where the own-cost budget's levels thinned the records the figures rest
 * on (docs/self-cost.md, "What the report does with a step"): found once,
 * before the analysis window is set, so that every figure follows the one
 * cut the window takes from it. */
#ifndef TSA_RECORDS_CUT_H
#define TSA_RECORDS_CUT_H

#include "model/analysis.h"

/* a->kernels_cut (the first step to light, and how many of that rank's
 * steps ended before it) and a->plugin_cut (the first step to fewer NCCL
 * plugin events).  Reads the ranks' steps: after stage 1.  -1 on OOM. */
int tsa_records_cut_find(tsa_analysis *a);

#endif
