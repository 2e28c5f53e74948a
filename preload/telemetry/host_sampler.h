/* One host sample per call (host_sampler.c): the process's CPU time and
 * runnable threads, per-thread and per-worker-process CPU time, the load
 * average; recorded through the recorder when they changed. */
#ifndef TSC_HOST_SAMPLER_H
#define TSC_HOST_SAMPLER_H

#include <stdint.h>

/* Threads and worker processes followed (the rest are counted, not kept). */
#define TSC_HOST_MAX_TASKS 48
/* Threads read per sample: bounds the work on processes with many threads. */
#define TSC_HOST_MAX_SCAN 512

/* Metadata that rarely changes: online CPUs, affinity, cgroup limit,
 * OMP_NUM_THREADS. */
void tsc_host_write_meta(void);

/* self_tid: the sampler's own thread, left out of the runnable count. */
void tsc_host_sample(uint32_t self_tid);

/* Forget followed tasks (after fork). */
void tsc_host_reset(void);

#endif
