/* Device memory results (types only): each rank's peak reserved memory, its
 * growth across the analysed steps (leak check), the allocation churn per
 * step and the headroom against the device's memory.  The loader keeps the
 * records (load/memory_timeline.h), the memory pass measures them
 * (passes/memory.h), findings/mem.h holds the MEM.* rules.
 * docs/report.md defines every number, docs/findings.md the rules. */
#ifndef TSA_MEMORY_H
#define TSA_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* tsa_mem_event.source of a torch.profiler [memory] total (load/kineto_build.c):
 * the caching allocator's reserved bytes, as the size of one pool per
 * device.  Such records show no device allocation: the allocation counts
 * and churn of a rank that has only these are unknown, not 0. */
#define TSA_MEM_SRC_ALLOCATOR_TOTAL 0x80

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
    uint64_t nccl_peak_bytes;    /* NCCL's own buffers at most (not in peak_bytes,
                                  * taken from the headroom) */
} tsa_mem_rank;

/* Per-rank numbers of the ranks whose dumps carry memory records. */
typedef struct tsa_memory {
    tsa_mem_rank *ranks;
    size_t n_ranks;
    int32_t peak_rank;           /* rank with the highest peak, -1 none */
    uint64_t peak_bytes;
} tsa_memory;

#endif
