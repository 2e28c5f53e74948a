/* The profiler plugin ABI as the test NCCL speaks it: versions 1 (NCCL
 * 2.23) to 6 (2.29), declared here apart from tscope's own declarations
 * (preload/nprof/nprof_abi.h) so each side checks the other.  Descriptor heads
 * and unions field for field as NCCL publishes them (its
 * src/include/plugin/profiler/profiler_v1.h ... v6.h); only what the test
 * NCCL fills. */
#ifndef FN_PROF_ABI_H
#define FN_PROF_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_abi.h"

enum {
    fnProfGroup = 1 << 0, fnProfColl = 1 << 1, fnProfP2p = 1 << 2, fnProfProxyOp = 1 << 3,
    fnProfProxyStep = 1 << 4, fnProfKernelCh = 1 << 6, fnProfGroupApi = 1 << 8,
    fnProfCollApi = 1 << 9, fnProfP2pApi = 1 << 10, fnProfCeColl = 1 << 12,
    fnProfCeSync = 1 << 13, fnProfCeBatch = 1 << 14,
};

enum {
    /* v1-v3's proxy op states (NCCL 2.23-2.26; deprecated in v4) */
    fnOpSendPosted = 0, fnOpSendRemFifoWait = 1, fnOpSendTransmitted = 2, fnOpSendDone = 3,
    fnOpRecvPosted = 4, fnOpRecvReceived = 5, fnOpRecvTransmitted = 6, fnOpRecvDone = 7,
    fnStepSendGpuWait = 8, fnStepSendWait = 9, fnStepRecvWait = 10, fnStepRecvFlushWait = 11,
    fnStepRecvGpuWait = 12, fnOpInProgress = 19, fnStepSendPeerWait = 20, fnKernelChStop = 22,
};

/* v4-v6 state arguments. */
typedef union {
    struct { size_t transSize; } proxyStep;
    struct { int appendedProxyOps; } proxyCtrl;
    struct { void *data; } netPlugin;
    struct { uint64_t pTimer; } kernelCh;
} fn_state_args;

/* v1-v3 state arguments. */
typedef union {
    struct { size_t transSize; int steps; } proxyOp;
    struct { int appendedProxyOps; } proxyCtrl;
} fn_state_args_v1;

typedef struct { pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; }
    fn_proxy_op_descr;

/* The test NCCL's own events are v6 descriptors (as NCCL's are); older
 * versions get a copy in their layout (fn_prof_load.c). */
#define FN_UNION_V4                                                               \
    struct {                                                                      \
        uint64_t seqNumber; const char *func; const void *sendBuff;               \
        void *recvBuff; size_t count; int root; const char *datatype;             \
        uint8_t nChannels; uint8_t nWarps; const char *algo;                      \
        const char *proto; void *parentGroup;                                     \
    } coll;                                                                       \
    struct {                                                                      \
        const char *func; void *buff; const char *datatype; size_t count;         \
        int peer; uint8_t nChannels; void *parentGroup;                           \
    } p2p;                                                                        \
    fn_proxy_op_descr proxyOp;                                                    \
    struct { int step; } proxyStep;                                               \
    struct { uint8_t channelId; uint64_t pTimer; } kernelCh;

#define FN_UNION_V5                                                               \
    struct { bool graphCaptured; int groupDepth; } groupApi;                      \
    struct {                                                                      \
        const char *func; size_t count; const char *datatype; int root;           \
        void *stream; bool graphCaptured;                                         \
    } collApi;                                                                    \
    struct {                                                                      \
        const char *func; size_t count; const char *datatype; void *stream;       \
        bool graphCaptured;                                                       \
    } p2pApi;

#define FN_UNION_V6                                                               \
    struct {                                                                      \
        uint64_t seqNumber; const char *func; const void *sendBuff;               \
        void *recvBuff; size_t count; int root; const char *datatype;             \
        const char *syncStrategy; bool intraBatchSync; uint32_t batchSize;        \
        uint32_t numBatches; uint32_t ceSeqNum; void *stream;                     \
    } ceColl;                                                                     \
    struct { bool isComplete; int nRanks; } ceCollSync;                           \
    struct { int numOps; size_t totalBytes; bool useIntraSync; } ceCollBatch;

typedef struct { uint64_t type; void *parentObj; int rank; union { FN_UNION_V4 FN_UNION_V5 FN_UNION_V6 }; } fn_descr_v6;
typedef struct { uint64_t type; void *parentObj; int rank; union { FN_UNION_V4 FN_UNION_V5 }; } fn_descr_v5;
typedef struct { uint8_t type; void *parentObj; int rank; union { FN_UNION_V4 }; } fn_descr_v4;

/* v2 and v3: the communicator's name and hash in each descriptor; v2 has
 * the traffic byte count, v3 kernel channels (the channel only). */
#define FN_DESCR_V23(TRAFFIC, KERNEL_CH)                                          \
    struct {                                                                      \
        uint8_t type; void *parentObj; int rank;                                  \
        union {                                                                   \
            struct {                                                              \
                const char *name; uint64_t commHash; uint64_t seqNumber;          \
                const char *func; const void *sendBuff; void *recvBuff;           \
                size_t count; int root; const char *datatype; TRAFFIC             \
                uint8_t nMaxChannels; uint8_t nWarps; const char *algo;           \
                const char *proto;                                                \
            } coll;                                                               \
            struct {                                                              \
                const char *name; uint64_t commHash; const char *func;            \
                void *buff; const char *datatype; size_t count; int peer;         \
            } p2p;                                                                \
            fn_proxy_op_descr proxyOp;                                            \
            struct { int step; } proxyStep;                                       \
            KERNEL_CH                                                             \
        };                                                                        \
    }
typedef FN_DESCR_V23(size_t trafficBytes;, ) fn_descr_v2;
typedef FN_DESCR_V23(, struct { uint8_t channelId; } kernelCh;) fn_descr_v3;

/* v1: numeric function, type and operation codes. */
typedef struct {
    uint8_t type; void *parentObj; int rank;
    union {
        struct {
            const char *name; uint64_t commHash; uint64_t seqNumber; uint8_t func;
            const void *sendBuff; void *recvBuff; size_t count; int root; uint8_t datatype;
            uint32_t op; size_t trafficBytes; uint8_t nMaxChannels; uint8_t nWarps;
            uint8_t algo; uint8_t proto; int isCollnet; int isNvls;
        } coll;
        struct {
            const char *name; uint64_t commHash; uint8_t func; void *buff; uint8_t datatype;
            size_t count; int peer;
        } p2p;
        fn_proxy_op_descr proxyOp;
        struct { int step; } proxyStep;
    };
} fn_descr_v1;

typedef void (*fn_logger)(int, unsigned long, const char *, int, const char *, ...);

#define FN_PROFILER_TABLE(N, INIT_ARGS, ARGS)                                     \
    typedef struct {                                                              \
        const char *name;                                                         \
        ncclResult_t(*init) INIT_ARGS;                                            \
        ncclResult_t (*startEvent)(void *ctx, void **h, fn_descr_v##N *d);        \
        ncclResult_t (*stopEvent)(void *h);                                       \
        ncclResult_t (*recordEventState)(void *h, int state, ARGS *a);            \
        ncclResult_t (*finalize)(void *ctx);                                      \
    } fn_profiler_v##N

#define FN_INIT_V56                                                               \
    (void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes, int nranks, \
     int rank, fn_logger log)
FN_PROFILER_TABLE(6, FN_INIT_V56, fn_state_args);
FN_PROFILER_TABLE(5, FN_INIT_V56, fn_state_args);
FN_PROFILER_TABLE(4, (void **ctx, int *mask, const char *commName, uint64_t commHash, int nNodes,
                      int nranks, int rank, fn_logger log), fn_state_args);
FN_PROFILER_TABLE(3, (void **ctx, int *mask), fn_state_args_v1);
FN_PROFILER_TABLE(2, (void **ctx, int *mask), fn_state_args_v1);
FN_PROFILER_TABLE(1, (void **ctx, int *mask), fn_state_args_v1);

#endif
