/* Recoverable attribution: each recoverable nanosecond of the budget goes
 * to exactly one finding, following the blame chain, so the findings'
 * recoverable times add up to at most the job's wall.
 *
 * Order (causes before symptoms):
 *   1. late ranks (DIST.STRAGGLER, DIST.SLOW_HOST, DIST.IMBALANCE,
 *      DIST.INTERMITTENT): on the late ranks their own excess (compute
 *      overhead, data stall, host idle, then compute); on every other rank
 *      the waiting for peers; at most the rule's what-if saving per rank;
 *   2. DATA.STALL: data stall;  3. HOST.LAUNCH_BOUND: host/launch idle;
 *   4. COMM.EXPOSED: the waiting and transfer left;
 *   5. EFF.LOW_MFU: the compute overhead left;
 *   6. any other rule: what it asks for, from the lines in its `pools`
 *      (all recoverable lines when 0), out of what is left.
 * A finding's recoverable_ns = its claims summed over ranks / ranks
 * (floor), the same per-rank unit as the job wall. */
#ifndef TSA_ATTRIBUTION_H
#define TSA_ATTRIBUTION_H

#include "model/analysis.h"

/* Rewrites recoverable_ns / recoverable_s of a->findings and fills
 * a->late_rank_ns.  -1 on OOM. */
int tsa_attribute_recoverable(tsa_analysis *a);

/* 1 for the ids of findings about late ranks (the late-rank claims). */
int tsa_finding_is_late_rank(const char *id);

#endif
