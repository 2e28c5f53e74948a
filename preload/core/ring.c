#include "ring.h"

#include <stdlib.h>
#include <string.h>

int tsc_ring_init(tsc_ring *r, size_t bytes)
{
    memset(r, 0, sizeof *r);
    uint64_t cap = 256;
    while (cap * 2 * TSC_SLOT_SIZE <= bytes)
        cap *= 2;
    r->slots = calloc(cap, TSC_SLOT_SIZE);
    if (!r->slots)
        return -1;
    r->mask = cap - 1;
    return 0;
}

void tsc_ring_free(tsc_ring *r)
{
    free(r->slots);
    r->slots = NULL;
}

uint64_t tsc_ring_push(tsc_ring *r, const tsc_event *src, size_t n)
{
    uint64_t cap = r->mask + 1;
    if (n == 0 || n > cap)
        goto drop;
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h + n - r->tail_cache > cap) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + n - r->tail_cache > cap)
            goto drop;
    }
    uint64_t pos = h & r->mask;
    uint64_t first = cap - pos < n ? cap - pos : n;
    memcpy(&r->slots[pos], src, first * TSC_SLOT_SIZE);
    if (first < n)
        memcpy(&r->slots[0], src + first, (n - first) * TSC_SLOT_SIZE);
    return tsc_ring_commit(r, n);
drop:
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
    return 0;
}

size_t tsc_ring_peek(tsc_ring *r, tsc_event *out, size_t max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t n = h - t;
    if (n > max)
        n = max; /* callers pass max >= capacity, so records stay whole */
    uint64_t cap = r->mask + 1, pos = t & r->mask;
    uint64_t first = cap - pos < n ? cap - pos : n;
    memcpy(out, &r->slots[pos], first * TSC_SLOT_SIZE);
    if (first < n)
        memcpy(out + first, &r->slots[0], (n - first) * TSC_SLOT_SIZE);
    return (size_t)n;
}

size_t tsc_ring_peek_span(tsc_ring *r, const tsc_event **first)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t n = h - t, pos = t & r->mask;
    *first = NULL;
    if (n == 0 || pos + n > r->mask + 1)
        return 0;
    *first = &r->slots[pos];
    return (size_t)n;
}

void tsc_ring_consume(tsc_ring *r, size_t n)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, t + n, memory_order_release);
}
