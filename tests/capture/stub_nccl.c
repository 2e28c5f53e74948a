/* A trivial stand-in for libnccl.so.2: every call returns at once.  The
 * capture tests and the overhead benchmark run the preload against it, so
 * what they measure and check is the interposition, not NCCL.
 * Test hooks: count 4242 sets errno to 4242 (errno must reach the caller
 * unchanged); count 7777 returns ncclInvalidArgument (so must the wrapper). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_abi.h"

#define API __attribute__((visibility("default")))

struct ncclComm {
    int rank, size;
};

static tsc_nccl_result_t hooks(size_t count)
{
    if (count == 4242)
        errno = 4242;
    return count == 7777 ? tsc_ncclInvalidArgument : tsc_ncclSuccess;
}

static tsc_nccl_result_t new_comm(tsc_nccl_comm_t *c, int rank, int size)
{
    if (!c)
        return tsc_ncclInvalidArgument;
    *c = malloc(sizeof **c);
    if (!*c)
        return tsc_ncclSystemError;
    (*c)->rank = rank;
    (*c)->size = size;
    return tsc_ncclSuccess;
}

API tsc_nccl_result_t ncclGetVersion(int *v) { *v = 22809; return tsc_ncclSuccess; }

API tsc_nccl_result_t ncclGetUniqueId(tsc_nccl_unique_id *id)
{
    memset(id, 0x5a, sizeof *id);
    return tsc_ncclSuccess;
}

API tsc_nccl_result_t ncclAllReduce(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                    tsc_nccl_redop_t o, tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)o; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclAllGather(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                    tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclReduceScatter(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                        tsc_nccl_redop_t o, tsc_nccl_comm_t c,
                                        tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)o; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclBroadcast(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                    int root, tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)root; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclBcast(void *b, size_t n, tsc_nccl_dtype_t t, int root,
                                tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)b; (void)t; (void)root; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclReduce(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                 tsc_nccl_redop_t o, int root, tsc_nccl_comm_t c,
                                 tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)o; (void)root; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclAlltoAll(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                   tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclGather(const void *s, void *r, size_t n, tsc_nccl_dtype_t t, int root,
                                 tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)root; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclScatter(const void *s, void *r, size_t n, tsc_nccl_dtype_t t,
                                  int root, tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)r; (void)t; (void)root; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclSend(const void *s, size_t n, tsc_nccl_dtype_t t, int peer,
                               tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)s; (void)t; (void)peer; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclRecv(void *r, size_t n, tsc_nccl_dtype_t t, int peer,
                               tsc_nccl_comm_t c, tsc_cuda_stream_t st)
{
    (void)r; (void)t; (void)peer; (void)c; (void)st;
    return hooks(n);
}

API tsc_nccl_result_t ncclGroupStart(void) { return tsc_ncclSuccess; }
API tsc_nccl_result_t ncclGroupEnd(void) { return tsc_ncclSuccess; }

API tsc_nccl_result_t ncclCommInitRank(tsc_nccl_comm_t *c, int n, tsc_nccl_unique_id id, int r)
{
    (void)id;
    return new_comm(c, r, n);
}

API tsc_nccl_result_t ncclCommInitRankConfig(tsc_nccl_comm_t *c, int n, tsc_nccl_unique_id id,
                                             int r, tsc_nccl_config_t *cfg)
{
    (void)id; (void)cfg;
    return new_comm(c, r, n);
}

API tsc_nccl_result_t ncclCommInitRankScalable(tsc_nccl_comm_t *c, int n, int r, int nid,
                                               tsc_nccl_unique_id *ids, tsc_nccl_config_t *cfg)
{
    (void)nid; (void)ids; (void)cfg;
    return new_comm(c, r, n);
}

API tsc_nccl_result_t ncclCommInitAll(tsc_nccl_comm_t *c, int ndev, const int *devs)
{
    (void)devs;
    for (int i = 0; i < ndev; i++)
        new_comm(&c[i], i, ndev);
    return tsc_ncclSuccess;
}

/* Children of a split: ranks with the same color, ordered by rank, as if
 * the parent's size were even and colors alternate (what the tests use). */
API tsc_nccl_result_t ncclCommSplit(tsc_nccl_comm_t c, int color, int key,
                                    tsc_nccl_comm_t *nc, tsc_nccl_config_t *cfg)
{
    (void)key; (void)cfg;
    if (color == TSC_NCCL_SPLIT_NOCOLOR) {
        *nc = NULL;
        return tsc_ncclSuccess;
    }
    return new_comm(nc, c->rank / 2, c->size / 2);
}

API tsc_nccl_result_t ncclCommShrink(tsc_nccl_comm_t c, int *ex, int nex, tsc_nccl_comm_t *nc,
                                     tsc_nccl_config_t *cfg, int flags)
{
    (void)ex; (void)cfg; (void)flags;
    return new_comm(nc, c->rank, c->size - nex);
}

API tsc_nccl_result_t ncclCommFinalize(tsc_nccl_comm_t c) { (void)c; return tsc_ncclSuccess; }
API tsc_nccl_result_t ncclCommDestroy(tsc_nccl_comm_t c) { free(c); return tsc_ncclSuccess; }
API tsc_nccl_result_t ncclCommAbort(tsc_nccl_comm_t c) { free(c); return tsc_ncclSuccess; }

API tsc_nccl_result_t ncclCommUserRank(const tsc_nccl_comm_t c, int *r)
{
    *r = c->rank;
    return tsc_ncclSuccess;
}

API tsc_nccl_result_t ncclCommCount(const tsc_nccl_comm_t c, int *n)
{
    *n = c->size;
    return tsc_ncclSuccess;
}
