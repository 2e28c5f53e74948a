/* The NCCL operations tscope interposes: one line each, and everything
 * else follows from it: the dump's op codes (enum tsc_nccl_op), the
 * preload's wrappers and export list (preload/nccl/nccl_wrap.c, the version
 * script), the reader's and the analyzer's names, and which analyses an op
 * takes part in (its kind) and how its bus bandwidth is counted.
 *
 *   X(ID, CODE, NAME, KIND, BUSBW, ARGS)
 *
 *   ID     enum suffix: TSC_NCCL_<ID>
 *   CODE   the number written in dumps: append-only, never reused
 *   NAME   the NCCL function without its "nccl" prefix; the exported symbol
 *          is nccl<NAME>, reports print NAME
 *   KIND   tsc_nccl_kind without its prefix (below)
 *   BUSBW  bus bandwidth = bytes / time x BUSBW (n-1)/n over n ranks; 0: x 1
 *   ARGS   the argument list, for the preload's generated wrappers (below);
 *          OWN: the wrapper is written by hand in preload/nccl/nccl_wrap.c
 *
 * Adding an operation: one line here (a free CODE), and, unless its
 * arguments have one of the shapes below, its wrapper body in
 * preload/nccl/nccl_wrap.c (docs/architecture.md). */
#ifndef TSC_NCCL_OPS_H
#define TSC_NCCL_OPS_H

#include <stddef.h>

#define TSC_NCCL_OPS(X)                                                       \
    X(ALLREDUCE, 1, AllReduce, SYMMETRIC, 2, REDOP)                           \
    X(ALLGATHER, 2, AllGather, SYMMETRIC, 1, PLAIN)                           \
    X(REDUCESCATTER, 3, ReduceScatter, SYMMETRIC, 1, REDOP)                   \
    X(BROADCAST, 4, Broadcast, ROOTED, 0, ROOT)                               \
    X(BCAST, 5, Bcast, ROOTED, 0, INPLACE_ROOT)                               \
    X(REDUCE, 6, Reduce, ROOTED, 0, REDOP_ROOT)                               \
    X(ALLTOALL, 7, AlltoAll, ALLTOALL, 1, PLAIN)                              \
    X(GATHER, 8, Gather, ROOTED, 0, ROOT)                                     \
    X(SCATTER, 9, Scatter, ROOTED, 0, ROOT)                                   \
    X(SEND, 10, Send, P2P, 0, SEND)                                           \
    X(RECV, 11, Recv, P2P, 0, RECV)                                           \
    X(GROUP_START, 20, GroupStart, GROUP, 0, OWN)                             \
    X(GROUP_END, 21, GroupEnd, GROUP, 0, OWN)                                 \
    X(COMM_INIT_RANK, 30, CommInitRank, INIT, 0, OWN)                         \
    X(COMM_INIT_RANK_CONFIG, 31, CommInitRankConfig, INIT, 0, OWN)            \
    X(COMM_INIT_RANK_SCALABLE, 32, CommInitRankScalable, INIT, 0, OWN)        \
    X(COMM_INIT_ALL, 33, CommInitAll, COMM, 0, OWN)                           \
    X(COMM_SPLIT, 34, CommSplit, COMM, 0, OWN)                                \
    X(COMM_SHRINK, 35, CommShrink, COMM, 0, OWN)                              \
    X(COMM_FINALIZE, 36, CommFinalize, COMM, 0, OWN)                          \
    X(COMM_DESTROY, 37, CommDestroy, COMM, 0, OWN)                            \
    X(COMM_ABORT, 38, CommAbort, COMM, 0, OWN)

/* What an operation is, for the analyses. */
enum tsc_nccl_kind {
    TSC_NCCL_KIND_NONE = 0,    /* a code not in the table (a newer dump, damage) */
    TSC_NCCL_KIND_SYMMETRIC,   /* every rank ends holding the same result at the
                                * same moment: the cross-rank clock anchors */
    TSC_NCCL_KIND_ALLTOALL,    /* every rank waits for every other, results differ */
    TSC_NCCL_KIND_ROOTED,      /* one root: non-root ranks may leave early */
    TSC_NCCL_KIND_P2P,         /* send / receive */
    TSC_NCCL_KIND_GROUP,       /* GroupStart / GroupEnd (GroupEnd blocks for the group) */
    TSC_NCCL_KIND_INIT,        /* communicator creation every rank must join */
    TSC_NCCL_KIND_COMM,        /* other communicator set-up and tear-down */
};

/* Argument shapes of the generated wrappers (ARGS), after the buffers:
 *   REDOP         (sendbuff, recvbuff, count, datatype, op, comm, stream)
 *   PLAIN         (sendbuff, recvbuff, count, datatype, comm, stream)
 *   ROOT          (sendbuff, recvbuff, count, datatype, root, comm, stream)
 *   INPLACE_ROOT  (buff, count, datatype, root, comm, stream)
 *   REDOP_ROOT    (sendbuff, recvbuff, count, datatype, op, root, comm, stream)
 *   SEND          (sendbuff, count, datatype, peer, comm, stream)
 *   RECV          (recvbuff, count, datatype, peer, comm, stream)
 * (preload/nccl/nccl_wrap.c defines one wrapper macro per shape.) */

enum tsc_nccl_op {
#define TSC_NCCL_OP_ENUM(id, code, name, kind, busbw, args) TSC_NCCL_##id = code,
    TSC_NCCL_OPS(TSC_NCCL_OP_ENUM)
#undef TSC_NCCL_OP_ENUM
};

/* One past the largest code of the step operations (not INIT or COMM
 * kinds): the size of tables indexed by op code (the analyzer's
 * collective rows).  A union is as large as its largest member. */
union tsc_nccl_step_op_limit {
#define TSC_NCCL_OP_LIMIT(id, code, name, kind, busbw, args)                        \
    char op_##id[TSC_NCCL_KIND_##kind == TSC_NCCL_KIND_INIT || TSC_NCCL_KIND_##kind == \
                    TSC_NCCL_KIND_COMM                                             \
                ? 1                                                                \
                : (code) + 1];
    TSC_NCCL_OPS(TSC_NCCL_OP_LIMIT)
#undef TSC_NCCL_OP_LIMIT
};
#define TSC_NCCL_STEP_OP_LIMIT ((int)sizeof(union tsc_nccl_step_op_limit))

/* The NCCL function without its prefix ("AllReduce"); NULL for a code not
 * in the table. */
static inline const char *tsc_nccl_op_name(unsigned op)
{
    switch (op) {
#define TSC_NCCL_OP_NAME(id, code, name, kind, busbw, args) \
    case code: return #name;
        TSC_NCCL_OPS(TSC_NCCL_OP_NAME)
#undef TSC_NCCL_OP_NAME
    default: return NULL;
    }
}

/* The exported symbol ("ncclAllReduce"); NULL for a code not in the table. */
static inline const char *tsc_nccl_op_symbol(unsigned op)
{
    switch (op) {
#define TSC_NCCL_OP_SYMBOL(id, code, name, kind, busbw, args) \
    case code: return "nccl" #name;
        TSC_NCCL_OPS(TSC_NCCL_OP_SYMBOL)
#undef TSC_NCCL_OP_SYMBOL
    default: return NULL;
    }
}

static inline enum tsc_nccl_kind tsc_nccl_op_kind(unsigned op)
{
    switch (op) {
#define TSC_NCCL_OP_KIND(id, code, name, kind, busbw, args) \
    case code: return TSC_NCCL_KIND_##kind;
        TSC_NCCL_OPS(TSC_NCCL_OP_KIND)
#undef TSC_NCCL_OP_KIND
    default: return TSC_NCCL_KIND_NONE;
    }
}

/* BUSBW of the table: bus bandwidth is bytes / time x busbw (n-1)/n;
 * 0 means x 1. */
static inline unsigned tsc_nccl_op_busbw(unsigned op)
{
    switch (op) {
#define TSC_NCCL_OP_BUSBW(id, code, name, kind, busbw, args) \
    case code: return busbw;
        TSC_NCCL_OPS(TSC_NCCL_OP_BUSBW)
#undef TSC_NCCL_OP_BUSBW
    default: return 0;
    }
}

/* Collectives: every rank of the communicator takes part in one instance. */
static inline int tsc_nccl_op_is_collective(unsigned op)
{
    enum tsc_nccl_kind k = tsc_nccl_op_kind(op);
    return k == TSC_NCCL_KIND_SYMMETRIC || k == TSC_NCCL_KIND_ALLTOALL ||
           k == TSC_NCCL_KIND_ROOTED;
}

/* Calls that take a communicator's sequence number: collectives and
 * point-to-point. */
static inline int tsc_nccl_op_is_sequenced(unsigned op)
{
    return tsc_nccl_op_is_collective(op) || tsc_nccl_op_kind(op) == TSC_NCCL_KIND_P2P;
}

/* Communicator set-up and tear-down: not step communication. */
static inline int tsc_nccl_op_is_setup(unsigned op)
{
    enum tsc_nccl_kind k = tsc_nccl_op_kind(op);
    return k == TSC_NCCL_KIND_INIT || k == TSC_NCCL_KIND_COMM;
}

#endif
