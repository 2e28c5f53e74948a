/* Our NCCL function-pointer types against the real nccl.h prototypes.
 * The basic types are mapped to nccl.h's own, so the compiler compares
 * every parameter (count, order, width, constness, by-value structs): a
 * mismatch fails the build.  Compile-time only: nothing here links NCCL. */
#include <nccl.h>

#define TSC_NCCL_ABI_TYPES_FROM_NCCL_H
typedef ncclResult_t tsc_nccl_result_t;
typedef ncclDataType_t tsc_nccl_dtype_t;
typedef ncclRedOp_t tsc_nccl_redop_t;
typedef ncclUniqueId tsc_nccl_unique_id;
typedef ncclConfig_t tsc_nccl_config_t;
#include "nccl_abi.h"

#define SAME(fn, type) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), type), #fn " prototype differs")

/* Every operation of the NCCL table: by its argument shape's type, or (a
 * wrapper written by hand) by its own type; then the queries. */
#include "tsc_nccl_ops.h"
#define SAME_SHAPED(id, code, name, kind, busbw, args) SAME_##args(name)
#define SAME_OWN(name)
#define SAME_REDOP(name) SAME(nccl##name, TSC_NCCL_SHAPE_REDOP);
#define SAME_PLAIN(name) SAME(nccl##name, TSC_NCCL_SHAPE_PLAIN);
#define SAME_ROOT(name) SAME(nccl##name, TSC_NCCL_SHAPE_ROOT);
#define SAME_INPLACE_ROOT(name) SAME(nccl##name, TSC_NCCL_SHAPE_INPLACE_ROOT);
#define SAME_REDOP_ROOT(name) SAME(nccl##name, TSC_NCCL_SHAPE_REDOP_ROOT);
#define SAME_SEND(name) SAME(nccl##name, TSC_NCCL_SHAPE_SEND);
#define SAME_RECV(name) SAME(nccl##name, TSC_NCCL_SHAPE_RECV);
TSC_NCCL_OPS(SAME_SHAPED)
#define SAME_TYPED(name, type) SAME(nccl##name, type);
TSC_NCCL_OWN_TYPES(SAME_TYPED)
TSC_NCCL_QUERY_TYPES(SAME_TYPED)

/* Each operation of the table is checked once: shaped ones above, the
 * others through TSC_NCCL_OWN_TYPES, which must list them all. */
#define ONE_IF_OWN(id, code, name, kind, busbw, args) +ONE_##args
#define ONE_OWN 1
#define ONE_REDOP 0
#define ONE_PLAIN 0
#define ONE_ROOT 0
#define ONE_INPLACE_ROOT 0
#define ONE_REDOP_ROOT 0
#define ONE_SEND 0
#define ONE_RECV 0
#define ONE(...) +1
_Static_assert(0 TSC_NCCL_OPS(ONE_IF_OWN) == 0 TSC_NCCL_OWN_TYPES(ONE),
               "every hand-written wrapper's type is in TSC_NCCL_OWN_TYPES");

/* A deliberately wrong type must not pass, or the checks above prove
 * nothing. */
typedef ncclResult_t (*wrong_allreduce)(const void *, void *, int, ncclDataType_t, ncclRedOp_t,
                                        ncclComm_t, cudaStream_t);
_Static_assert(!__builtin_types_compatible_p(__typeof__(&ncclAllReduce), wrong_allreduce),
               "the prototype check is blind");

int tsc_nccl_abi_protos_checked(void) { return 0 TSC_NCCL_OPS(ONE) TSC_NCCL_QUERY_TYPES(ONE); }
