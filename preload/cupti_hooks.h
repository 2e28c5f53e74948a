/* Seams between the preload core and the optional CUPTI capture (cupti/).
 * The core calls these when the capture is linked in (weak symbols: NULL
 * when built without CUDA headers). */
#ifndef TSC_CUPTI_HOOKS_H
#define TSC_CUPTI_HOOKS_H

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

#endif
