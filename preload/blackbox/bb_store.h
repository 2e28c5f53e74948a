/* Black-box mode's memory: the records of the last steps, kept in one
 * bounded ring per process instead of being written, and every descriptor
 * ever defined (a window written later must define what its records refer
 * to, however long ago that was).  Used only by the writer thread, under
 * the recorder's drain lock: no locking of its own. */
#ifndef TSC_BB_STORE_H
#define TSC_BB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dump_file.h"
#include "tsc_format.h"

typedef struct bb_store {
    tsc_event *ring;        /* blocks: a head slot (kind 0) then its events */
    uint64_t mask;          /* ring capacity - 1 */
    uint64_t head, tail;    /* slots ever appended / evicted */
    uint64_t oldest_ns;     /* earliest start of what is still kept (0: nothing yet) */
    tsc_event *descs;       /* blocks of descriptor slots, same layout, never evicted */
    size_t ndesc, desc_cap, desc_max;
    uint64_t dropped;       /* records that did not fit (too large, archive full) */
} bb_store;

/* ring_bytes of records (rounded down to a power of two of slots) and at
 * most desc_bytes of descriptors.  0, or -1 without memory. */
int bb_store_init(bb_store *s, size_t ring_bytes, size_t desc_bytes);
void bb_store_free(bb_store *s);

/* Take n slots one thread produced (descriptors and events, as drained):
 * descriptors go to the archive, events to the ring, evicting the oldest
 * blocks as needed.  Returns the number of events kept. */
uint64_t bb_store_take(bb_store *s, uint32_t tid, const tsc_event *slots, size_t n);

/* Evict blocks whose every record started before cutoff_ns. */
void bb_store_evict_before(bb_store *s, uint64_t cutoff_ns);

/* Call fn(ctx, tid, event) for every event kept that started in
 * (lo_ns, hi_ns], in the order they were taken. */
typedef void (*bb_store_visit_fn)(void *ctx, uint32_t tid, const tsc_event *e);
void bb_store_visit(const bb_store *s, uint64_t lo_ns, uint64_t hi_ns, bb_store_visit_fn fn,
                    void *ctx);

/* Write every descriptor, then the events that started in (lo_ns, hi_ns],
 * as EVENTS chunks of their threads.  Returns the events written, or -1
 * when a write failed. */
long long bb_store_write_range(const bb_store *s, tsc_dump *d, uint64_t lo_ns, uint64_t hi_ns);

/* Bytes of memory the store holds (tscope's own cost: memory held). */
size_t bb_store_bytes(const bb_store *s);

#endif
