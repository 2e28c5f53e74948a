/* Collectives through the staging slots.
 *
 * Per chunk: every rank stages its input in its own slot, barrier, every
 * rank builds its output from the slots it needs, barrier (so nobody
 * restages a slot that is still being read).  Ops whose input has one block
 * per destination rank (ReduceScatter, AlltoAll, Scatter) split the slot
 * into nranks sub-blocks. */
#include <stdlib.h>
#include <string.h>

#include "fn_coll.h"
#include "fn_prof.h"
#include "fn_reduce.h"

static int per_dest_blocks(enum fn_kind k)
{
    return k == FN_REDUCESCATTER || k == FN_ALLTOALL || k == FN_SCATTER;
}

static void stage(const fn_op *op, char *slot, size_t off, size_t m, size_t esz, size_t sub)
{
    ncclComm_t c = op->comm;
    const char *send = op->sendbuff;
    switch (op->kind) {
    case FN_ALLREDUCE: case FN_REDUCE: case FN_ALLGATHER: case FN_GATHER:
        memcpy(slot, send + off * esz, m * esz);
        break;
    case FN_BROADCAST:
        if (c->rank == op->root)
            memcpy(slot, send + off * esz, m * esz);
        break;
    case FN_SCATTER:
        if (c->rank != op->root)
            break;
        /* fall through */
    case FN_REDUCESCATTER: case FN_ALLTOALL:
        for (int t = 0; t < c->nranks; t++)
            memcpy(slot + (size_t)t * sub * esz, send + ((size_t)t * op->count + off) * esz,
                   m * esz);
        break;
    default:
        break;
    }
}

static void consume(const fn_op *op, const void **srcs, size_t off, size_t m, size_t esz,
                    size_t sub)
{
    ncclComm_t c = op->comm;
    char *recv = op->recvbuff;
    int n = c->nranks, me = c->rank;
    switch (op->kind) {
    case FN_ALLREDUCE:
        for (int s = 0; s < n; s++)
            srcs[s] = fn_slot(c, s);
        fn_reduce(op->dtype, op->redop, n, srcs, recv + off * esz, m);
        break;
    case FN_REDUCE:
        if (me != op->root)
            break;
        for (int s = 0; s < n; s++)
            srcs[s] = fn_slot(c, s);
        fn_reduce(op->dtype, op->redop, n, srcs, recv + off * esz, m);
        break;
    case FN_REDUCESCATTER:
        for (int s = 0; s < n; s++)
            srcs[s] = fn_slot(c, s) + (size_t)me * sub * esz;
        fn_reduce(op->dtype, op->redop, n, srcs, recv + off * esz, m);
        break;
    case FN_BROADCAST:
        memmove(recv + off * esz, fn_slot(c, op->root), m * esz);
        break;
    case FN_GATHER:
        if (me != op->root)
            break;
        /* fall through */
    case FN_ALLGATHER:
        for (int s = 0; s < n; s++)
            memmove(recv + ((size_t)s * op->count + off) * esz, fn_slot(c, s), m * esz);
        break;
    case FN_ALLTOALL:
        for (int s = 0; s < n; s++)
            memmove(recv + ((size_t)s * op->count + off) * esz,
                    fn_slot(c, s) + (size_t)me * sub * esz, m * esz);
        break;
    case FN_SCATTER:
        memmove(recv + off * esz, fn_slot(c, op->root) + (size_t)me * sub * esz, m * esz);
        break;
    default:
        break;
    }
}

/* All ranks see the same infos after the barrier, so all reach the same
 * verdict and leave the collective together. */
static int signatures_match(ncclComm_t c)
{
    const fn_rank_info *a = fn_info(c, 0);
    for (int r = 1; r < c->nranks; r++) {
        const fn_rank_info *b = fn_info(c, r);
        if (a->op != b->op || a->dtype != b->dtype || a->redop != b->redop ||
            a->root != b->root || a->count != b->count)
            return 0;
    }
    return 1;
}

ncclResult_t fn_coll_run(const fn_op *op)
{
    ncclComm_t c = op->comm;
    size_t esz = fn_dtype_size(op->dtype);
    size_t sub = c->hdr->slot_bytes / esz;
    if (per_dest_blocks(op->kind))
        sub /= (size_t)c->nranks;
    if (op->count == 0)
        return ncclSuccess;
    if (sub == 0) {
        fn_set_error("staging slots too small for %d ranks", c->nranks);
        return ncclInvalidUsage;
    }
    const void **srcs = malloc(sizeof *srcs * (size_t)c->nranks);
    if (!srcs)
        return ncclSystemError;
    fn_prof_coll(op);
    ncclResult_t rc = ncclSuccess;
    for (size_t off = 0; off < op->count && rc == ncclSuccess; off += sub) {
        size_t m = op->count - off < sub ? op->count - off : sub;
        stage(op, fn_slot(c, c->rank), off, m, esz, sub);
        if (off == 0) {
            fn_rank_info *me = fn_info(c, c->rank);
            me->op = op->kind;
            me->dtype = op->dtype;
            me->redop = op->kind == FN_ALLREDUCE || op->kind == FN_REDUCE ||
                                op->kind == FN_REDUCESCATTER
                            ? (uint32_t)op->redop
                            : 0;
            me->root = op->root;
            me->count = op->count;
        }
        rc = fn_comm_barrier(c);
        if (rc != ncclSuccess)
            break;
        int ok = off != 0 || signatures_match(c);
        if (ok)
            consume(op, srcs, off, m, esz, sub);
        rc = fn_comm_barrier(c);
        if (rc == ncclSuccess && !ok) {
            fn_set_error("ranks of %s entered different collectives", c->name);
            rc = ncclInvalidUsage;
        }
    }
    free(srcs);
    fn_prof_coll_end(op);
    return rc;
}
