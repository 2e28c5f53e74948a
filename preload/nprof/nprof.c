/* NCCL profiler plugin core (nprof.h): events into records. */
#include "nprof.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nprof_pool.h"
#include "parts.h"
#include "rec_meta.h"
#include "recorder.h"
#include "rec_thread.h"
#include "recorder_internal.h"
#include "self_cost.h"
#include "tsc_format.h"
#include "tsc_nccl_ops.h"
#include "tsc_tls.h"

/* A collective, send/recv or copy-engine collective: its record is
 * written at its stop; its identity (communicator, op id) stays readable
 * by the proxy ops and kernel channels that name it afterwards. */
typedef struct np_coll {
    uint8_t kind;       /* TSC_EV_NP_COLL or TSC_EV_NP_CE_COLL */
    uint8_t flags;
    uint16_t comm;
    uint32_t op_id;
    uint64_t t0, val;
} np_coll;

typedef struct np_op {
    uint8_t channel;
    uint8_t wait_flags; /* TSC_EV_NP_PROXY_WAIT flags: send, PXN */
    uint16_t comm;
    uint32_t parent_op;
    int32_t peer;
    uint32_t steps;
    uint32_t tid;       /* the thread that started it: a stall record joins its stream */
    uint64_t t0, bytes, wait_peer, wire, wait_gpu;
    uint64_t state_bytes; /* v1-v3: bytes so far, from the op's own states */
    /* Its progress, for the writer looking for stalled ops (hangs):
     * live_t, the time of its last step state or step end (0 until the op
     * is filled in, and again once it ended), published last; live_info,
     * steps ended | latest step's state << 16; stall_t, the live_t the
     * writer last wrote a stall record for. */
    _Atomic uint64_t live_t;
    _Atomic uint32_t live_info;
    _Atomic uint64_t stall_t;
} np_op;

/* Times of a step's states, 0 = not seen. */
typedef struct np_step {
    void *op;
    uint64_t t_gpu, t_peer, t_send, t_recv, t_flush, t_recv_gpu;
    uint64_t bytes;
} np_step;

/* A kernel channel, CE sync or CE batch: one record at its stop, its
 * start and end host times; a kernel channel's GPU timer readings stay
 * here (their difference goes into the record). */
typedef struct np_span {
    uint8_t kind;       /* TSC_EV_NP_KERNEL_CH, _CE_SYNC, _CE_BATCH */
    uint8_t flags;
    uint16_t comm;
    uint32_t parent_op;
    uint64_t start, val;
    uint64_t gpu_start, gpu_stop; /* 0: not given */
} np_span;

struct tsc_np_ctx {
    uint16_t comm;
    _Atomic uint32_t p2p_ordinal[2]; /* send, recv */
};

static _Atomic uint32_t g_comm_index;
static _Atomic uint32_t g_op_id;
static _Atomic uint64_t g_pxn_ops;
/* This process, as NCCL names it in a proxy op: set at each init, so an
 * op's check costs no system call (getpid is one). */
static _Atomic pid_t g_pid;

static _Atomic uint32_t g_inits;

void tsc_np_count_init(void) { atomic_fetch_add(&g_inits, 1); }

/* In the dump rather than on stderr: an NCCL older than 2.23 has no
 * plugin at all, and saying so on every run of such a job is noise. */
void tsc_np_after_init(void)
{
    if (tsc_np_pointed() && tsc_np_mode() != TSC_NP_OFF && atomic_load(&g_inits) == 0)
        tsc_rec_meta(TSC_META_NP, "not loaded by NCCL (tscope serves ncclProfiler_v1..v6, "
                                  "NCCL 2.23-2.29)");
}

void tsc_np_publish_meta(void)
{
    uint64_t lost = np_lost(), pxn = atomic_load_explicit(&g_pxn_ops, memory_order_relaxed);
    if (lost)
        tsc_meta_set_int(TSC_META_NP_LOST, (long long)lost);
    if (pxn)
        tsc_meta_set_int(TSC_META_NP_PXN, (long long)pxn);
}

/* Why a communicator gets no context, in one line where nothing else said
 * it: a recorder that failed to set up has already said why. */
static void declined(int active)
{
    if (active)
        tsc_warn_once("np_oom", "tscope's NCCL profiler plugin is out of memory for a "
                      "communicator: NCCL runs on without it");
    else if (tsc_rec_config()->disabled)
        tsc_warn_once("np_disabled", "tscope's NCCL profiler plugin declined a communicator: "
                      "TSCOPE_DISABLE is set; NCCL runs on without it");
}

int tsc_np_mask(enum tsc_np_mode m, int version)
{
    if (m == TSC_NP_OFF)
        return 0;
    int mask = TSC_NP_COLL | TSC_NP_P2P;
    if (version >= 5)
        mask |= TSC_NP_COLL_API | TSC_NP_P2P_API;
    if (version >= 6)
        mask |= TSC_NP_CE_COLL;
    /* Kernel channels are diagnosis detail: asking for them makes NCCL add a
     * polling proxy op per channel to every collective, which the default
     * must not cost the job. */
    if (m == TSC_NP_FULL) {
        mask |= TSC_NP_PROXY_OP | TSC_NP_PROXY_STEP;
        if (version >= 3)
            mask |= TSC_NP_KERNEL_CH;
        if (version >= 6)
            mask |= TSC_NP_CE_SYNC | TSC_NP_CE_BATCH;
    }
    return mask;
}

/* The process's pools, once: light capture has no proxy ops or steps. */
static int pools_ready(void)
{
    uint32_t count[NP_KINDS] = {0};
    tsc_np_pool_counts(count + NP_COLL);
    if (tsc_np_mode() != TSC_NP_FULL)
        count[NP_OP] = count[NP_STEP] = 0;
    const size_t size[NP_KINDS] = {0, sizeof(np_coll), sizeof(np_op), sizeof(np_step),
                                   sizeof(np_span)};
    return np_pools_init(count, size) == 0;
}

tsc_np_ctx *tsc_np_ctx_new(int version, int rank)
{
    if (!tsc_rec_active()) {
        declined(0);
        return NULL;
    }
    tsc_np_ctx *c = pools_ready() ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        declined(1);
        return NULL;
    }
    static const char *const modes[] = {"off", "light", "full"};
    char what[32];
    snprintf(what, sizeof what, "v%d %s", version, modes[tsc_np_mode()]);
    tsc_rec_meta(TSC_META_NP, what);
    atomic_store_explicit(&g_pid, getpid(), memory_order_relaxed);
    uint32_t idx = atomic_fetch_add(&g_comm_index, 1) + 1;
    c->comm = (uint16_t)(idx > 0xffff ? 0xffff : idx);
    uint64_t now = tsc_now_ns();
    tsc_rec_event(TSC_EV_NP_COMM, (uint8_t)version, c->comm, (uint32_t)rank, now, now,
                  tsc_call_init_comm);
    return c;
}

void tsc_np_ctx_free(tsc_np_ctx *ctx) { free(ctx); }

static uint32_t next_op_id(void)
{
    uint32_t id = atomic_fetch_add_explicit(&g_op_id, 1, memory_order_relaxed) + 1;
    return id ? id : 1;
}

static void *coll_start(tsc_np_ctx *ctx, uint8_t kind, uint8_t flags, uint64_t val)
{
    np_coll *c;
    void *h = np_take(NP_COLL, (void **)&c);
    if (!h)
        return NULL;
    *c = (np_coll){.kind = kind, .flags = flags, .comm = ctx->comm, .op_id = next_op_id(),
                   .t0 = tsc_now_ns(), .val = val};
    np_set_ident(NP_COLL, h, (uint64_t)c->comm << 32 | c->op_id);
    return h;
}

void *tsc_np_start_coll(tsc_np_ctx *ctx, uint8_t op, uint64_t seq, uint8_t channels)
{
    return ctx ? coll_start(ctx, TSC_EV_NP_COLL, channels, TSC_NP_COLL_VAL(op, seq)) : NULL;
}

void *tsc_np_start_p2p(tsc_np_ctx *ctx, uint8_t op, int peer, uint8_t channels)
{
    if (!ctx)
        return NULL;
    uint32_t ord = atomic_fetch_add_explicit(&ctx->p2p_ordinal[op == TSC_NCCL_RECV], 1,
                                             memory_order_relaxed);
    uint64_t seq = (uint64_t)((uint32_t)peer & 0xffffffu) << 32 | ord;
    return coll_start(ctx, TSC_EV_NP_COLL, channels, TSC_NP_COLL_VAL(op, seq));
}

void *tsc_np_start_ce_coll(tsc_np_ctx *ctx, uint8_t op, uint64_t seq, uint8_t flags)
{
    return ctx ? coll_start(ctx, TSC_EV_NP_CE_COLL, flags, TSC_NP_COLL_VAL(op, seq)) : NULL;
}

/* The communicator and op id of a parent collective; 0 when NCCL gave
 * none, or its slot was taken again since (counted lost: not mixed). */
static uint64_t parent_ident(void *parent)
{
    uint64_t ident = 0;
    return np_read_ident(NP_COLL, parent, &ident) ? ident : 0;
}

/* The budget's "fewer NCCL plugin events" level (cost_levels.c): proxy
 * ops, their steps, kernel channels and copy-engine parts are not
 * recorded (NCCL takes a NULL handle as "not followed"); collectives and
 * API calls are.  Not counted lost: the dump's cost_step says so. */
static int detail_cut(void) { return tsc_cost_cut(TSC_COST_PART_NCCL_DETAIL) > 0; }

void *tsc_np_start_proxy_op(tsc_np_ctx *ctx, void *parent, const tsc_np_proxy_op *d)
{
    if (detail_cut())
        return NULL;
    int own = d->pid == atomic_load_explicit(&g_pid, memory_order_relaxed);
    np_op *op;
    void *h = np_take(NP_OP, (void **)&op);
    if (!h)
        return NULL;
    /* Another process's context and parent are not addresses here (PXN):
     * counted, recorded without its communicator and collective. */
    uint64_t ident = own ? parent_ident(parent) : 0;
    if (!own)
        atomic_fetch_add_explicit(&g_pxn_ops, 1, memory_order_relaxed);
    tsc_thread *self = tsc_rec_thread();
    *op = (np_op){.channel = d->channel,
                  .wait_flags = (uint8_t)((d->is_send != 0) | (own ? 0 : TSC_NP_WAIT_PXN)),
                  .comm = own && ctx ? ctx->comm : 0, .parent_op = (uint32_t)ident,
                  .peer = d->peer, .tid = self ? self->tid : 0, .t0 = tsc_now_ns()};
    atomic_store_explicit(&op->live_info, TSC_NP_STALL_STEP_ENDED << 16, memory_order_relaxed);
    atomic_store_explicit(&op->live_t, op->t0, memory_order_release);
    return h;
}

/* An op moved on: one of its steps reached a state, or ended. */
static void op_progress(np_op *op, int state, uint64_t now)
{
    atomic_store_explicit(&op->live_info, op->steps | (uint32_t)(state & 0xff) << 16,
                          memory_order_relaxed);
    atomic_store_explicit(&op->live_t, now, memory_order_release);
}

void *tsc_np_start_step(void *parent_op)
{
    if (!parent_op)
        return NULL; /* its op was dropped (counted there) */
    np_step *s;
    void *h = np_take(NP_STEP, (void **)&s);
    if (h)
        *s = (np_step){.op = parent_op};
    return h;
}

static np_span *span_start(void *parent, uint8_t kind, uint8_t flags, uint64_t val, void **h)
{
    uint64_t ident;
    *h = NULL;
    if (!np_read_ident(NP_COLL, parent, &ident))
        return NULL; /* no collective to name: nothing worth a record */
    np_span *sp;
    *h = np_take(NP_SPAN, (void **)&sp);
    if (!*h)
        return NULL;
    *sp = (np_span){.kind = kind, .flags = flags, .comm = (uint16_t)(ident >> 32),
                    .parent_op = (uint32_t)ident, .start = tsc_now_ns(), .val = val};
    return sp;
}

void *tsc_np_start_kernel_ch(void *parent, uint8_t channel, uint64_t gpu_start, int have_gpu)
{
    void *h;
    if (detail_cut())
        return NULL;
    uint8_t flags = (uint8_t)(channel & 0x7f) | (have_gpu ? 0 : TSC_NP_KCH_NO_GPU_TIMER);
    np_span *sp = span_start(parent, TSC_EV_NP_KERNEL_CH, flags, 0, &h);
    if (sp && have_gpu)
        sp->gpu_start = gpu_start;
    return h;
}

void *tsc_np_start_ce_part(void *parent, uint8_t kind, uint8_t flags, uint64_t val)
{
    void *h;
    if (detail_cut())
        return NULL;
    span_start(parent, kind, flags, val, &h);
    return h;
}

void tsc_np_api_call(tsc_np_ctx *ctx, int p2p, uint8_t op, uint64_t count, int captured)
{
    if (!ctx || !captured)
        return;
    uint64_t now = tsc_now_ns();
    tsc_rec_event(TSC_EV_NP_CAPTURED, (uint8_t)(p2p != 0), ctx->comm, 0, now, now,
                  TSC_NP_COLL_VAL(op, count));
}

static void step_record(np_step *s, int state, const tsc_np_state_args *args)
{
    uint64_t now = tsc_now_ns();
    switch (state) {
    case TSC_NP_STEP_SEND_GPU_WAIT: s->t_gpu = now; break;
    case TSC_NP_STEP_SEND_PEER_WAIT: s->t_peer = now; break;
    case TSC_NP_STEP_SEND_WAIT: s->t_send = now; break;
    case TSC_NP_STEP_RECV_WAIT: s->t_recv = now; break;
    case TSC_NP_STEP_RECV_FLUSH_WAIT: s->t_flush = now; break;
    case TSC_NP_STEP_RECV_GPU_WAIT: s->t_recv_gpu = now; break;
    default: return;
    }
    /* The size is the step's own where NCCL has just set it (posted to the
     * network, data arrived); the other states carry the step before's. */
    if (args && (state == TSC_NP_STEP_SEND_WAIT || state == TSC_NP_STEP_RECV_FLUSH_WAIT))
        s->bytes = args->step.trans_size;
    np_op *op = np_peek(NP_OP, s->op); /* stale: step_done counts it */
    if (op)
        op_progress(op, state, now);
}

/* v1-v3 (NCCL 2.23-2.26) record the op's own states 0-7 (posted ... done)
 * with the bytes moved so far, and its steps' states without a size. */
#define NP_OP_STATE_LAST 7

static void op_record(np_op *op, int state, const tsc_np_state_args *args)
{
    if (args && state >= 0 && state <= NP_OP_STATE_LAST && args->step.trans_size > op->state_bytes)
        op->state_bytes = args->step.trans_size;
}

void tsc_np_record(void *handle, int state, const tsc_np_state_args *args)
{
    switch (np_kind_of(handle)) {
    case NP_STEP: {
        np_step *s = np_owned(NP_STEP, handle);
        if (s)
            step_record(s, state, args);
        break;
    }
    case NP_SPAN: {
        np_span *sp = state == TSC_NP_KERNEL_CH_STOP && args ? np_owned(NP_SPAN, handle) : NULL;
        if (sp && sp->kind == TSC_EV_NP_KERNEL_CH && sp->gpu_start)
            sp->gpu_stop = args->kernel_ch.ptimer;
        break;
    }
    case NP_OP: {
        np_op *op = np_owned(NP_OP, handle);
        if (op)
            op_record(op, state, args);
        break;
    }
    default: break;
    }
}

static uint64_t span(uint64_t from, uint64_t to) { return from && to > from ? to - from : 0; }

/* A step's phases into its op: steps of one op run on one proxy thread,
 * and NCCL stops them before the op, so the op is still open here. */
static void step_done(np_step *s, uint64_t now)
{
    np_op *op = np_owned(NP_OP, s->op);
    if (!op)
        return; /* the op is gone (stale): counted, not mixed */
    if (op->wait_flags & 1) {
        uint64_t gpu_end = s->t_peer ? s->t_peer : s->t_send;
        op->wait_gpu += span(s->t_gpu, gpu_end);
        op->wait_peer += span(s->t_peer, s->t_send);
        op->wire += span(s->t_send, now);
    } else {
        op->wait_peer += span(s->t_recv, s->t_flush);
        op->wire += span(s->t_flush, s->t_recv_gpu);
        op->wait_gpu += span(s->t_recv_gpu, now);
    }
    op->bytes += s->bytes;
    op->steps++;
    tsc_cost_part_add(TSC_COST_PART_NCCL_DETAIL, 0, 1); /* a step costs about a record */
    op_progress(op, TSC_NP_STALL_STEP_ENDED, now);
}

static void op_done(const np_op *op, uint64_t now)
{
    uint64_t bytes = op->bytes ? op->bytes : op->state_bytes;
    tsc_cost_part_add(TSC_COST_PART_NCCL_DETAIL, 0, 2);
    tsc_rec_event(TSC_EV_NP_PROXY, op->channel, op->comm, op->parent_op, op->t0, now, bytes);
    tsc_rec_event(TSC_EV_NP_PROXY_WAIT, op->wait_flags,
                  (uint16_t)(op->steps > 0xffff ? 0xffff : op->steps), (uint32_t)op->peer,
                  op->wait_peer, op->wire, op->wait_gpu);
}

/* A kernel channel's record carries its GPU time (the GPU timer's stop
 * minus its start); every record's start and end are host times, as the
 * format's are (a reader orders and windows records by them). */
static void span_done(np_span *sp, uint64_t now)
{
    if (sp->kind == TSC_EV_NP_KERNEL_CH && sp->gpu_start) {
        if (sp->gpu_stop < sp->gpu_start) {
            np_count_lost(); /* no GPU stop time: half an event */
            return;
        }
        sp->val = sp->gpu_stop - sp->gpu_start;
    }
    tsc_cost_part_add(TSC_COST_PART_NCCL_DETAIL, 0, 1);
    tsc_rec_event(sp->kind, sp->flags, sp->comm, sp->parent_op, sp->start, now, sp->val);
}

void tsc_np_stop(void *handle)
{
    enum np_kind k = np_kind_of(handle);
    void *slot = k ? np_owned(k, handle) : NULL;
    if (!slot)
        return;
    uint64_t now = tsc_now_ns();
    switch (k) {
    case NP_COLL: {
        const np_coll *c = slot;
        tsc_rec_event(c->kind, c->flags, c->comm, c->op_id, c->t0, now, c->val);
        break;
    }
    case NP_OP:
        op_done(slot, now);
        atomic_store_explicit(&((np_op *)slot)->live_t, 0, memory_order_relaxed);
        break;
    case NP_STEP: step_done(slot, now); break;
    case NP_SPAN: span_done(slot, now); break;
    default: break;
    }
    np_release(k, handle);
}

uint8_t tsc_np_op_of_name(const char *func)
{
    static const struct { const char *name; uint8_t op; } names[] = {
        {"AllReduce", TSC_NCCL_ALLREDUCE}, {"AllGather", TSC_NCCL_ALLGATHER},
        {"ReduceScatter", TSC_NCCL_REDUCESCATTER}, {"Broadcast", TSC_NCCL_BROADCAST},
        {"Reduce", TSC_NCCL_REDUCE}, {"AllToAll", TSC_NCCL_ALLTOALL},
        {"AlltoAll", TSC_NCCL_ALLTOALL}, {"Gather", TSC_NCCL_GATHER},
        {"Scatter", TSC_NCCL_SCATTER}, {"Send", TSC_NCCL_SEND}, {"Recv", TSC_NCCL_RECV},
    };
    if (!func)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(func, names[i].name))
            return names[i].op;
    return 0;
}

/* ------------------------------------------------------ stalled ops */

typedef struct stall_scan {
    uint64_t now;
    tsc_event *out;
    uint32_t *tids;
    size_t n, cap;
} stall_scan;

static void stalled_one(void *slot, void *handle, void *arg)
{
    np_op *op = slot;
    stall_scan *sc = arg;
    uint64_t t = atomic_load_explicit(&op->live_t, memory_order_acquire);
    if (!t || sc->n >= sc->cap || sc->now < t + TSC_NP_STALL_NS ||
        atomic_load_explicit(&op->stall_t, memory_order_relaxed) == t)
        return;
    uint32_t info = atomic_load_explicit(&op->live_info, memory_order_relaxed);
    tsc_event e = {.kind = TSC_EV_NP_PROXY_STALL, .flags = op->channel, .aux = op->comm,
                   .desc = (uint32_t)op->peer, .start_ns = op->t0, .end_ns = t,
                   .val = TSC_NP_STALL_VAL(op->parent_op, info & 0xffff, info >> 16,
                                           op->wait_flags & 1)};
    uint32_t tid = op->tid;
    int pxn = (op->wait_flags & TSC_NP_WAIT_PXN) != 0;
    /* What was read is this op's only if it is still open and unmoved. */
    if (pxn || np_peek(NP_OP, handle) != slot ||
        atomic_load_explicit(&op->live_t, memory_order_acquire) != t)
        return;
    atomic_store_explicit(&op->stall_t, t, memory_order_relaxed);
    sc->out[sc->n] = e;
    sc->tids[sc->n++] = tid;
}

size_t tsc_np_stalled_ops(uint64_t now, tsc_event *out, uint32_t *tids, size_t cap)
{
    stall_scan sc = {.now = now, .out = out, .tids = tids, .cap = cap};
    np_each_open(NP_OP, stalled_one, &sc);
    return sc.n;
}
