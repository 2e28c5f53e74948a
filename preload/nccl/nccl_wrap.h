/* Helpers of the NCCL wrappers that tests check directly. */
#ifndef TSC_NCCL_WRAP_H
#define TSC_NCCL_WRAP_H

#include <stddef.h>

/* Bytes per element of an ncclDataType_t value, 0 when unknown. */
size_t tsc_nccl_dtype_size(int dtype);

/* The NCCL part's table for the core (core/parts.h). */
struct tsc_part;
extern const struct tsc_part tsc_nccl_part;

#endif
