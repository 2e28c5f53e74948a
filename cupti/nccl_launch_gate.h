/* Light mode: which cuLaunchKernelEx calls are NCCL's.
 *
 * Light mode keeps NCCL's launch calls (they bound NCCL's GPU work when no
 * kernel is traced) and no other launch.  cuLaunchKernelEx is not NCCL's
 * alone: cuBLASLt launches its sm90 kernels with it, and Triton its
 * kernels, so its name cannot tell NCCL's calls from theirs.  What does:
 * tscope pushes an external correlation id, TSC_EXTCORR_ID(desc, seq),
 * during each NCCL call, and CUPTI ties it to every API call made inside
 * with an EXTERNAL_CORRELATION record.  tscope's GEMM wrapper pushes ids
 * of the same form, so the descriptor part tells them apart: the push
 * notes the descriptors of NCCL's ids (tsc_gate_note_nccl_desc, on the
 * application's threads); the writer keeps, per buffer and for the last
 * TSC_GATE_SLOTS ones of earlier buffers, the correlation ids whose
 * external id names such a descriptor.  Pure: no CUPTI, no recorder.
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

/* From the NCCL call's thread, as it pushes TSC_EXTCORR_ID(desc, ...):
 * this descriptor is an NCCL call's.  Lock-free; a job has one descriptor
 * per distinct call (operation, communicator, size...), a few thousand
 * at most; past the table's room new ones are not noted (their launches
 * are then left out in light mode, and counted). */
void tsc_gate_note_nccl_desc(uint32_t desc);

/* 1 when the external id is one tscope pushed inside an NCCL call. */
int tsc_gate_is_nccl_external_id(uint64_t external_id);

/* A CUPTI correlation id whose external id is NCCL's. */
void tsc_gate_note(tsc_launch_gate *g, uint32_t correlation);

/* 1 when the call with this correlation id was made inside an NCCL call. */
int tsc_gate_has(const tsc_launch_gate *g, uint32_t correlation);

#endif
