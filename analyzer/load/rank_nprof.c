/* NCCL profiler plugin records of a rank (rank_nprof.h). */
#include "rank_nprof.h"

#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"
#include "tsc_nccl_ops.h"
#include "util/vec.h"

#define RESERVE(arr, n, cap) tsa_grow((void **)&(arr), (n), &(cap), sizeof *(arr))

/* Beyond 2^62 ns a time is not real; a span longer than 2^50 ns neither. */
static int plausible(uint64_t a, uint64_t b)
{
    return a < (1ull << 62) && b < (1ull << 62) && b >= a && b - a < (1ull << 50);
}

static struct tsa_nprof *get(tsa_rank *r)
{
    if (!r->nprof)
        r->nprof = calloc(1, sizeof *r->nprof);
    return r->nprof;
}

/* The thread's slot in the pending table (a thread id is never 0 there:
 * 0 marks a free slot; the GPU stream's tid 0 never writes these). */
static size_t *pending_of(struct tsa_nprof *np, uint32_t tid, int claim)
{
    uint32_t key = tid ? tid : 0xffffffffu;
    size_t free_at = TSA_NP_PENDING;
    for (size_t i = 0; i < TSA_NP_PENDING; i++) {
        if (np->pend_tid[i] == key)
            return &np->pend_idx[i];
        if (!np->pend_tid[i] && free_at == TSA_NP_PENDING)
            free_at = i;
    }
    if (!claim)
        return NULL;
    if (free_at == TSA_NP_PENDING)
        free_at = tid % TSA_NP_PENDING; /* more threads than slots: reuse one */
    np->pend_tid[free_at] = key;
    return &np->pend_idx[free_at];
}

static int add_proxy(struct tsa_nprof *np, const tsr_event *e)
{
    if (!plausible(e->start_ns, e->end_ns))
        return 0;
    if (RESERVE(np->proxies, np->n_proxies, np->cap_proxies))
        return -1;
    np->proxies[np->n_proxies] = (tsa_np_proxy){
        .comm = e->aux, .channel = e->flags, .op_id = e->desc_id, .peer = -1,
        .start_ns = (int64_t)e->start_ns, .end_ns = (int64_t)e->end_ns, .bytes = e->val};
    size_t *p = pending_of(np, e->tid, 1);
    *p = np->n_proxies + 1; /* 0 = none pending */
    np->n_proxies++;
    return 0;
}

/* The WAIT completes the proxy record its thread wrote just before. */
static void add_wait(struct tsa_nprof *np, const tsr_event *e)
{
    size_t *p = pending_of(np, e->tid, 0);
    if (!p || !*p || *p > np->n_proxies) {
        np->orphan_waits++;
        return;
    }
    tsa_np_proxy *x = &np->proxies[*p - 1];
    *p = 0;
    x->is_send = e->flags != 0;
    x->peer = (int32_t)e->desc_id;
    x->steps = e->aux;
    x->wait_peer_ns = e->start_ns;
    x->wire_ns = e->end_ns;
    x->wait_gpu_ns = e->val;
    x->have_wait = 1;
}

int tsa_nprof_on_event(tsa_rank *r, const tsr_event *e)
{
    struct tsa_nprof *np = get(r);
    if (!np)
        return -1;
    switch (e->kind) {
    case TSC_EV_NP_COMM:
        if (RESERVE(np->comms, np->n_comms, np->cap_comms))
            return -1;
        np->comms[np->n_comms++] = (tsa_np_comm){.index = e->aux, .version = e->flags,
                                                 .rank = (int32_t)e->desc_id,
                                                 .comm_id = e->val};
        return 0;
    case TSC_EV_NP_COLL:
        if (!plausible(e->start_ns, e->end_ns))
            return 0;
        if (RESERVE(np->colls, np->n_colls, np->cap_colls))
            return -1;
        np->colls[np->n_colls++] = (tsa_np_coll){
            .comm = e->aux, .op = TSC_NP_COLL_OP(e->val), .channels = e->flags,
            .op_id = e->desc_id, .seq = TSC_NP_COLL_SEQ(e->val),
            .start_ns = (int64_t)e->start_ns, .end_ns = (int64_t)e->end_ns};
        return 0;
    case TSC_EV_NP_PROXY: return add_proxy(np, e);
    case TSC_EV_NP_PROXY_WAIT: add_wait(np, e); return 0;
    default: return 0; /* a later plugin kind */
    }
}

void tsa_nprof_free(tsa_rank *r)
{
    if (!r->nprof)
        return;
    free(r->nprof->comms);
    free(r->nprof->colls);
    free(r->nprof->proxies);
    free(r->nprof);
    r->nprof = NULL;
}

const tsa_np_comm *tsa_nprof_comm(const struct tsa_nprof *np, uint16_t idx)
{
    for (size_t i = 0; np && i < np->n_comms; i++)
        if (np->comms[i].index == idx)
            return &np->comms[i];
    return NULL;
}

/* NCCL numbers Broadcast and Bcast as one function. */
static uint8_t nccl_function(uint8_t op) { return op == TSC_NCCL_BCAST ? TSC_NCCL_BROADCAST : op; }

typedef struct { uint64_t comm_id; uint8_t op; uint64_t ordinal; } call_key;

static int by_key(const void *pa, const void *pb)
{
    const call_key *a = pa, *b = pb;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

/* Each call's place among the rank's calls of its function on its
 * communicator (calls are in the rank's order already). */
static call_key *call_keys(const tsa_rank *r, size_t *n)
{
    call_key *k = malloc(sizeof *k * (r->n_nccl ? r->n_nccl : 1));
    if (!k)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *o = &r->nccl[i];
        if (o->op == 0 || o->op > TSC_NCCL_SCATTER)
            continue;
        k[m++] = (call_key){.comm_id = o->comm_id, .op = nccl_function(o->op), .ordinal = o->seq};
    }
    qsort(k, m, sizeof *k, by_key);
    /* seq orders calls of a communicator: turn it into the per-function place. */
    for (size_t i = 0, run = 0; i < m; i++) {
        if (i && (k[i].comm_id != k[i - 1].comm_id || k[i].op != k[i - 1].op))
            run = 0;
        k[i].ordinal = run++;
    }
    *n = m;
    return k;
}

size_t tsa_nprof_joined(const tsa_rank *r, size_t *colls)
{
    const struct tsa_nprof *np = r->nprof;
    *colls = 0;
    if (!np)
        return 0;
    size_t n = 0, joined = 0;
    call_key *k = call_keys(r, &n);
    if (!k)
        return 0;
    for (size_t i = 0; i < np->n_colls; i++) {
        const tsa_np_coll *c = &np->colls[i];
        if (c->op == TSC_NCCL_SEND || c->op == TSC_NCCL_RECV)
            continue;
        (*colls)++;
        const tsa_np_comm *cm = tsa_nprof_comm(np, c->comm);
        if (!cm || !cm->comm_id)
            continue;
        call_key want = {.comm_id = cm->comm_id, .op = nccl_function(c->op), .ordinal = c->seq};
        if (bsearch(&want, k, n, sizeof *k, by_key))
            joined++;
    }
    free(k);
    return joined;
}
