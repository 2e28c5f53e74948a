/* The job-level series of `tscope-report live` (passes/bb_live.h) in the
 * Prometheus text format (docs/blackbox.md, "Live job metrics"). */
#ifndef TSA_LIVE_PROM_H
#define TSA_LIVE_PROM_H

#include <stdio.h>

#include "passes/bb_live.h"

/* job: the run id the ranks report ("" unknown); world_size: -1 unknown;
 * dropped: records the ranks dropped, over their summaries. */
void tsa_live_write_prom(FILE *out, const tsa_live *L, const char *job, int world_size);

#endif
