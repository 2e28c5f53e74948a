/* Element-wise reductions over the ranks' staged buffers.  Every rank
 * reduces in rank order 0..n-1, so floating-point results are bit-identical
 * on all ranks (what a checksum comparison needs). */
#ifndef FN_REDUCE_H
#define FN_REDUCE_H

#include <stddef.h>

#include "nccl_abi.h"

/* Bytes per element, 0 for an unsupported type. */
size_t fn_dtype_size(ncclDataType_t dt);

/* 1 when (dtype, op) can be reduced here. */
int fn_reduce_supported(ncclDataType_t dt, ncclRedOp_t op);

/* dst[i] = op(srcs[0][i], ..., srcs[n-1][i]) for i < count; avg divides
 * the sum by n.  dst may alias a source. */
void fn_reduce(ncclDataType_t dt, ncclRedOp_t op, int n, const void *const *srcs, void *dst,
               size_t count);

/* IEEE half and bfloat16 conversions (round to nearest even). */
float fn_half_to_float(unsigned short h);
unsigned short fn_float_to_half(float f);
float fn_bf16_to_float(unsigned short b);
unsigned short fn_float_to_bf16(float f);

#endif
