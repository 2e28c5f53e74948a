/* The job-level series of `tscope-report live` (passes/bb_live.h) in the
 * Prometheus text format (docs/blackbox.md, "Live job metrics"). */
#ifndef TSA_LIVE_PROM_H
#define TSA_LIVE_PROM_H

#include <stdio.h>

#include "load/bb_follow.h"
#include "passes/bb_live.h"

/* job: the run id the ranks report ("" unknown); world_size: -1 unknown;
 * dropped: records the ranks dropped, over their summaries. */
void tsa_live_write_prom(FILE *out, const tsa_live *L, const char *job, int world_size);

/* tscope's own cost: per rank, and over the ranks, from the cost_*
 * metadata the followed files last wrote (docs/self-cost.md). */
void tsa_live_write_self_cost(FILE *out, const tsa_bb_follow *fw, const char *job);

#endif
