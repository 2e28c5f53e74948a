/* Our own ABI-compatible declarations of the NCCL API we interpose, so the
 * preload builds without CUDA or NCCL headers.  Values and layouts follow
 * nccl.h 2.28 (a stable C ABI); tests/capture/test_nccl_abi_*.c check them
 * against the real header when it is installed.
 *
 * With TSC_NCCL_ABI_TYPES_FROM_NCCL_H defined, the includer provides the
 * basic types (mapped to nccl.h's own) and gets only the function-pointer
 * types: that is how the prototype test makes the compiler compare every
 * parameter. */
#ifndef TSC_NCCL_ABI_H
#define TSC_NCCL_ABI_H

#include <stddef.h>

#ifndef TSC_NCCL_ABI_TYPES_FROM_NCCL_H
typedef enum {
    tsc_ncclSuccess = 0,
    tsc_ncclUnhandledCudaError = 1,
    tsc_ncclSystemError = 2,
    tsc_ncclInternalError = 3,
    tsc_ncclInvalidArgument = 4,
    tsc_ncclInvalidUsage = 5,
    tsc_ncclRemoteError = 6,
    tsc_ncclInProgress = 7,
} tsc_nccl_result_t;

typedef enum {
    tsc_ncclInt8 = 0, tsc_ncclUint8 = 1, tsc_ncclInt32 = 2, tsc_ncclUint32 = 3,
    tsc_ncclInt64 = 4, tsc_ncclUint64 = 5, tsc_ncclFloat16 = 6, tsc_ncclFloat32 = 7,
    tsc_ncclFloat64 = 8, tsc_ncclBfloat16 = 9, tsc_ncclFloat8e4m3 = 10,
    tsc_ncclFloat8e5m2 = 11, tsc_ncclNumTypes = 12,
} tsc_nccl_dtype_t;

/* Built-in ops 0..4; ncclRedOpCreate* returns larger values. */
typedef enum {
    tsc_ncclSum = 0, tsc_ncclProd = 1, tsc_ncclMax = 2, tsc_ncclMin = 3, tsc_ncclAvg = 4,
    tsc_ncclMaxRedOp = 0x7fffffff,
} tsc_nccl_redop_t;

#define TSC_NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[TSC_NCCL_UNIQUE_ID_BYTES]; } tsc_nccl_unique_id;

/* Only passed through by pointer. */
typedef struct tsc_nccl_config tsc_nccl_config_t;
#endif

/* The same struct tags as nccl.h / cuda_runtime.h: opaque handles. */
typedef struct ncclComm *tsc_nccl_comm_t;
typedef struct CUstream_st *tsc_cuda_stream_t;

#define TSC_NCCL_SPLIT_NOCOLOR (-1)

typedef tsc_nccl_result_t (*tsc_fn_allreduce)(const void *, void *, size_t, tsc_nccl_dtype_t,
                                              tsc_nccl_redop_t, tsc_nccl_comm_t,
                                              tsc_cuda_stream_t);
typedef tsc_nccl_result_t (*tsc_fn_allgather)(const void *, void *, size_t, tsc_nccl_dtype_t,
                                              tsc_nccl_comm_t, tsc_cuda_stream_t);
typedef tsc_fn_allreduce tsc_fn_reducescatter;
typedef tsc_nccl_result_t (*tsc_fn_broadcast)(const void *, void *, size_t, tsc_nccl_dtype_t,
                                              int, tsc_nccl_comm_t, tsc_cuda_stream_t);
typedef tsc_nccl_result_t (*tsc_fn_bcast)(void *, size_t, tsc_nccl_dtype_t, int,
                                          tsc_nccl_comm_t, tsc_cuda_stream_t);
typedef tsc_nccl_result_t (*tsc_fn_reduce)(const void *, void *, size_t, tsc_nccl_dtype_t,
                                           tsc_nccl_redop_t, int, tsc_nccl_comm_t,
                                           tsc_cuda_stream_t);
typedef tsc_fn_allgather tsc_fn_alltoall;
typedef tsc_fn_broadcast tsc_fn_gather;
typedef tsc_fn_broadcast tsc_fn_scatter;
typedef tsc_nccl_result_t (*tsc_fn_send)(const void *, size_t, tsc_nccl_dtype_t, int,
                                         tsc_nccl_comm_t, tsc_cuda_stream_t);
typedef tsc_nccl_result_t (*tsc_fn_recv)(void *, size_t, tsc_nccl_dtype_t, int,
                                         tsc_nccl_comm_t, tsc_cuda_stream_t);
typedef tsc_nccl_result_t (*tsc_fn_group)(void);
typedef tsc_nccl_result_t (*tsc_fn_comm_init_rank)(tsc_nccl_comm_t *, int, tsc_nccl_unique_id,
                                                   int);
typedef tsc_nccl_result_t (*tsc_fn_comm_init_rank_config)(tsc_nccl_comm_t *, int,
                                                          tsc_nccl_unique_id, int,
                                                          tsc_nccl_config_t *);
typedef tsc_nccl_result_t (*tsc_fn_comm_init_rank_scalable)(tsc_nccl_comm_t *, int, int, int,
                                                            tsc_nccl_unique_id *,
                                                            tsc_nccl_config_t *);
typedef tsc_nccl_result_t (*tsc_fn_comm_init_all)(tsc_nccl_comm_t *, int, const int *);
typedef tsc_nccl_result_t (*tsc_fn_comm_split)(tsc_nccl_comm_t, int, int, tsc_nccl_comm_t *,
                                               tsc_nccl_config_t *);
typedef tsc_nccl_result_t (*tsc_fn_comm_shrink)(tsc_nccl_comm_t, int *, int, tsc_nccl_comm_t *,
                                                tsc_nccl_config_t *, int);
typedef tsc_nccl_result_t (*tsc_fn_comm)(tsc_nccl_comm_t);
typedef tsc_nccl_result_t (*tsc_fn_comm_query)(const tsc_nccl_comm_t, int *);
typedef tsc_nccl_result_t (*tsc_fn_get_version)(int *);

/* The type of each argument shape of the NCCL operations table
 * (format/tsc_nccl_ops.h): the generated wrappers and the prototype check
 * use them. */
#define TSC_NCCL_SHAPE_REDOP tsc_fn_allreduce
#define TSC_NCCL_SHAPE_PLAIN tsc_fn_allgather
#define TSC_NCCL_SHAPE_ROOT tsc_fn_broadcast
#define TSC_NCCL_SHAPE_INPLACE_ROOT tsc_fn_bcast
#define TSC_NCCL_SHAPE_REDOP_ROOT tsc_fn_reduce
#define TSC_NCCL_SHAPE_SEND tsc_fn_send
#define TSC_NCCL_SHAPE_RECV tsc_fn_recv

/* The type of each operation of the table whose wrapper is written by hand
 * (ARGS OWN), by NAME, and of the queries the wrappers call: the prototype
 * check (tests/capture/test_nccl_abi_protos.c) compares every one with
 * nccl.h.  Adding such an operation: its typedef above and a line here. */
#define TSC_NCCL_OWN_TYPES(X)                                                   \
    X(GroupStart, tsc_fn_group)                                                 \
    X(GroupEnd, tsc_fn_group)                                                   \
    X(CommInitRank, tsc_fn_comm_init_rank)                                      \
    X(CommInitRankConfig, tsc_fn_comm_init_rank_config)                         \
    X(CommInitRankScalable, tsc_fn_comm_init_rank_scalable)                     \
    X(CommInitAll, tsc_fn_comm_init_all)                                        \
    X(CommSplit, tsc_fn_comm_split)                                             \
    X(CommShrink, tsc_fn_comm_shrink)                                           \
    X(CommFinalize, tsc_fn_comm)                                                \
    X(CommDestroy, tsc_fn_comm)                                                 \
    X(CommAbort, tsc_fn_comm)
#define TSC_NCCL_QUERY_TYPES(X)                                                 \
    X(CommUserRank, tsc_fn_comm_query)                                          \
    X(CommCount, tsc_fn_comm_query)                                             \
    X(GetVersion, tsc_fn_get_version)

#endif
