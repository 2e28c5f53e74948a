/* A rank's device memory records (v1.1 TSC_EV_MEM_*): kept while loading,
 * then walked in time order for the reserved bytes at each instant.
 *
 * Reserved memory at a time t is what the process holds from the device:
 *   live bytes of cudaMalloc/cuMemAlloc and cuMemCreate (VMM) allocations
 *   + the latest size of every stream-ordered pool (TSC_EV_MEM_POOL);
 * a rank whose dump has no pool sizes counts its live stream-ordered
 * allocations instead.  This is the caching allocator's "reserved". */
#ifndef TSA_MEMORY_TIMELINE_H
#define TSA_MEMORY_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

#define TSA_MEM_MAX_POOLS 64            /* pools tracked apart; more share the last slot */

/* Reserved memory while walking a rank's sorted events. */
typedef struct tsa_mem_walk {
    int use_pool_sizes;          /* the rank's dump carries pool sizes */
    uint64_t direct;             /* live malloc + VMM bytes */
    uint64_t async_live;         /* live stream-ordered bytes */
    uint64_t pool_id[TSA_MEM_MAX_POOLS], pool_bytes[TSA_MEM_MAX_POOLS];
    size_t n_pools;
    uint64_t pool_sum;
} tsa_mem_walk;

/* use_pool_sizes: 1 when any TSA_MEM_POOL event exists (tsa_mem_has_pools). */
void tsa_mem_walk_init(tsa_mem_walk *w, int use_pool_sizes);
void tsa_mem_walk_apply(tsa_mem_walk *w, const tsa_mem_event *e);
uint64_t tsa_mem_walk_reserved(const tsa_mem_walk *w);
int tsa_mem_has_pools(const tsa_mem_event *ev, size_t n);

/* Sort by time; at one instant frees, then pool sizes, then allocations
 * (the lower, conservative peak). */
void tsa_mem_sort(tsa_mem_event *ev, size_t n);

/* Loader side: one record appended to r->mem; 0, or -1 on OOM. */
int tsa_rank_add_mem(tsa_rank *r, const tsa_mem_event *e);

#endif
