/* Device memory records of the ground-truth generator (gen_job.h): what
 * each rank allocates and frees, and the exact answers of the memory pass.
 *
 * Every rank (GPU mode, when any mem_* option is set):
 *   t0 + 500 ms        cudaMalloc mem_base                    (start-up)
 *   t0 + 600 ms        pool created holding mem_pool bytes    (if mem_pool)
 * in each step k, with begin = first compute instant, ce = compute end:
 *   begin + 1000 ns    cudaMalloc mem_leak, never freed       (leaking ranks)
 *   begin + 2000 ns    cudaMalloc mem_churn                   (if mem_churn)
 *   begin + 3000 ns    cudaMallocAsync mem_pool / 2 + pool size (if mem_pool)
 *   begin + 4000 ns    cudaFreeAsync of it + pool size        (if mem_pool)
 *   ce - 1000 ns       cudaFree mem_churn                     (if mem_churn)
 * so reserved memory at the end of step k is base + pool + (k+1) x leak. */
#ifndef TSC_GEN_MEM_H
#define TSC_GEN_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "gen_job.h"

typedef struct gen_mem_op {
    uint8_t kind;      /* TSC_EV_MEM_ALLOC, TSC_EV_MEM_FREE, TSC_EV_MEM_POOL */
    uint8_t source;    /* enum tsc_mem_source */
    uint8_t pool_op;   /* TSC_EV_MEM_POOL: enum tsc_mem_pool_op */
    int64_t t_ns;      /* common clock */
    uint64_t bytes;
} gen_mem_op;

#define GEN_MEM_MAX_OPS 8
#define GEN_MEM_POOL_ADDR 0x7f0000000000ull

/* 1 when the options ask for memory records. */
int gen_mem_enabled(const gen_options *o);
int gen_mem_leaks(const gen_options *o, int r);

/* Start-up operations (t0 = the job's time origin); returns the count. */
size_t gen_mem_startup(const gen_options *o, int64_t t0, gen_mem_op out[GEN_MEM_MAX_OPS]);
/* Operations of one step of rank r. */
size_t gen_mem_step(const gen_options *o, int r, int64_t begin, int64_t ce,
                    gen_mem_op out[GEN_MEM_MAX_OPS]);

/* The memory answers (gen_truth), from the first and last steps' begin
 * (common clock) of the rank with the peak; called by gen_job. */
void gen_mem_truth(const gen_options *o, int64_t t0, int64_t first_begin, int64_t last_begin,
                   gen_truth *t);

#endif
