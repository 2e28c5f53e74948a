/* Single-producer single-consumer ring of 32-byte slots: the per-thread
 * event buffer.  The owning thread appends, the one thread holding the
 * recorder's drain lock consumes.  No locks: the producer publishes a
 * record by storing `head` after writing all its slots, so the consumer
 * never sees half a descriptor.  A full ring drops the record (counted),
 * the producer never waits. */
#ifndef TSC_RING_H
#define TSC_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

typedef struct tsc_ring {
    _Atomic uint64_t head;      /* slots ever published (producer) */
    uint64_t tail_cache;        /* producer's last view of tail */
    char pad0[48];
    _Atomic uint64_t tail;      /* slots ever consumed (consumer) */
    char pad1[56];
    _Atomic uint64_t dropped;   /* records refused because full */
    uint64_t mask;              /* capacity - 1 (capacity a power of two) */
    tsc_event *slots;
} tsc_ring;

/* Capacity: the largest power of two of slots within `bytes`, at least
 * 256 slots.  Returns 0 or -1 (no memory). */
int tsc_ring_init(tsc_ring *r, size_t bytes);
void tsc_ring_free(tsc_ring *r);

static inline uint64_t tsc_ring_capacity(const tsc_ring *r) { return r->mask + 1; }

/* Producer: reserve n contiguous-in-order slots.  Returns a pointer to the
 * first when they are contiguous in memory; otherwise NULL and the caller
 * uses tsc_ring_push.  Publish with tsc_ring_commit. */
static inline tsc_event *tsc_ring_reserve1(tsc_ring *r)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h - r->tail_cache > r->mask) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h - r->tail_cache > r->mask) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return NULL;
        }
    }
    return &r->slots[h & r->mask];
}

/* Publishes n reserved slots; returns slots now used (for the half-full
 * wake-up decision). */
static inline uint64_t tsc_ring_commit(tsc_ring *r, uint64_t n)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed) + n;
    atomic_store_explicit(&r->head, h, memory_order_release);
    return h - r->tail_cache;
}

/* Nothing published is left to consume. */
static inline int tsc_ring_is_empty(tsc_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire) ==
           atomic_load_explicit(&r->tail, memory_order_relaxed);
}

/* Producer: copy n slots in (wrapping as needed) and publish them.
 * Returns slots now used, or 0 when they did not fit (counted as one
 * dropped record). */
uint64_t tsc_ring_push(tsc_ring *r, const tsc_event *src, size_t n);

/* Consumer: copy up to max published slots into out without consuming
 * them.  Returns the count. */
size_t tsc_ring_peek(tsc_ring *r, tsc_event *out, size_t max);

/* Consumer: the published slots in place, when they lie in one piece (do
 * not wrap around the end of the ring): *first points at the oldest and
 * the count is returned; they stay valid until consumed.  0 when there are
 * none or they wrap (then use tsc_ring_peek). */
size_t tsc_ring_peek_span(tsc_ring *r, const tsc_event **first);

/* Consumer: release n slots returned by peek. */
void tsc_ring_consume(tsc_ring *r, size_t n);

#endif
