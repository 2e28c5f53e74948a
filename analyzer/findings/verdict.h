/* The verdict: what bounds the job's step time, in one word.
 *
 * A synchronous job runs at the pace of its slowest rank.  When the
 * cross-rank pass names late ranks (a straggler, a slow host, a load
 * imbalance) and the time they cost, after the recoverable attribution,
 * is at least TSA_TH_LATE_RANK_VERDICT of the wall, the job is
 * straggler-bound whatever the other shares are: making anything else on
 * the other ranks faster only lengthens their wait.  Otherwise the largest
 * share of the wall, on the attributed (disjoint) budget, names it:
 * compute (gpu-bound, or compute-bound when there are no GPU records),
 * exposed communication, data stall or host/launch idle. */
#ifndef TSA_VERDICT_H
#define TSA_VERDICT_H

#include "model/analysis.h"

#define TSA_TH_LATE_RANK_VERDICT 0.05
/* A recoverable loss (data stall, exposed communication, host idle) of at
 * least this share of the wall names the verdict even when compute is
 * larger. */
#define TSA_TH_LOSS_VERDICT 0.25

/* Needs the attributed findings (attribution.h).  Fills a->verdict,
 * a->verdict_reason, a->verdict_rank and a->verdict_host. */
void tsa_decide_verdict(tsa_analysis *a);

/* After the findings are sorted: a straggler-bound verdict's late-rank
 * finding goes first (it sets the pace, whatever the size of the others). */
void tsa_verdict_lead(tsa_analysis *a);

#endif
