/* How many kernels a dump misses, from what it holds and what the capture
 * counted (format 1.2), in one place for `info` and the report.
 *
 * A kernel is lost when its launch call is in the dump but the kernel is
 * not (CUPTI dropped it, or the process ended first), minus the launches
 * captured into a CUDA graph (they make a node, never a kernel), plus
 * kernels in chunks that failed to write.  (A kernel CUPTI handed over
 * unfinished left its call unmatched: it is among the first.)  Device records CUPTI dropped without a buffer are counted
 * apart: their kind (kernel, copy, memset) is not known.
 */
#ifndef TSR_GPU_LOSS_H
#define TSR_GPU_LOSS_H

#include <stdint.h>

typedef struct tsr_gpu_counts {
    int traced;                  /* kernels were traced (cupti_mode full) */
    uint64_t kernels;            /* kernel records in the dump */
    uint64_t launches_unmatched; /* launch calls with no kernel of their correlation id */
    uint64_t captured;           /* gpu_launches_captured */
    uint64_t incomplete;         /* gpu_records_incomplete */
    uint64_t lost_write;         /* gpu_kernels_lost_write */
    uint64_t dropped_device;     /* cupti_dropped_device_records */
} tsr_gpu_counts;

/* Take the capture's counters from one metadata pair (others ignored). */
void tsr_gpu_counts_meta(tsr_gpu_counts *c, const char *key, const char *value);

/* Kernels launched that are not in the dump (0 when kernels were not
 * traced: light mode keeps none on purpose). */
uint64_t tsr_gpu_kernels_lost(const tsr_gpu_counts *c);

/* A runtime or driver call that launches kernels, by its name
 * (cudaLaunchKernel, __cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch...). */
int tsr_is_launch_call(const char *name);

#endif
