/* Argument checks, the per-thread group queue, and ncclCommSplit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fn_coll.h"
#include "fn_ops.h"
#include "fn_prof.h"
#include "fn_reduce.h"

/* NCCL's group state is per thread. */
static __thread int group_depth;
static __thread fn_op *queue;
static __thread size_t queue_len, queue_cap;
static __thread ncclResult_t group_error;

static int rooted(enum fn_kind k)
{
    return k == FN_BROADCAST || k == FN_REDUCE || k == FN_GATHER || k == FN_SCATTER ||
           k == FN_SEND || k == FN_RECV;
}

static int reducing(enum fn_kind k)
{
    return k == FN_ALLREDUCE || k == FN_REDUCE || k == FN_REDUCESCATTER;
}

static ncclResult_t check(const fn_op *op)
{
    if (!fn_comm_valid(op->comm)) {
        fn_set_error("invalid communicator");
        return ncclInvalidArgument;
    }
    ncclComm_t c = op->comm;
    if (fn_dtype_size(op->dtype) == 0) {
        fn_set_error("unsupported datatype %d", (int)op->dtype);
        return ncclInvalidArgument;
    }
    if (reducing(op->kind) && !fn_reduce_supported(op->dtype, op->redop)) {
        fn_set_error("unsupported reduction %d on datatype %d", (int)op->redop,
                     (int)op->dtype);
        return ncclInvalidArgument;
    }
    if (rooted(op->kind) && (op->root < 0 || op->root >= c->nranks)) {
        fn_set_error("root/peer %d out of range for %d ranks", op->root, c->nranks);
        return ncclInvalidArgument;
    }
    if (op->count == 0)
        return ncclSuccess;
    int needs_send = op->kind != FN_RECV &&
                     !((op->kind == FN_BROADCAST || op->kind == FN_SCATTER) &&
                       c->rank != op->root);
    int needs_recv = op->kind != FN_SEND &&
                     !((op->kind == FN_REDUCE || op->kind == FN_GATHER) &&
                       c->rank != op->root);
    if ((needs_send && !op->sendbuff) || (needs_recv && !op->recvbuff)) {
        fn_set_error("NULL buffer");
        return ncclInvalidArgument;
    }
    return ncclSuccess;
}

static ncclResult_t run_batch(fn_op *ops, size_t n)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        if (ops[i].kind == FN_SEND || ops[i].kind == FN_RECV)
            np++;
    ncclResult_t rc = ncclSuccess;
    if (np) {
        fn_op *p2p = malloc(sizeof *p2p * np);
        if (!p2p)
            return ncclSystemError;
        size_t j = 0;
        for (size_t i = 0; i < n; i++)
            if (ops[i].kind == FN_SEND || ops[i].kind == FN_RECV)
                p2p[j++] = ops[i];
        rc = fn_p2p_run(p2p, np);
        free(p2p);
    }
    for (size_t i = 0; i < n && rc == ncclSuccess; i++)
        if (ops[i].kind != FN_SEND && ops[i].kind != FN_RECV)
            rc = fn_coll_run(&ops[i]);
    if (rc == ncclSuccess)
        fn_device_kernel(ops, n);
    return rc;
}

ncclResult_t fn_submit(const fn_op *op)
{
    ncclResult_t rc = check(op);
    int captured = rc == ncclSuccess && op->count ? fn_prof_api(op) : 0;
    if (group_depth == 0) {
        if (rc != ncclSuccess)
            return rc;
        fn_op copy = *op;
        copy.done = 0;
        copy.captured = captured;
        return run_batch(&copy, 1);
    }
    if (rc != ncclSuccess) {
        if (group_error == ncclSuccess)
            group_error = rc;
        return rc;
    }
    if (queue_len == queue_cap) {
        size_t cap = queue_cap ? queue_cap * 2 : 16;
        fn_op *q = realloc(queue, cap * sizeof *q);
        if (!q)
            return ncclSystemError;
        queue = q;
        queue_cap = cap;
    }
    queue[queue_len] = *op;
    queue[queue_len].done = 0;
    queue[queue_len].captured = captured;
    queue_len++;
    return ncclSuccess;
}

ncclResult_t fn_group_start(void)
{
    group_depth++;
    return ncclSuccess;
}

ncclResult_t fn_group_end(void)
{
    if (group_depth == 0) {
        fn_set_error("ncclGroupEnd without ncclGroupStart");
        return ncclInvalidUsage;
    }
    if (--group_depth > 0)
        return ncclSuccess;
    ncclResult_t rc = group_error;
    if (rc == ncclSuccess)
        rc = run_batch(queue, queue_len);
    queue_len = 0;
    group_error = ncclSuccess;
    /* Threads that end keep nothing allocated. */
    free(queue);
    queue = NULL;
    queue_cap = 0;
    return rc;
}

/* FNV-1a: children of a split get a name every member computes alike. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

ncclResult_t fn_comm_split(ncclComm_t c, int color, int key, ncclComm_t *newcomm)
{
    if (!fn_comm_valid(c) || !newcomm || (color < 0 && color != FN_NCCL_SPLIT_NOCOLOR)) {
        fn_set_error("bad ncclCommSplit arguments");
        return ncclInvalidArgument;
    }
    *newcomm = NULL;
    fn_rank_info *me = fn_info(c, c->rank);
    me->color = color;
    me->key = key;
    me->op = 0xffff; /* not a collective: keeps signatures of neighbours distinct */
    ncclResult_t rc = fn_comm_barrier(c);
    if (rc != ncclSuccess)
        return rc;
    int newrank = 0, newn = 0;
    for (int r = 0; r < c->nranks; r++) {
        const fn_rank_info *o = fn_info(c, r);
        if (o->color != color)
            continue;
        newn++;
        if (o->key < key || (o->key == key && r < c->rank))
            newrank++;
    }
    uint64_t split_no = c->split_count++;
    rc = fn_comm_barrier(c);
    if (rc != ncclSuccess || color == FN_NCCL_SPLIT_NOCOLOR)
        return rc;
    uint64_t h = fnv1a(0xcbf29ce484222325ull, c->name, strlen(c->name));
    h = fnv1a(h, &split_no, sizeof split_no);
    h = fnv1a(h, &color, sizeof color);
    char name[FN_NAME_MAX];
    snprintf(name, sizeof name, "/fnccl_%016llx", (unsigned long long)h);
    return fn_comm_attach(name, newn, newrank, newcomm);
}
