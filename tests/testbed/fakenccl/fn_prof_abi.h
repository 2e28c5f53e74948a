/* The profiler plugin ABI as the test NCCL speaks it: versions 5 (NCCL
 * 2.28) and 4 (2.27), declared here apart from tscope's own declarations
 * (preload/nprof_abi.h) so each side checks the other.  Descriptor heads
 * and unions as NCCL publishes them; only what the test NCCL fills. */
#ifndef FN_PROF_ABI_H
#define FN_PROF_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_abi.h"

enum {
    fnProfGroup = 1 << 0, fnProfColl = 1 << 1, fnProfP2p = 1 << 2, fnProfProxyOp = 1 << 3,
    fnProfProxyStep = 1 << 4,
};

enum {
    fnStepSendGpuWait = 8, fnStepSendWait = 9, fnStepRecvWait = 10, fnStepRecvFlushWait = 11,
    fnStepRecvGpuWait = 12, fnOpInProgress = 19, fnStepSendPeerWait = 20,
};

typedef union {
    struct { size_t transSize; } proxyStep;
    struct { int appendedProxyOps; } proxyCtrl;
    struct { void *data; } netPlugin;
    struct { uint64_t pTimer; } kernelCh;
} fn_state_args;

#define FN_DESCR_BODY                                                             \
    void *parentObj;                                                              \
    int rank;                                                                     \
    union {                                                                       \
        struct { bool graphCaptured; int groupDepth; } groupApi;                  \
        struct {                                                                  \
            uint64_t seqNumber; const char *func; const void *sendBuff;           \
            void *recvBuff; size_t count; int root; const char *datatype;         \
            uint8_t nChannels; uint8_t nWarps; const char *algo;                  \
            const char *proto; void *parentGroup;                                 \
        } coll;                                                                   \
        struct {                                                                  \
            const char *func; void *buff; const char *datatype; size_t count;     \
            int peer; uint8_t nChannels; void *parentGroup;                       \
        } p2p;                                                                    \
        struct {                                                                  \
            pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize;    \
            int isSend;                                                           \
        } proxyOp;                                                                \
        struct { int step; } proxyStep;                                           \
    }

typedef struct { uint64_t type; FN_DESCR_BODY; } fn_descr_v5;
typedef struct { uint8_t type; FN_DESCR_BODY; } fn_descr_v4;

typedef void (*fn_logger)(int, unsigned long, const char *, int, const char *, ...);

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, int *mask, const char *commName,
                         int nNodes, int nranks, int rank, fn_logger log);
    ncclResult_t (*startEvent)(void *ctx, void **h, fn_descr_v5 *d);
    ncclResult_t (*stopEvent)(void *h);
    ncclResult_t (*recordEventState)(void *h, int state, fn_state_args *a);
    ncclResult_t (*finalize)(void *ctx);
} fn_profiler_v5;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, int *mask, const char *commName, uint64_t commHash,
                         int nNodes, int nranks, int rank, fn_logger log);
    ncclResult_t (*startEvent)(void *ctx, void **h, fn_descr_v4 *d);
    ncclResult_t (*stopEvent)(void *h);
    ncclResult_t (*recordEventState)(void *h, int state, fn_state_args *a);
    ncclResult_t (*finalize)(void *ctx);
} fn_profiler_v4;

#endif
