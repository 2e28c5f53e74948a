/* CUPTI activity buffers: a bounded pool, reused.
 *
 * CUPTI asks for a buffer whenever it fills one, on whatever thread is
 * writing a record, often an application thread: the answer must be
 * immediate.  Buffers come back to the pool once the writer thread has
 * translated them (buffer_queue.h), so a burst is absorbed by at most
 * `max` buffers in flight; beyond that the request is refused, CUPTI
 * drops records and counts them, and so does tscope.  Reuse spares a
 * fresh allocation (and its page faults) per buffer.
 */
#ifndef TSC_BUFFER_POOL_H
#define TSC_BUFFER_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsc_pool_stats {
    uint64_t given;        /* buffers handed to CUPTI */
    uint64_t refused;      /* requests refused: all buffers in use */
    uint32_t allocated;    /* buffers allocated so far (never freed) */
    uint32_t in_use;       /* given and not yet back */
    uint32_t in_use_peak;
} tsc_pool_stats;

/* Buffers of buf_bytes, at most max of them.  Call before the first get. */
void tsc_pool_configure(size_t buf_bytes, unsigned max);

/* A free buffer (allocating one while fewer than max exist), or NULL.
 * *size receives the buffer's size.  Never blocks for long. */
uint8_t *tsc_pool_get(size_t *size);

/* Give a buffer from tsc_pool_get back. */
void tsc_pool_put(uint8_t *buf);

tsc_pool_stats tsc_pool_get_stats(void);

#endif
