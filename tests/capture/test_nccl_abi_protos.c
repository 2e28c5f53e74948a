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

SAME(ncclAllReduce, tsc_fn_allreduce);
SAME(ncclAllGather, tsc_fn_allgather);
SAME(ncclReduceScatter, tsc_fn_reducescatter);
SAME(ncclBroadcast, tsc_fn_broadcast);
SAME(ncclBcast, tsc_fn_bcast);
SAME(ncclReduce, tsc_fn_reduce);
SAME(ncclAlltoAll, tsc_fn_alltoall);
SAME(ncclGather, tsc_fn_gather);
SAME(ncclScatter, tsc_fn_scatter);
SAME(ncclSend, tsc_fn_send);
SAME(ncclRecv, tsc_fn_recv);
SAME(ncclGroupStart, tsc_fn_group);
SAME(ncclGroupEnd, tsc_fn_group);
SAME(ncclCommInitRank, tsc_fn_comm_init_rank);
SAME(ncclCommInitRankConfig, tsc_fn_comm_init_rank_config);
SAME(ncclCommInitRankScalable, tsc_fn_comm_init_rank_scalable);
SAME(ncclCommInitAll, tsc_fn_comm_init_all);
SAME(ncclCommSplit, tsc_fn_comm_split);
SAME(ncclCommShrink, tsc_fn_comm_shrink);
SAME(ncclCommFinalize, tsc_fn_comm);
SAME(ncclCommDestroy, tsc_fn_comm);
SAME(ncclCommAbort, tsc_fn_comm);
SAME(ncclCommUserRank, tsc_fn_comm_query);
SAME(ncclCommCount, tsc_fn_comm_query);
SAME(ncclGetVersion, tsc_fn_get_version);

/* A deliberately wrong type must not pass, or the checks above prove
 * nothing. */
typedef ncclResult_t (*wrong_allreduce)(const void *, void *, int, ncclDataType_t, ncclRedOp_t,
                                        ncclComm_t, cudaStream_t);
_Static_assert(!__builtin_types_compatible_p(__typeof__(&ncclAllReduce), wrong_allreduce),
               "the prototype check is blind");

int tsc_nccl_abi_protos_checked(void) { return 25; }
