/* The data stall of summarized steps (black-box mode): the GPU idle before
 * a step's first host-to-device copy (in a training loop, the batch; the
 * GPU waits while the host loads it).  Found from the records in memory
 * when the steps are summarized, in GPU time order, because draining hands
 * over a thread's kernels and the GPU stream's copies in separate runs.
 * Writer thread only. */
#ifndef TSC_BB_STALL_H
#define TSC_BB_STALL_H

#include <stddef.h>

#include "bb_steps.h"
#include "bb_store.h"

/* Steps s[0..n-1] (consecutive, oldest first, with their extras x): fill
 * x[i].data_stall_ns and x[i].h2d_copies from the GPU records of the store
 * (steps 0 and 1, whose other sums are unknown too, get none).
 * prev_start: the start of the step before s[0] (its records' ends count),
 * or s[0].start_ns when unknown. */
void bb_stall_fill(const bb_store *store, const bb_steps *t, const tsc_step_summary *s,
                   bb_step_extra *x, size_t n, uint64_t prev_start);

#endif
