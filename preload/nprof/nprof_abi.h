/* The NCCL profiler plugin ABI, versions 1 to 6 (NCCL 2.23 to 2.29), as
 * tscope needs it: the versioned tables NCCL looks up by name, and each
 * version's event descriptor up to the last field tscope reads.  Layouts
 * follow NCCL's published ABI (docs/nccl-plugin.md says where it is
 * documented); only the offsets matter, so every struct here is laid out
 * field for field as NCCL lays out its own.  The fake NCCL of the test bed
 * declares its side independently (tests/testbed/fakenccl/fn_prof_abi.h),
 * so a layout slip here shows up as a test failure rather than agreeing
 * with itself. */
#ifndef TSC_NPROF_ABI_H
#define TSC_NPROF_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int tsc_np_result; /* ncclResult_t: 0 success */
typedef void (*tsc_np_logger)(int level, unsigned long flags, const char *file, int line,
                              const char *fmt, ...);

/* Event type bits (the activation mask and descriptor `type`). */
enum {
    TSC_NP_GROUP = 1 << 0,
    TSC_NP_COLL = 1 << 1,
    TSC_NP_P2P = 1 << 2,
    TSC_NP_PROXY_OP = 1 << 3,
    TSC_NP_PROXY_STEP = 1 << 4,
    TSC_NP_PROXY_CTRL = 1 << 5,
    TSC_NP_KERNEL_CH = 1 << 6,     /* v3+ */
    TSC_NP_COLL_API = 1 << 9,      /* v5+ */
    TSC_NP_P2P_API = 1 << 10,      /* v5+ */
    TSC_NP_CE_COLL = 1 << 12,      /* v6: a collective run by the copy engines */
    TSC_NP_CE_SYNC = 1 << 13,      /* v6: its synchronisation among the ranks */
    TSC_NP_CE_BATCH = 1 << 14,     /* v6: one batch of its copies */
};

/* Event states tscope reads (recordEventState). */
enum {
    TSC_NP_STEP_SEND_GPU_WAIT = 8,   /* send: waiting for the GPU to fill the step */
    TSC_NP_STEP_SEND_WAIT = 9,       /* send: posted to the network */
    TSC_NP_STEP_RECV_WAIT = 10,      /* receive: waiting for the data */
    TSC_NP_STEP_RECV_FLUSH_WAIT = 11,/* receive: data arrived, flushing */
    TSC_NP_STEP_RECV_GPU_WAIT = 12,  /* receive: waiting for the GPU to take it */
    TSC_NP_STEP_SEND_PEER_WAIT = 20, /* send (v4+): waiting for the receiver's credit */
    TSC_NP_KERNEL_CH_STOP = 22,      /* kernel channel (v4+): its GPU stop time */
};

/* The state argument: a proxy step's transfer size, or (v4+) a kernel
 * channel's GPU stop time; each first in its version's union. */
typedef union {
    struct { size_t trans_size; } step;
    struct { uint64_t ptimer; } kernel_ch;
    uint64_t pad[2];
} tsc_np_state_args;

/* Proxy op descriptor: the same in every version. */
typedef struct {
    pid_t pid;
    uint8_t channel;
    int peer;
    int steps;
    int chunk_size;
    int is_send;
} tsc_np_proxy_op;

/* v1: numeric func/datatype codes; v2 and v3 strings; all three carry the
 * communicator hash in the collective descriptor, not at init. */
typedef struct {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            uint8_t func;
            const void *send_buf;
            void *recv_buf;
            size_t count;
            int root;
            uint8_t dtype;
            uint32_t redop;
            size_t traffic_bytes;
            uint8_t channels;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            uint8_t func;
            void *buf;
            uint8_t dtype;
            size_t count;
            int peer;
        } p2p;
        tsc_np_proxy_op proxy_op;
    };
} tsc_np_descr_v1;

/* v2 and v3: the same but for v2's traffic byte count; v3 adds kernel
 * channel events (the channel only, no GPU time). */
#define TSC_NP_DESCR_V23(TRAFFIC, KERNEL_CH)                                     \
    struct {                                                                     \
        uint8_t type;                                                            \
        void *parent;                                                            \
        int rank;                                                                \
        union {                                                                  \
            struct {                                                             \
                const char *name;                                                \
                uint64_t comm_hash;                                              \
                uint64_t seq;                                                    \
                const char *func;                                                \
                const void *send_buf;                                            \
                void *recv_buf;                                                  \
                size_t count;                                                    \
                int root;                                                        \
                const char *dtype;                                               \
                TRAFFIC                                                          \
                uint8_t channels;                                                \
            } coll;                                                              \
            struct {                                                             \
                const char *name;                                                \
                uint64_t comm_hash;                                              \
                const char *func;                                                \
                void *buf;                                                       \
                const char *dtype;                                               \
                size_t count;                                                    \
                int peer;                                                        \
            } p2p;                                                               \
            tsc_np_proxy_op proxy_op;                                            \
            KERNEL_CH                                                            \
        };                                                                       \
    }

typedef TSC_NP_DESCR_V23(size_t traffic_bytes;, ) tsc_np_descr_v2;
typedef TSC_NP_DESCR_V23(, struct { uint8_t channel; } kernel_ch;) tsc_np_descr_v3;

/* Union members of v4, kept by v5 and v6 at the same offsets (the union
 * starts at offset 24 in every version). */
#define TSC_NP_UNION_V4                                                          \
    struct {                                                                     \
        uint64_t seq;                                                            \
        const char *func;                                                        \
        const void *send_buf;                                                    \
        void *recv_buf;                                                          \
        size_t count;                                                            \
        int root;                                                                \
        const char *dtype;                                                       \
        uint8_t channels;                                                        \
    } coll;                                                                      \
    struct {                                                                     \
        const char *func;                                                        \
        void *buf;                                                               \
        const char *dtype;                                                       \
        size_t count;                                                            \
        int peer;                                                                \
        uint8_t channels;                                                        \
    } p2p;                                                                       \
    tsc_np_proxy_op proxy_op;                                                    \
    struct { uint8_t channel; uint64_t ptimer; } kernel_ch;

/* v5's API events: the call as the user made it, and whether it was
 * captured into a CUDA graph. */
#define TSC_NP_UNION_V5                                                          \
    struct {                                                                     \
        const char *func;                                                        \
        size_t count;                                                            \
        const char *dtype;                                                       \
        int root;                                                                \
        void *stream;                                                            \
        bool graph_captured;                                                     \
    } coll_api;                                                                  \
    struct {                                                                     \
        const char *func;                                                        \
        size_t count;                                                            \
        const char *dtype;                                                       \
        void *stream;                                                            \
        bool graph_captured;                                                     \
    } p2p_api;

/* v6's copy-engine collectives, their synchronisations and batches. */
#define TSC_NP_UNION_V6                                                          \
    struct {                                                                     \
        uint64_t seq;                                                            \
        const char *func;                                                        \
        const void *send_buf;                                                    \
        void *recv_buf;                                                          \
        size_t count;                                                            \
        int root;                                                                \
        const char *dtype;                                                       \
        const char *sync_strategy;  /* "MC" (NVLS multicast) or "UC" */         \
        bool intra_batch_sync;                                                   \
        uint32_t batch_size;                                                     \
        uint32_t num_batches;                                                    \
        uint32_t ce_seq;                                                         \
        void *stream;                                                            \
    } ce_coll;                                                                   \
    struct { bool is_complete; int n_ranks; } ce_sync;                           \
    struct { int num_ops; size_t total_bytes; bool use_intra_sync; } ce_batch;

typedef struct {
    uint8_t type;
    void *parent;
    int rank;
    union { TSC_NP_UNION_V4 };
} tsc_np_descr_v4;

typedef struct {
    uint64_t type;
    void *parent;
    int rank;
    union { TSC_NP_UNION_V4 TSC_NP_UNION_V5 };
} tsc_np_descr_v5;

typedef struct {
    uint64_t type;
    void *parent;
    int rank;
    union { TSC_NP_UNION_V4 TSC_NP_UNION_V5 TSC_NP_UNION_V6 };
} tsc_np_descr_v6;

_Static_assert(offsetof(tsc_np_descr_v1, coll) == 24 && offsetof(tsc_np_descr_v4, coll) == 24 &&
                   offsetof(tsc_np_descr_v6, ce_coll) == 24,
               "every version's union starts at offset 24");

/* The tables.  start/stop/record/finalize have one shape in every version;
 * init and the descriptor differ. */
typedef tsc_np_result (*tsc_np_stop_fn)(void *handle);
typedef tsc_np_result (*tsc_np_record_fn)(void *handle, int state, tsc_np_state_args *args);
typedef tsc_np_result (*tsc_np_finalize_fn)(void *ctx);

#define TSC_NP_TABLE(N, INIT_ARGS)                                               \
    typedef struct {                                                             \
        const char *name;                                                        \
        tsc_np_result (*init) INIT_ARGS;                                         \
        tsc_np_result (*start)(void *ctx, void **handle, tsc_np_descr_v##N *d);  \
        tsc_np_stop_fn stop;                                                     \
        tsc_np_record_fn record;                                                 \
        tsc_np_finalize_fn finalize;                                             \
    } tsc_np_table_v##N

TSC_NP_TABLE(1, (void **ctx, int *mask));
TSC_NP_TABLE(2, (void **ctx, int *mask));
TSC_NP_TABLE(3, (void **ctx, int *mask));
TSC_NP_TABLE(4, (void **ctx, int *mask, const char *comm_name, uint64_t comm_hash,
                 int nnodes, int nranks, int rank, tsc_np_logger log));
TSC_NP_TABLE(5, (void **ctx, uint64_t comm_id, int *mask, const char *comm_name, int nnodes,
                 int nranks, int rank, tsc_np_logger log));
TSC_NP_TABLE(6, (void **ctx, uint64_t comm_id, int *mask, const char *comm_name, int nnodes,
                 int nranks, int rank, tsc_np_logger log));

#endif
