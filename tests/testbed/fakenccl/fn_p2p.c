/* Send/recv through per-pair mailboxes.  A send is done once its last
 * piece is in the mailbox; a recv once it has taken the last piece.  With
 * FAKENCCL_P2P_SYNC=1 a send is done only once the receiver has taken its
 * last piece, as NCCL's sends of messages larger than its buffers are:
 * sender and receiver then leave together.  All operations of a batch
 * progress together, and operations between the same pair in the same
 * direction complete in issue order, as in NCCL.  FAKENCCL_SLOW_NIC=R:US:
 * the process with RANK=R sits behind a slow network port: every batch of
 * its sends and receives first waits US microseconds (a link retrying),
 * and so the peers waiting for its data wait too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fn_coll.h"
#include "fn_prof.h"
#include "fn_reduce.h"

static size_t op_bytes(const fn_op *op) { return op->count * fn_dtype_size(op->dtype); }

/* An earlier unfinished op to the same peer and direction goes first. */
static int blocked_by_earlier(const fn_op *ops, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (ops[j].comm == ops[i].comm && ops[j].kind == ops[i].kind &&
            ops[j].root == ops[i].root && ops[j].done < op_bytes(&ops[j]))
            return 1;
    return 0;
}

/* Try to move one piece; called with the comm locked.  Returns 1 if it
 * moved, 0 if it must wait, -1 on a size mismatch. */
static int step(fn_op *op)
{
    ncclComm_t c = op->comm;
    size_t total = op_bytes(op);
    if (op->kind == FN_SEND) {
        fn_mailbox *mb = fn_mbox(c, c->rank, op->root);
        if (mb->full)
            return 0;
        size_t len = total - op->done;
        if (len > c->hdr->mbox_bytes)
            len = c->hdr->mbox_bytes;
        memcpy(mb + 1, (const char *)op->sendbuff + op->done, len);
        mb->total = total;
        mb->offset = op->done;
        mb->len = len;
        mb->full = 1;
        op->done += len;
        return 1;
    }
    fn_mailbox *mb = fn_mbox(c, op->root, c->rank);
    if (!mb->full)
        return 0;
    if (mb->total != total || mb->offset != op->done || mb->len > total - op->done)
        return -1;
    memcpy((char *)op->recvbuff + op->done, mb + 1, mb->len);
    op->done += mb->len;
    mb->full = 0;
    return 1;
}

/* A synchronous send whose last piece the receiver has not taken yet;
 * called with the comm unlocked. */
static int undelivered(const fn_op *op)
{
    ncclComm_t c = op->comm;
    if (fn_comm_lock(c) != ncclSuccess)
        return 0;   /* not locked; the next step reports the broken comm */
    int full = fn_mbox(c, c->rank, op->root)->full;
    fn_comm_unlock(c);
    return full;
}

static int p2p_sync(void)
{
    static int v = -1;
    if (v < 0) {
        const char *s = getenv("FAKENCCL_P2P_SYNC");
        v = s && *s == '1';
    }
    return v;
}

static long slow_nic_us(void)
{
    static long us = -1;
    if (us < 0) {
        const char *s = getenv("FAKENCCL_SLOW_NIC"), *r = getenv("RANK");
        int rank;
        long v;
        us = s && r && sscanf(s, "%d:%ld", &rank, &v) == 2 && rank == atoi(r) && v > 0 ? v : 0;
    }
    return us;
}

ncclResult_t fn_p2p_run(fn_op *ops, size_t n)
{
    fn_prof_p2p(ops, n);
    long slow = slow_nic_us();
    struct timespec pause = {slow / 1000000, (slow % 1000000) * 1000};
    while (slow && nanosleep(&pause, &pause) != 0)
        ;
    struct timespec deadline;
    fn_deadline(&deadline);
    for (;;) {
        size_t pending = 0;
        int moved = 0;
        fn_op *first = NULL;
        for (size_t i = 0; i < n; i++) {
            fn_op *op = &ops[i];
            if (op->done >= op_bytes(op)) {
                if (op->kind == FN_SEND && op_bytes(op) && p2p_sync() && undelivered(op)) {
                    pending++;
                    if (!first)
                        first = op;
                }
                continue;
            }
            pending++;
            if (blocked_by_earlier(ops, i))
                continue;
            ncclComm_t c = op->comm;
            ncclResult_t rc = fn_comm_lock(c);
            if (rc == ncclSuccess && c->hdr->broken)
                rc = (ncclResult_t)c->hdr->broken;
            if (rc != ncclSuccess) {
                fn_comm_unlock(c);
                return rc;
            }
            int r = step(op);
            if (r > 0) {
                moved = 1;
                fn_comm_wake(c);
            }
            fn_comm_unlock(c);
            if (r < 0) {
                fn_set_error("send/recv size mismatch between ranks %d and %d on %s",
                             c->rank, op->root, c->name);
                return ncclInvalidUsage;
            }
            if (!first && op->done < op_bytes(op))
                first = op;
        }
        if (!pending) {
            fn_prof_p2p_end(ops, n);
            return ncclSuccess;
        }
        if (moved || !first)
            continue;
        if (fn_past(&deadline)) {
            fn_comm_break(first->comm, ncclSystemError);
            fn_set_error("timed out in send/recv on %s", first->comm->name);
            return ncclSystemError;
        }
        /* Sleep on one pending op's comm; a short cap keeps batches that
         * span several communicators moving. */
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 2 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        ncclComm_t c = first->comm;
        if (fn_comm_lock(c) != ncclSuccess)
            return ncclSystemError;
        if (!c->hdr->broken &&
            pthread_cond_timedwait(&c->hdr->cv, &c->hdr->mu, &until) == EOWNERDEAD) {
            pthread_mutex_consistent(&c->hdr->mu);
            c->hdr->broken = ncclRemoteError;
        }
        fn_comm_unlock(c);
    }
}
