/* The NCCL profiler plugin's settings from the environment (nprof_env.c):
 * its mode, its pools' sizes, and NCCL's plugin loader pointed at this
 * library. */
#ifndef TSC_NPROF_ENV_H
#define TSC_NPROF_ENV_H

#include <stdint.h>

enum tsc_np_mode { TSC_NP_OFF = 0, TSC_NP_LIGHT = 1, TSC_NP_FULL = 2 };

/* TSCOPE_NCCL_PROFILER: off, light (collectives, send/recv, kernel
 * channels, copy-engine collectives, graph-captured calls; the default) or
 * full (also proxy operations and their network steps, CE syncs and
 * batches). */
enum tsc_np_mode tsc_np_mode(void);

/* Pool sizes (nprof_pool.h): TSCOPE_NP_POOLS="colls,ops,steps,spans", or
 * the defaults. */
void tsc_np_pool_counts(uint32_t counts[4]);

/* Where NCCL's plugin loader is pointed (the library constructor). */
void tsc_np_env_setup(void);

/* 1 when tscope pointed NCCL_PROFILER_PLUGIN at this library. */
int tsc_np_pointed(void);

#endif
