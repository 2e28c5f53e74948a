/* What HOST.SYNC (findings/sync.h) measures on one rank. */
#ifndef TSA_SYNC_MEASURE_H
#define TSA_SYNC_MEASURE_H

#include <stdint.h>

#include "model/analysis.h"

/* HOST.SYNC totals over the ranks measured (sync_measure.c). */
typedef struct tsa_sync_totals {
    uint64_t syncs;
    int64_t host_ns;            /* host time blocked in them */
    int64_t idle_ns;            /* GPU idle after them (the bubbles) */
    int64_t wall_ns;            /* windows of the ranks measured */
    uint64_t steps;             /* analysed steps of the ranks measured */
} tsa_sync_totals;

/* Adds one rank's part to t (rr: its window and step method).  -1 on OOM. */
int tsa_sync_measure_rank(const tsa_rank *r, const tsa_rank_result *rr, tsa_sync_totals *t);

#endif
