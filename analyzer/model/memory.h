/* Device memory: each rank's reserved-memory timeline (from the v1.1
 * TSC_EV_MEM_* records), its peak, its growth across the analysed steps
 * (leak check), the allocation churn per step and the headroom against the
 * device's memory; the MEM.GROWTH, MEM.NEAR_OOM and MEM.CHURN findings.
 * docs/report.md defines every number, docs/findings.md the rules.
 *
 * Reserved memory at a time t is what the process holds from the device:
 *   live bytes of cudaMalloc/cuMemAlloc and cuMemCreate (VMM) allocations
 *   + the latest size of every stream-ordered pool (TSC_EV_MEM_POOL);
 * a rank whose dump has no pool sizes counts its live stream-ordered
 * allocations instead.  This is the caching allocator's "reserved". */
#ifndef TSA_MEMORY_H
#define TSA_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "findings.h"
#include "model.h"

/* Thresholds of the rules (docs/findings.md). */
#define TSA_MEM_NEAR_OOM_SHARE 0.90     /* peak / capacity strictly over this */
#define TSA_MEM_NEAR_OOM_WARN 0.95      /* from this share on: warning */
#define TSA_MEM_GROWTH_MIN_STEPS 4      /* analysed steps needed for a leak check */
#define TSA_MEM_GROWTH_STEPS_SHARE 0.75 /* share of step-to-step changes that grew */
#define TSA_MEM_GROWTH_MIN_BYTES (1ull << 20) /* mean growth per step at least this */
#define TSA_MEM_CHURN_STEPS_SHARE 0.5   /* share of analysed steps with churn */
#define TSA_MEM_CHURN_PEAK_SHARE 0.01   /* churn bytes per step over this share of the peak */
#define TSA_MEM_MAX_POOLS 64            /* pools tracked apart; more share the last slot */

/* tsa_mem_event.source of a torch.profiler [memory] total (views/kineto):
 * the caching allocator's reserved bytes, as the size of one pool per
 * device.  Such records show no device allocation: the allocation counts
 * and churn of a rank that has only these are unknown, not 0. */
#define TSA_MEM_SRC_ALLOCATOR_TOTAL 0x80

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

/* One rank's numbers.  Times on the rank's own clock. */
typedef struct tsa_mem_rank {
    int32_t rank;
    uint64_t allocs, frees, alloc_bytes;  /* over the whole capture */
    uint64_t peak_bytes;         /* highest reserved over the capture */
    int64_t peak_ns;             /* when it was first reached */
    int peak_step;               /* index (in the rank's steps) of the step holding it, -1 none */
    size_t steps;                /* analysed steps measured */
    uint64_t first_step_bytes;   /* reserved at the end of the first analysed step */
    uint64_t last_step_bytes;    /* ... of the last */
    int64_t growth_per_step;     /* (last - first) / (steps - 1), bytes, 0 below 2 steps */
    double growth_share;         /* share of step-to-step changes that grew, NAN below 2 steps */
    double allocs_per_step;      /* device allocations (malloc, VMM) per analysed step */
    uint64_t churn_bytes_per_step; /* mean of min(allocated, freed) per analysed step */
    double churn_share;          /* share of analysed steps with churn */
    uint64_t capacity_bytes;     /* what the process could hold: free at start + its reserved
                                  * then, else the device total; 0 unknown */
    int64_t headroom_bytes;      /* capacity - peak (0 when capacity unknown) */
    double peak_share;           /* peak / capacity, NAN unknown */
    int allocs_seen;             /* 0: the records show no device allocation (only
                                  * profiler totals): allocs and churn unknown */
} tsa_mem_rank;

/* Per-rank numbers of the ranks whose dumps carry memory records. */
typedef struct tsa_memory {
    tsa_mem_rank *ranks;
    size_t n_ranks;
    int32_t peak_rank;           /* rank with the highest peak, -1 none */
    uint64_t peak_bytes;
} tsa_memory;

/* Measure one rank (sorts r->mem in place).  0, or -1 when r has no
 * memory records (out is then zeroed). */
int tsa_mem_rank_measure(tsa_rank *r, tsa_mem_rank *out);

/* Every rank of the job; 0, or -1 when out of memory. */
int tsa_memory_measure(tsa_job *job, tsa_memory *out);
void tsa_memory_free(tsa_memory *m);

/* MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN (advisory: recoverable 0). */
int tsa_memory_findings(const tsa_memory *m, tsa_findings *out);

/* The report's `memory` object (cJSON *, typed void * so this header needs
 * no cJSON): a JSON null when no rank carries memory records. */
void *tsa_memory_json(const tsa_memory *m);

/* The text report's table (rows only; the caller prints the title). */
void tsa_memory_print(FILE *out, const tsa_memory *m);

/* Loader side: one record appended to r->mem; 0, or -1 on OOM. */
int tsa_rank_add_mem(tsa_rank *r, const tsa_mem_event *e);

#endif
