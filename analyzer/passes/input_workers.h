/* DataLoader worker processes around a step-start gap, from the host
 * sampler's records (TSC_EV_TASK_CPU of role TSC_TASK_WORKER): the third
 * kind of input evidence of the data stall (rank_pass.c), beside a
 * DataLoader span and a per-step input copy. */
#ifndef TSA_INPUT_WORKERS_H
#define TSA_INPUT_WORKERS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* The workers count as busy over a gap when, over the sampler ticks that
 * enclose it, they ran on a CPU at least half of that time on average:
 * a pool that keeps up with the loop waits most of the time (its queue is
 * full), one that does not is still building the batch the loop waits for. */
#define TSA_WORKERS_BUSY 0.5

/* The worker processes seen in a rank's window: each one's samples are
 * task[first[i] .. end[i]) of its telemetry (grouped by task, in time). */
typedef struct tsa_workers {
    size_t n;
    size_t *first, *end;
} tsa_workers;

/* Finds the workers with a sample in [w0, w1]; none (n 0) without worker
 * telemetry.  -1 on OOM. */
int tsa_workers_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_workers *out);
void tsa_workers_free(tsa_workers *w);

/* The workers' mean CPU use (1 = one CPU each) over the sampler ticks
 * enclosing [s, e): the last process sample at or before s to the first
 * at or after e.  -1 when no workers were seen or no ticks enclose it. */
double tsa_workers_cpus(const tsa_rank *r, const tsa_workers *w, int64_t s, int64_t e);

#endif
