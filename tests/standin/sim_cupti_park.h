/* Test option of the stand-in CUPTI: STANDIN_WORKER_PARKS=1 makes its
 * worker stop with every batch of finished work it has taken out of
 * flight and not yet written into a buffer, until a flush is waiting for
 * that batch or a flush has ended (10 s at most).  A worker descheduled at
 * that moment under CPU load does the same by chance; this makes the
 * moment certain, so a test can show that a flush (above all the forced
 * one at exit) still hands over every record. */
#ifndef SIM_CUPTI_PARK_H
#define SIM_CUPTI_PARK_H

#include <stdint.h>

/* Whether the option is on (read once). */
int simp_enabled(void);

/* The worker, before it takes a batch: the moment a park starts from. */
uint64_t simp_mark(void);

/* The worker, batch in hand: wait until a flush waits for it, or a flush
 * has ended since mark. */
void simp_park(uint64_t mark);

/* Batches the worker held until a flush (STANDIN_TRUTH: parked_batches). */
uint64_t simp_parked_batches(void);

/* A flush begins (1) or ends (-1) waiting for the batch in transit. */
void simp_flush_waiting(int delta);

/* A flush has ended. */
void simp_flush_ended(void);

#endif
