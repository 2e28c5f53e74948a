/* Internal controls of the CUPTI capture shared by its files. */
#ifndef TSC_CUPTI_CONTROL_H
#define TSC_CUPTI_CONTROL_H

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

/* GEMM calls recorded so far (gemm_wrap.c). */
unsigned long long tsc_gemm_calls_recorded(void);

/* Subscribe, register buffers, enable activity kinds (cupti_session.c).
 * 0 when running; otherwise one stderr line and cupti_status say why. */
int tsc_cupti_start(void);

#endif
