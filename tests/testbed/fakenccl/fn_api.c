/* The exported NCCL entry points.  Like the real libnccl.so.2, each
 * function is defined as pncclX with ncclX as a weak alias, so a preloaded
 * interposer can wrap ncclX and reach the real one with dlsym(RTLD_NEXT).
 * Internal code never calls an exported name, so an interposer sees each
 * API call exactly once. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <stdio.h>
#include <unistd.h>

#include "fn_ops.h"

#define FN_PUBLIC __attribute__((visibility("default")))
#define FN_ALIAS(p) __attribute__((weak, alias(#p), visibility("default")))

FN_PUBLIC ncclResult_t pncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = FN_NCCL_VERSION_CODE;
    return ncclSuccess;
}
ncclResult_t ncclGetVersion(int *version) FN_ALIAS(pncclGetVersion);

FN_PUBLIC ncclResult_t pncclGetUniqueId(ncclUniqueId *id)
{
    if (!id)
        return ncclInvalidArgument;
    unsigned long long rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        fn_set_error("getrandom failed");
        return ncclSystemError;
    }
    memset(id, 0, sizeof *id);
    memcpy(id->internal, FN_ID_MAGIC, sizeof FN_ID_MAGIC);
    snprintf(id->internal + 8, FN_NAME_MAX, "/fnccl_%08x%016llx", (unsigned)getpid(), rnd);
    return ncclSuccess;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) FN_ALIAS(pncclGetUniqueId);

static ncclResult_t init_from_id(ncclComm_t *comm, int nranks, const ncclUniqueId *id,
                                 int rank)
{
    if (!comm || !id)
        return ncclInvalidArgument;
    *comm = NULL;
    if (memcmp(id->internal, FN_ID_MAGIC, sizeof FN_ID_MAGIC) != 0 ||
        !memchr(id->internal + 8, 0, FN_NAME_MAX) || id->internal[8] != '/') {
        fn_set_error("not a unique id from this library");
        return ncclInvalidArgument;
    }
    ncclResult_t rc = fn_comm_attach(id->internal + 8, nranks, rank, comm);
    if (rc == ncclSuccess)
        fn_device_map(*comm);
    return rc;
}

FN_PUBLIC ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    return init_from_id(comm, nranks, &id, rank);
}
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
    FN_ALIAS(pncclCommInitRank);

/* Configuration only tunes performance in NCCL; the fake is always blocking. */
FN_PUBLIC ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                               int rank, ncclConfig_t *config)
{
    (void)config;
    return init_from_id(comm, nranks, &id, rank);
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config) FN_ALIAS(pncclCommInitRankConfig);

/* Several ids only spread NCCL's bootstrap load; the first one names the comm. */
FN_PUBLIC ncclResult_t pncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nId,
                                                 ncclUniqueId *ids, ncclConfig_t *config)
{
    (void)config;
    if (nId < 1 || !ids)
        return ncclInvalidArgument;
    return init_from_id(comm, nranks, &ids[0], rank);
}
ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nId,
                                      ncclUniqueId *ids, ncclConfig_t *config)
    FN_ALIAS(pncclCommInitRankScalable);

/* One process driving several GPUs has no meaning without GPUs. */
FN_PUBLIC ncclResult_t pncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    (void)comm, (void)ndev, (void)devlist;
    fn_set_error("ncclCommInitAll is not supported by the test NCCL");
    return ncclInvalidUsage;
}
ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
    FN_ALIAS(pncclCommInitAll);

FN_PUBLIC ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                      ncclConfig_t *config)
{
    (void)config;
    return fn_comm_split(comm, color, key, newcomm);
}
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config) FN_ALIAS(pncclCommSplit);

/* Operations complete before their call returns, so nothing is pending. */
FN_PUBLIC ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
    return fn_comm_valid(comm) ? ncclSuccess : ncclInvalidArgument;
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) FN_ALIAS(pncclCommFinalize);

FN_PUBLIC ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (!fn_comm_valid(comm))
        return ncclInvalidArgument;
    fn_device_unmap(comm);
    fn_comm_detach(comm);
    return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) FN_ALIAS(pncclCommDestroy);

/* Peers blocked on this comm return ncclRemoteError instead of timing out. */
FN_PUBLIC ncclResult_t pncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (!fn_comm_valid(comm))
        return ncclInvalidArgument;
    fn_comm_break(comm, ncclRemoteError);
    fn_device_unmap(comm);
    fn_comm_detach(comm);
    return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) FN_ALIAS(pncclCommAbort);

FN_PUBLIC ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    if (!fn_comm_valid(comm) || !err)
        return ncclInvalidArgument;
    *err = (ncclResult_t)comm->hdr->broken;
    return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
    FN_ALIAS(pncclCommGetAsyncError);

FN_PUBLIC ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
    if (!fn_comm_valid(comm) || !count)
        return ncclInvalidArgument;
    *count = comm->nranks;
    return ncclSuccess;
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) FN_ALIAS(pncclCommCount);

FN_PUBLIC ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
    if (!fn_comm_valid(comm) || !rank)
        return ncclInvalidArgument;
    *rank = comm->rank;
    return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) FN_ALIAS(pncclCommUserRank);

/* No GPUs: the "device" is the local rank, as with one GPU per process. */
FN_PUBLIC ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
    if (!fn_comm_valid(comm) || !device)
        return ncclInvalidArgument;
    *device = comm->device;
    return ncclSuccess;
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) FN_ALIAS(pncclCommCuDevice);

FN_PUBLIC const char *pncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}
const char *ncclGetErrorString(ncclResult_t r) FN_ALIAS(pncclGetErrorString);

FN_PUBLIC const char *pncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return fn_last_error();
}
const char *ncclGetLastError(ncclComm_t comm) FN_ALIAS(pncclGetLastError);

/* Host memory stands in for device memory. */
FN_PUBLIC ncclResult_t pncclMemAlloc(void **ptr, size_t size)
{
    if (!ptr)
        return ncclInvalidArgument;
    *ptr = calloc(1, size ? size : 1);
    return *ptr ? ncclSuccess : ncclSystemError;
}
ncclResult_t ncclMemAlloc(void **ptr, size_t size) FN_ALIAS(pncclMemAlloc);

FN_PUBLIC ncclResult_t pncclMemFree(void *ptr)
{
    free(ptr);
    return ncclSuccess;
}
ncclResult_t ncclMemFree(void *ptr) FN_ALIAS(pncclMemFree);

/* ------------------------------------------------------------ operations */

static ncclResult_t submit(enum fn_kind kind, const void *send, void *recv, size_t count,
                           ncclDataType_t dt, ncclRedOp_t redop, int root, ncclComm_t comm,
                           cudaStream_t st)
{
    fn_op op = {.kind = kind, .sendbuff = send, .recvbuff = recv, .count = count,
                .dtype = dt, .redop = redop, .root = root, .comm = comm, .stream = st};
    return fn_submit(&op);
}

FN_PUBLIC ncclResult_t pncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t dt,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_ALLREDUCE, s, r, n, dt, op, -1, comm, st);
}
ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t dt, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t st) FN_ALIAS(pncclAllReduce);

FN_PUBLIC ncclResult_t pncclReduce(const void *s, void *r, size_t n, ncclDataType_t dt,
                                   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_REDUCE, s, r, n, dt, op, root, comm, st);
}
ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t dt, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t st) FN_ALIAS(pncclReduce);

FN_PUBLIC ncclResult_t pncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t dt,
                                      int root, ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_BROADCAST, s, r, n, dt, ncclSum, root, comm, st);
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t dt, int root,
                           ncclComm_t comm, cudaStream_t st) FN_ALIAS(pncclBroadcast);

FN_PUBLIC ncclResult_t pncclBcast(void *b, size_t n, ncclDataType_t dt, int root,
                                  ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_BROADCAST, b, b, n, dt, ncclSum, root, comm, st);
}
ncclResult_t ncclBcast(void *b, size_t n, ncclDataType_t dt, int root, ncclComm_t comm,
                       cudaStream_t st) FN_ALIAS(pncclBcast);

FN_PUBLIC ncclResult_t pncclAllGather(const void *s, void *r, size_t n, ncclDataType_t dt,
                                      ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_ALLGATHER, s, r, n, dt, ncclSum, -1, comm, st);
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t dt, ncclComm_t comm,
                           cudaStream_t st) FN_ALIAS(pncclAllGather);

FN_PUBLIC ncclResult_t pncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t dt,
                                          ncclRedOp_t op, ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_REDUCESCATTER, s, r, n, dt, op, -1, comm, st);
}
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t dt,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t st)
    FN_ALIAS(pncclReduceScatter);

FN_PUBLIC ncclResult_t pncclAlltoAll(const void *s, void *r, size_t n, ncclDataType_t dt,
                                     ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_ALLTOALL, s, r, n, dt, ncclSum, -1, comm, st);
}
ncclResult_t ncclAlltoAll(const void *s, void *r, size_t n, ncclDataType_t dt, ncclComm_t comm,
                          cudaStream_t st) FN_ALIAS(pncclAlltoAll);

FN_PUBLIC ncclResult_t pncclGather(const void *s, void *r, size_t n, ncclDataType_t dt,
                                   int root, ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_GATHER, s, r, n, dt, ncclSum, root, comm, st);
}
ncclResult_t ncclGather(const void *s, void *r, size_t n, ncclDataType_t dt, int root,
                        ncclComm_t comm, cudaStream_t st) FN_ALIAS(pncclGather);

FN_PUBLIC ncclResult_t pncclScatter(const void *s, void *r, size_t n, ncclDataType_t dt,
                                    int root, ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_SCATTER, s, r, n, dt, ncclSum, root, comm, st);
}
ncclResult_t ncclScatter(const void *s, void *r, size_t n, ncclDataType_t dt, int root,
                         ncclComm_t comm, cudaStream_t st) FN_ALIAS(pncclScatter);

FN_PUBLIC ncclResult_t pncclSend(const void *s, size_t n, ncclDataType_t dt, int peer,
                                 ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_SEND, s, NULL, n, dt, ncclSum, peer, comm, st);
}
ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t dt, int peer, ncclComm_t comm,
                      cudaStream_t st) FN_ALIAS(pncclSend);

FN_PUBLIC ncclResult_t pncclRecv(void *r, size_t n, ncclDataType_t dt, int peer,
                                 ncclComm_t comm, cudaStream_t st)
{
    return submit(FN_RECV, NULL, r, n, dt, ncclSum, peer, comm, st);
}
ncclResult_t ncclRecv(void *r, size_t n, ncclDataType_t dt, int peer, ncclComm_t comm,
                      cudaStream_t st) FN_ALIAS(pncclRecv);

FN_PUBLIC ncclResult_t pncclGroupStart(void) { return fn_group_start(); }
ncclResult_t ncclGroupStart(void) FN_ALIAS(pncclGroupStart);

FN_PUBLIC ncclResult_t pncclGroupEnd(void) { return fn_group_end(); }
ncclResult_t ncclGroupEnd(void) FN_ALIAS(pncclGroupEnd);
