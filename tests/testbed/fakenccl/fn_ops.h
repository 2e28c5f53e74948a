/* The operations of the fake NCCL and how they execute.  Collectives move
 * data through the ranks' staging slots in chunks (two barriers per chunk);
 * send/recv move it through per-pair mailboxes.  Inside a group, operations
 * are queued per thread and run at the outermost ncclGroupEnd: all
 * point-to-point operations progress together (so a ring of sends cannot
 * deadlock), then the collectives run in issue order. */
#ifndef FN_OPS_H
#define FN_OPS_H

#include "fn_comm.h"

enum fn_kind {
    FN_ALLREDUCE = 1, FN_ALLGATHER, FN_REDUCESCATTER, FN_BROADCAST, FN_REDUCE,
    FN_ALLTOALL, FN_GATHER, FN_SCATTER, FN_SEND, FN_RECV,
};

typedef struct fn_op {
    enum fn_kind kind;
    const void *sendbuff;
    void *recvbuff;
    size_t count;          /* elements as passed to the API */
    ncclDataType_t dtype;
    ncclRedOp_t redop;
    int root;              /* root, or peer for send/recv */
    ncclComm_t comm;
    cudaStream_t stream;   /* as passed: where a device kernel would run */
    size_t done;           /* p2p progress, bytes */
    int captured;          /* reported to the profiler as captured into a CUDA graph */
} fn_op;

/* Check the arguments, then run the op now or queue it in the calling
 * thread's group. */
ncclResult_t fn_submit(const fn_op *op);

/* Where a CUDA driver is loaded (the CUDA stand-in), the kernel the real
 * NCCL would launch for a batch that ran (its first op's kind and stream),
 * through cuLaunchKernelEx as NCCL 2.28 does; nothing otherwise. */
void fn_device_kernel(const fn_op *ops, size_t n);

/* Where a CUDA driver is loaded: the device buffers a communicator maps
 * for itself (NCCL's cuMem allocations, FN_DEVICE_BUFFER_BYTES), inside
 * the creating call, and their release at destroy. */
#define FN_DEVICE_BUFFER_BYTES (64ull << 20)
void fn_device_map(ncclComm_t comm);
void fn_device_unmap(ncclComm_t comm);

ncclResult_t fn_group_start(void);
ncclResult_t fn_group_end(void);

/* Collective comm-split: see ncclCommSplit. */
ncclResult_t fn_comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm);

#endif
