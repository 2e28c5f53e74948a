/* Completed CUPTI buffers waiting for the writer thread.
 *
 * CUPTI hands a full buffer back on its worker thread, or on the thread
 * that called cuptiActivityFlushAll; neither should translate it there
 * (the worker would fall behind, an application thread would pay for
 * it).  The buffer is queued as it is and the writer thread, which alone
 * translates buffers and writes them to the dump, takes it from here.
 * Every queued buffer came from the pool, so the queue can never hold
 * more than the pool's maximum: pushing never fails and never waits.
 */
#ifndef TSC_BUFFER_QUEUE_H
#define TSC_BUFFER_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsc_done_buffer {
    uint8_t *buf;
    size_t valid;
} tsc_done_buffer;

void tsc_bq_push(uint8_t *buf, size_t valid);

/* Up to max buffers, oldest first; returns how many. */
size_t tsc_bq_pop(tsc_done_buffer *out, size_t max);

/* Buffers queued now. */
size_t tsc_bq_depth(void);

#endif
