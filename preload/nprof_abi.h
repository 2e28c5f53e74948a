/* The NCCL profiler plugin ABI, versions 1 to 5 (NCCL 2.23 to 2.28), as
 * tscope needs it: the versioned tables NCCL looks up by name, and the
 * leading part of each version's event descriptor up to the last field
 * tscope reads.  Layouts follow NCCL's published ABI (docs/nccl-plugin.md
 * says where it is documented); only the offsets matter, so every struct
 * here is laid out field for field as NCCL lays out its own.  The fake
 * NCCL of the test bed declares its side independently
 * (tests/testbed/fakenccl/fn_prof_abi.h), so a layout slip here shows up as
 * a test failure rather than agreeing with itself. */
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
    TSC_NP_KERNEL_CH = 1 << 6,
};

/* Event states tscope reads (recordEventState). */
enum {
    TSC_NP_STEP_SEND_GPU_WAIT = 8,   /* send: waiting for the GPU to fill the step */
    TSC_NP_STEP_SEND_WAIT = 9,       /* send: posted to the network */
    TSC_NP_STEP_RECV_WAIT = 10,      /* receive: waiting for the data */
    TSC_NP_STEP_RECV_FLUSH_WAIT = 11,/* receive: data arrived, flushing */
    TSC_NP_STEP_RECV_GPU_WAIT = 12,  /* receive: waiting for the GPU to take it */
    TSC_NP_STEP_SEND_PEER_WAIT = 20, /* send (v4+): waiting for the receiver's credit */
};

/* The state argument of a proxy step (transfer size): first in every
 * version's union. */
typedef union {
    struct { size_t trans_size; } step;
    uint64_t pad[2];
} tsc_np_state_args;

/* Proxy op and step descriptors: the same in every version. */
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

/* v2 and v3: the same but for v2's traffic byte count. */
#define TSC_NP_DESCR_V23(TRAFFIC)                                                \
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
        };                                                                       \
    }

typedef TSC_NP_DESCR_V23(size_t traffic_bytes;) tsc_np_descr_v2;
typedef TSC_NP_DESCR_V23() tsc_np_descr_v3;

/* v4 (type is a byte) and v5 (type is 64-bit): the same union head. */
#define TSC_NP_DESCR_V45_UNION                                                   \
    union {                                                                      \
        struct { bool graph_captured; int depth; } group_api;                    \
        struct {                                                                 \
            uint64_t seq;                                                        \
            const char *func;                                                    \
            const void *send_buf;                                                \
            void *recv_buf;                                                      \
            size_t count;                                                        \
            int root;                                                            \
            const char *dtype;                                                   \
            uint8_t channels;                                                    \
        } coll;                                                                  \
        struct {                                                                 \
            const char *func;                                                    \
            void *buf;                                                           \
            const char *dtype;                                                   \
            size_t count;                                                        \
            int peer;                                                            \
            uint8_t channels;                                                    \
        } p2p;                                                                   \
        tsc_np_proxy_op proxy_op;                                                \
    }

typedef struct {
    uint8_t type;
    void *parent;
    int rank;
    TSC_NP_DESCR_V45_UNION;
} tsc_np_descr_v4;

typedef struct {
    uint64_t type;
    void *parent;
    int rank;
    TSC_NP_DESCR_V45_UNION;
} tsc_np_descr_v5;

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

#endif
