/* NCCL profiler plugin core (nprof.h): handle pools and the records. */
#include "nprof.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"
#include "recorder_internal.h"
#include "tsc_format.h"
#include "tsc_nccl_ops.h"
#include "tsc_tls.h"

/* Pool sizes: far more than NCCL keeps in flight per communicator (a
 * proxy op per channel and peer, at most 8 steps in flight per op). */
#define NP_COLLS 512u
#define NP_OPS 2048u
#define NP_STEPS 4096u

enum { H_COLL = 1, H_OP, H_STEP };

typedef struct np_coll {
    uint8_t kind;
    uint8_t channels;
    uint16_t comm;
    uint32_t op_id;
    uint64_t t0, val;
} np_coll;

typedef struct np_op {
    uint8_t kind;
    uint8_t channel;
    uint8_t is_send;
    uint16_t comm;
    uint32_t parent_op;
    int32_t peer;
    uint32_t steps;
    uint64_t t0, bytes, wait_peer, wire, wait_gpu;
} np_op;

/* Times of a step's states, 0 = not seen. */
typedef struct np_step {
    uint8_t kind;
    np_op *op;
    uint64_t t_gpu, t_peer, t_send, t_recv, t_flush, t_recv_gpu;
    uint64_t bytes;
} np_step;

struct tsc_np_ctx {
    uint16_t comm;
    _Atomic uint32_t next_coll, next_op, next_step;
    _Atomic uint32_t p2p_ordinal[2]; /* send, recv */
    np_coll colls[NP_COLLS];
    np_op ops[NP_OPS];
    np_step steps[NP_STEPS];
};

static _Atomic uint32_t g_comm_index;
static _Atomic uint32_t g_op_id;
static TSC_TLS uint64_t tls_init_comm;

static _Atomic uint32_t g_inits;
static int g_pointed;

void tsc_np_set_init_comm(uint64_t comm_id) { tls_init_comm = comm_id; }
void tsc_np_count_init(void) { atomic_fetch_add(&g_inits, 1); }
void tsc_np_set_pointed(void) { g_pointed = 1; }

/* In the dump rather than on stderr: an NCCL older than 2.23 has no
 * plugin at all, and saying so on every run of such a job is noise. */
void tsc_np_after_init(void)
{
    if (g_pointed && tsc_np_mode() != TSC_NP_OFF && atomic_load(&g_inits) == 0)
        tsc_rec_meta("nccl_profiler", "not loaded by NCCL (tscope serves ncclProfiler_v1..v5, "
                                      "NCCL 2.23-2.28)");
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

int tsc_np_mask(enum tsc_np_mode m)
{
    switch (m) {
    case TSC_NP_LIGHT: return TSC_NP_COLL | TSC_NP_P2P;
    case TSC_NP_FULL: return TSC_NP_COLL | TSC_NP_P2P | TSC_NP_PROXY_OP | TSC_NP_PROXY_STEP;
    default: return 0;
    }
}

tsc_np_ctx *tsc_np_ctx_new(int version, int rank)
{
    if (!tsc_rec_active()) {
        declined(0);
        return NULL;
    }
    tsc_np_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        declined(1);
        return NULL;
    }
    static const char *const modes[] = {"off", "light", "full"};
    char what[32];
    snprintf(what, sizeof what, "v%d %s", version, modes[tsc_np_mode()]);
    tsc_rec_meta("nccl_profiler", what);
    uint32_t idx = atomic_fetch_add(&g_comm_index, 1) + 1;
    c->comm = (uint16_t)(idx > 0xffff ? 0xffff : idx);
    uint64_t now = tsc_now_ns();
    tsc_rec_event(TSC_EV_NP_COMM, (uint8_t)version, c->comm, (uint32_t)rank, now, now,
                  tls_init_comm);
    return c;
}

void tsc_np_ctx_free(tsc_np_ctx *ctx) { free(ctx); }

static uint32_t take(_Atomic uint32_t *cursor, uint32_t n)
{
    return atomic_fetch_add_explicit(cursor, 1, memory_order_relaxed) & (n - 1);
}

static void *coll_start(tsc_np_ctx *ctx, uint64_t val, uint8_t channels)
{
    np_coll *h = &ctx->colls[take(&ctx->next_coll, NP_COLLS)];
    uint32_t id = atomic_fetch_add_explicit(&g_op_id, 1, memory_order_relaxed) + 1;
    *h = (np_coll){.kind = H_COLL, .channels = channels, .comm = ctx->comm,
                   .op_id = id ? id : 1, .t0 = tsc_now_ns(), .val = val};
    return h;
}

void *tsc_np_start_coll(tsc_np_ctx *ctx, uint8_t op, uint64_t seq, uint8_t channels)
{
    return ctx ? coll_start(ctx, TSC_NP_COLL_VAL(op, seq), channels) : NULL;
}

void *tsc_np_start_p2p(tsc_np_ctx *ctx, uint8_t op, int peer, uint8_t channels)
{
    if (!ctx)
        return NULL;
    uint32_t ord = atomic_fetch_add_explicit(&ctx->p2p_ordinal[op == TSC_NCCL_RECV], 1,
                                             memory_order_relaxed);
    uint64_t seq = (uint64_t)((uint32_t)peer & 0xffffffu) << 32 | ord;
    return coll_start(ctx, TSC_NP_COLL_VAL(op, seq), channels);
}

void *tsc_np_start_proxy_op(tsc_np_ctx *ctx, void *parent, const tsc_np_proxy_op *d)
{
    if (!ctx)
        return NULL;
    np_op *h = &ctx->ops[take(&ctx->next_op, NP_OPS)];
    const np_coll *p = parent;
    /* Another process's handle (PXN) is not ours to read. */
    uint32_t parent_op = p && d->pid == getpid() && p->kind == H_COLL ? p->op_id : 0;
    *h = (np_op){.kind = H_OP, .channel = d->channel, .is_send = d->is_send != 0,
                 .comm = ctx->comm, .parent_op = parent_op, .peer = d->peer,
                 .t0 = tsc_now_ns()};
    return h;
}

void *tsc_np_start_step(tsc_np_ctx *ctx, void *parent_op)
{
    np_op *op = parent_op;
    if (!ctx || !op || op->kind != H_OP)
        return NULL;
    np_step *h = &ctx->steps[take(&ctx->next_step, NP_STEPS)];
    *h = (np_step){.kind = H_STEP, .op = op};
    return h;
}

void tsc_np_record(void *handle, int state, const tsc_np_state_args *args)
{
    np_step *s = handle;
    if (!s || s->kind != H_STEP)
        return;
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
    if (args && args->step.trans_size > s->bytes)
        s->bytes = args->step.trans_size;
}

static uint64_t span(uint64_t from, uint64_t to) { return from && to > from ? to - from : 0; }

/* A step's phases into its op: steps of one op run on one proxy thread,
 * so plain adds. */
static void step_done(np_step *s, uint64_t now)
{
    np_op *op = s->op;
    if (op->is_send) {
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
}

static void op_done(np_op *op, uint64_t now)
{
    tsc_rec_event(TSC_EV_NP_PROXY, op->channel, op->comm, op->parent_op, op->t0, now,
                  op->bytes);
    tsc_rec_event(TSC_EV_NP_PROXY_WAIT, op->is_send, (uint16_t)(op->steps > 0xffff ? 0xffff : op->steps),
                  (uint32_t)op->peer, op->wait_peer, op->wire, op->wait_gpu);
}

void tsc_np_stop(void *handle)
{
    if (!handle)
        return;
    uint64_t now = tsc_now_ns();
    switch (*(uint8_t *)handle) {
    case H_COLL: {
        np_coll *c = handle;
        tsc_rec_event(TSC_EV_NP_COLL, c->channels, c->comm, c->op_id, c->t0, now, c->val);
        break;
    }
    case H_OP: op_done(handle, now); break;
    case H_STEP: step_done(handle, now); break;
    default: break;
    }
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
