/* Which NCCL call or GEMM launched a kernel, when the dump says it by
 * thread and time instead of by external correlation id.
 *
 * A kernel written with its launching call (format 1.2,
 * TSC_EV_KERNEL_LAUNCH) has no external correlation record: the capture
 * leaves it out because the call that pushed the id is the one whose host
 * span, on the launching thread, holds the launch call's start (the
 * launch happens inside the NCCL call or cuBLAS call, on its thread).
 * This join finds that call and gives back the (external id, correlation
 * id) pair the record would have carried, so the rest of the loader joins
 * as before.
 */
#ifndef TSA_LAUNCH_JOIN_H
#define TSA_LAUNCH_JOIN_H

#include <stddef.h>
#include <stdint.h>

/* A host call that pushes an external id: its thread, span and id. */
typedef struct tsa_call_span {
    uint32_t tid;
    int64_t start_ns, end_ns;
    uint64_t external_id;
} tsa_call_span;

/* A launch call's thread, start and CUPTI correlation id. */
typedef struct tsa_launch_at {
    uint32_t tid;
    int64_t t_ns;
    uint32_t correlation;
} tsa_launch_at;

/* For each launch inside a call span of its thread, emit(ctx, external
 * id, correlation).  Sorts spans in place.  Returns 0, or -1 when emit
 * fails (it returns non-zero). */
int tsa_join_launches(tsa_call_span *spans, size_t n_spans, const tsa_launch_at *launches,
                      size_t n_launches, int (*emit)(void *ctx, uint64_t ext, uint32_t corr),
                      void *ctx);

/* Append to a growing array; 0, or -1 without memory. */
int tsa_launch_push(tsa_launch_at **arr, size_t *n, size_t *cap, tsa_launch_at v);

/* CUDA graphs: a kernel node captured inside one of tscope's calls (the
 * capture ran the NCCL call or GEMM once, launching nothing), and each
 * kernel a replay of the graph ran from such a node.  The replays are that
 * call's work: a GEMM's FLOPs once per replay, an NCCL kernel's time as
 * communication. */
typedef struct tsa_graph_node {
    uint64_t node;
    uint64_t external_id;
} tsa_graph_node;

typedef struct tsa_replay {
    size_t kernel;              /* index into the rank's kernels */
    uint64_t node;
    int64_t call_start, call_end; /* the graph launch call */
} tsa_replay;

/* For each replay whose node was captured inside a call with an external
 * id, emit(ctx, replay, external id).  Sorts nodes in place.  Returns 0,
 * or -1 when emit fails. */
int tsa_join_replays(tsa_graph_node *nodes, size_t n_nodes, const tsa_replay *replays,
                     size_t n_replays, int (*emit)(void *ctx, const tsa_replay *r, uint64_t ext),
                     void *ctx);

int tsa_node_push(tsa_graph_node **arr, size_t *n, size_t *cap, tsa_graph_node v);
int tsa_replay_push(tsa_replay **arr, size_t *n, size_t *cap, tsa_replay v);

#endif
