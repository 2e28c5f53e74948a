/* Seams between the preload core and the optional CUPTI capture (cupti/).
 * The core calls these when the capture is linked in (weak symbols: NULL
 * when built without CUDA headers). */
#ifndef TSC_CUPTI_HOOKS_H
#define TSC_CUPTI_HOOKS_H

#include <stdint.h>

/* From the library constructor, after the configuration is read: may set
 * CUDA_INJECTION64_PATH.  Must only read the environment and set it; no
 * CUDA or CUPTI call. */
void tsc_cupti_constructor_hook(void) __attribute__((weak));

/* Before a flush of the recorder's buffers (periodic, exit, signal): asks
 * CUPTI to hand over completed activity buffers.  from_signal: 1 when
 * called from a signal handler (then only async-signal-safe work). */
void tsc_cupti_flush_hook(int from_signal) __attribute__((weak));

/* At process exit, before the final flush: stop CUPTI and collect its last
 * records. */
void tsc_cupti_exit_hook(void) __attribute__((weak));

/* On the thread draining the recorder, with the drain lock held, never
 * from a signal handler: translate the CUPTI buffers handed back since the
 * last drain into the GPU record stream (bulk_stream.h). */
void tsc_cupti_drain_hook(void) __attribute__((weak));

/* Around NCCL calls that launch GPU work (collectives, point-to-point,
 * ncclGroupEnd): push TSC_EXTCORR_ID(desc, seq) as a CUPTI external
 * correlation id before the real call and, when it was pushed (returns
 * 1), pop it after, so the kernels the call launches can be joined to it.
 * Weak: absent without the CUPTI part. */
int tsc_cupti_push_extcorr(uint64_t id) __attribute__((weak));
void tsc_cupti_pop_extcorr(void) __attribute__((weak));

/* At exit, after the final flush: 1 when CUPTI watched this process from
 * its CUDA initialisation to the end and saw no device work in it (no
 * kernel, copy, memset, synchronisation, launch call or GEMM): a helper
 * that only initialised CUDA (a launcher querying the device, a compile
 * worker).  0 when it cannot tell.  Weak: absent without the CUPTI part. */
int tsc_cupti_saw_no_device_work(void) __attribute__((weak));

/* From the NCCL part to the capture: 1 while this thread is inside one of
 * NCCL's API calls (memory it maps then is NCCL's).  Weak: absent without
 * the NCCL wrappers (unit tests). */
int tsc_nccl_in_call(void) __attribute__((weak));

#endif
