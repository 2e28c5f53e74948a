/* Light mode: which cuLaunchKernelEx calls are NCCL's.
 *
 * Light mode keeps NCCL's launch calls (they bound NCCL's GPU work when no
 * kernel is traced) and no other launch.  cuLaunchKernelEx is not NCCL's
 * alone: cuBLASLt launches its sm90 kernels with it, and Triton its
 * kernels, so its name cannot tell NCCL's calls from theirs.  What does:
 * tscope's NCCL wrapper pushes an external correlation id during each NCCL
 * call (TSC_EXTCORR_ID: CUSTOM2, bit 63 set), and CUPTI ties it to every
 * API call made inside with an EXTERNAL_CORRELATION record.  The gate
 * remembers the correlation ids of the last TSC_GATE_SLOTS such records; a
 * cuLaunchKernelEx whose id is not among them was made outside NCCL.
 * Pure: no CUPTI, no recorder.
 */
#ifndef TSC_NCCL_LAUNCH_GATE_H
#define TSC_NCCL_LAUNCH_GATE_H

#include <stdint.h>

/* Far more than the NCCL calls one CUPTI buffer can hold between an
 * EXTERNAL_CORRELATION record and its API record. */
#define TSC_GATE_SLOTS 256u

typedef struct tsc_launch_gate {
    uint32_t ids[TSC_GATE_SLOTS];   /* 0: empty (CUPTI's ids start at 1) */
    unsigned next;
} tsc_launch_gate;

/* A CUPTI correlation id that carries tscope's NCCL external id. */
void tsc_gate_note(tsc_launch_gate *g, uint32_t correlation);

/* 1 when the call with this correlation id was made inside an NCCL call. */
int tsc_gate_has(const tsc_launch_gate *g, uint32_t correlation);

#endif
