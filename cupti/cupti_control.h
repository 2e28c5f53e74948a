/* Internal controls of the CUPTI capture shared by its files. */
#ifndef TSC_CUPTI_CONTROL_H
#define TSC_CUPTI_CONTROL_H

#include <stdint.h>

/* 1 while tscope's CUPTI capture is running (cheap: one relaxed load). */
int tsc_cupti_running(void);

/* Another client is taking CUPTI over (it called cuptiSubscribe or
 * cuptiActivityRegisterCallbacks): flush what tscope has, disable its
 * activity kinds and unsubscribe, then let the other tool proceed.  `who`
 * names the call for the one-line message.  Before tscope has started it
 * only notes the other client, and tscope then stays off CUPTI. */
void tsc_cupti_yield(const char *who);

#include "cupti_mode.h"

/* The mode read from TSCOPE_CUPTI by the constructor hook (TSCOPE_CUPTI
 * read now if the hook has not run).  The GEMM wrappers record nothing
 * when it is off. */
tsc_cupti_mode tsc_cupti_current_mode(void);

/* From the constructor hook: the mode, and whether NVTX is routed to CUPTI
 * through this library. */
void tsc_cupti_configure(tsc_cupti_mode mode, int nvtx);
int tsc_cupti_nvtx_routed(void);

/* One GEMM call recorded (gemm_wrap.c): a process that made one did
 * device work. */
void tsc_cupti_count_gemm(void);

/* Subscribe, register buffers, enable activity kinds (cupti_session.c).
 * 0 when running; otherwise one stderr line and cupti_status say why. */
int tsc_cupti_start(void);

/* The GPU part's table for the core (cupti_part.c, core/parts.h). */
struct tsc_part;
extern const struct tsc_part tsc_cupti_part;

/* Its moments (core/parts.h says when each is called). */
/* Library constructor: may set CUDA_INJECTION64_PATH.  Must only read the
 * environment and set it; no CUDA or CUPTI call (cupti_inject.c). */
void tsc_cupti_constructor_hook(void);
/* Ask CUPTI to hand over completed activity buffers (from_signal: only
 * async-signal-safe work). */
void tsc_cupti_flush_hook(int from_signal);
/* Stop CUPTI and collect its last records. */
void tsc_cupti_exit_hook(void);
/* Translate the buffers handed back since the last drain into the GPU
 * record stream (bulk_stream.h); drain lock held. */
void tsc_cupti_drain_hook(void);
/* Push TSC_EXTCORR_ID(desc, seq) as a CUPTI external correlation id
 * around a call that launches GPU work (1 when pushed), pop it after. */
int tsc_cupti_push_extcorr(uint64_t id);
void tsc_cupti_pop_extcorr(void);
/* 1 when CUPTI watched this process from its CUDA initialisation to the
 * end and saw no device work in it; 0 when it cannot tell. */
int tsc_cupti_saw_no_device_work(void);

#endif
