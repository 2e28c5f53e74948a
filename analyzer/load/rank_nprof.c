/* NCCL profiler plugin records of a rank (rank_nprof.h). */
#include "rank_nprof.h"

#include <stdlib.h>
#include <string.h>

#include "nprof_lean.h"
#include "tsc_format.h"
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
    x->is_send = e->flags & 1;
    x->pxn = (e->flags & TSC_NP_WAIT_PXN) != 0;
    x->peer = (int32_t)e->desc_id;
    x->steps = e->aux;
    x->wait_peer_ns = e->start_ns;
    x->wire_ns = e->end_ns;
    x->wait_gpu_ns = e->val;
    x->have_wait = 1;
}

static int add_kernel_ch(struct tsa_nprof *np, const tsr_event *e)
{
    /* a GPU time longer than its host span plus a second is not real */
    if (!plausible(e->start_ns, e->end_ns) || e->val > e->end_ns - e->start_ns + 1000000000ull)
        return 0;
    if (RESERVE(np->kch, np->n_kch, np->cap_kch))
        return -1;
    int host = (e->flags & TSC_NP_KCH_NO_GPU_TIMER) != 0;
    np->kch[np->n_kch++] = (tsa_np_kch){
        .comm = e->aux, .channel = e->flags & 0x7f, .host_times = (uint8_t)host,
        .op_id = e->desc_id, .start_ns = (int64_t)e->start_ns, .end_ns = (int64_t)e->end_ns,
        .gpu_ns = host ? 0 : e->val};
    return 0;
}

uint64_t tsa_np_kch_ns(const tsa_np_kch *k)
{
    return k->host_times ? (uint64_t)(k->end_ns - k->start_ns) : k->gpu_ns;
}

static int add_ce_part(struct tsa_nprof *np, const tsr_event *e)
{
    if (!plausible(e->start_ns, e->end_ns))
        return 0;
    if (RESERVE(np->ce_parts, np->n_ce_parts, np->cap_ce_parts))
        return -1;
    int batch = e->kind == TSC_EV_NP_CE_BATCH;
    np->ce_parts[np->n_ce_parts++] = (tsa_np_ce_part){
        .comm = e->aux, .batch = (uint8_t)batch, .flags = e->flags, .op_id = e->desc_id,
        .start_ns = (int64_t)e->start_ns, .end_ns = (int64_t)e->end_ns,
        .bytes = batch ? e->val & TSC_NP_BATCH_BYTES_MAX : 0,
        .count = (uint32_t)(batch ? e->val >> 48 : (e->val > UINT32_MAX ? UINT32_MAX : e->val))};
    return 0;
}

/* One record per op and stall; an op written again (it moved, then
 * stalled anew) keeps its latest. */
static int add_stall(struct tsa_nprof *np, const tsr_event *e)
{
    if (!plausible(e->start_ns, e->end_ns))
        return 0;
    tsa_np_stall s = {.comm = e->aux, .channel = e->flags, .send = (uint8_t)TSC_NP_STALL_SEND(e->val),
                      .state = TSC_NP_STALL_STATE(e->val), .peer = (int32_t)e->desc_id,
                      .op_id = TSC_NP_STALL_OP(e->val), .steps = TSC_NP_STALL_STEPS(e->val),
                      .start_ns = (int64_t)e->start_ns, .last_ns = (int64_t)e->end_ns};
    for (size_t i = 0; i < np->n_stalls; i++) {
        tsa_np_stall *o = &np->stalls[i];
        if (o->comm == s.comm && o->channel == s.channel && o->send == s.send &&
            o->peer == s.peer && o->op_id == s.op_id && o->start_ns == s.start_ns) {
            if (s.last_ns > o->last_ns)
                *o = s;
            return 0;
        }
    }
    if (RESERVE(np->stalls, np->n_stalls, np->cap_stalls))
        return -1;
    np->stalls[np->n_stalls++] = s;
    return 0;
}

int tsa_np_stall_ended(const struct tsa_nprof *np, const tsa_np_stall *s)
{
    for (size_t i = 0; i < np->n_proxies; i++) {
        const tsa_np_proxy *p = &np->proxies[i];
        if (p->comm == s->comm && p->op_id == s->op_id && p->channel == s->channel &&
            p->peer == s->peer && p->is_send == s->send && p->start_ns == s->start_ns)
            return 1;
    }
    return 0;
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
    case TSC_EV_NP_CE_COLL:
        if (!plausible(e->start_ns, e->end_ns))
            return 0;
        if (RESERVE(np->colls, np->n_colls, np->cap_colls))
            return -1;
        np->colls[np->n_colls++] = (tsa_np_coll){
            .comm = e->aux, .op = TSC_NP_COLL_OP(e->val), .channels = e->flags,
            .ce = e->kind == TSC_EV_NP_CE_COLL, .op_id = e->desc_id,
            .seq = TSC_NP_COLL_SEQ(e->val), .start_ns = (int64_t)e->start_ns,
            .end_ns = (int64_t)e->end_ns, .tid = e->tid};
        return 0;
    case TSC_EV_NP_PROXY: return add_proxy(np, e);
    case TSC_EV_NP_PROXY_WAIT: add_wait(np, e); return 0;
    case TSC_EV_NP_KERNEL_CH: return add_kernel_ch(np, e);
    case TSC_EV_NP_CE_SYNC:
    case TSC_EV_NP_CE_BATCH: return add_ce_part(np, e);
    case TSC_EV_NP_CAPTURED:
        if (RESERVE(np->captured, np->n_captured, np->cap_captured))
            return -1;
        np->captured[np->n_captured++] = (tsa_np_captured){
            .comm = e->aux, .op = TSC_NP_COLL_OP(e->val), .p2p = e->flags & 1,
            .count = TSC_NP_COLL_SEQ(e->val), .ns = (int64_t)(e->start_ns & INT64_MAX),
            .tid = e->tid};
        return 0;
    case TSC_EV_NP_PROXY_STALL: return add_stall(np, e);
    default: return 0; /* a later plugin kind */
    }
}

int tsa_nprof_on_meta(tsa_rank *r, const char *key, const char *value)
{
    int lost = !strcmp(key, TSC_META_NP_LOST), pxn = !strcmp(key, TSC_META_NP_PXN);
    uint64_t v = lost || pxn ? strtoull(value, NULL, 10) : 0;
    if (!v)
        return 0;
    struct tsa_nprof *np = get(r);
    if (!np)
        return -1;
    /* Counters only grow: a later META chunk holds the latest. */
    uint64_t *at = lost ? &np->lost : &np->pxn_ops;
    if (v > *at)
        *at = v;
    return 0;
}

void tsa_nprof_free(tsa_rank *r)
{
    if (!r->nprof)
        return;
    free(r->nprof->comms);
    free(r->nprof->colls);
    free(r->nprof->proxies);
    free(r->nprof->kch);
    free(r->nprof->ce_parts);
    free(r->nprof->captured);
    free(r->nprof->stalls);
    if (r->nprof->lean) {
        tsa_np_lean_free(r->nprof->lean);
        free(r->nprof->lean);
    }
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
