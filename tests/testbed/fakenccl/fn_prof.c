/* The test NCCL's profiler events (fn_prof.h), in the order NCCL reports
 * them; the loader and version adapters are fn_prof_load.c. */
#include "fn_prof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fn_net.h"
#include "fn_prof_host.h"
#include "fn_reduce.h"

#define FN_MAX_KCH 64

static struct {
    int channels, steps;
    long step_us;
    long graph_call, graph_replays;
    int ce, open_ops, pxn;
} g = {.graph_call = -1};
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void configure(void)
{
    g.channels = (int)fn_env_long("FAKENCCL_CHANNELS", 2, 1, 32);
    g.steps = (int)fn_env_long("FAKENCCL_NET_STEPS", 4, 1, 64);
    fn_net_configure();
    g.step_us = fn_net_step_us();
    g.ce = (int)fn_env_long("FAKENCCL_CE", 0, 0, 1000);
    g.open_ops = fn_env_long("FAKENCCL_PROXY_OPEN", 0, 0, 1) != 0;
    g.pxn = fn_env_long("FAKENCCL_PXN", 0, 0, 1) != 0;
    const char *graph = getenv("FAKENCCL_GRAPH");
    if (!graph || sscanf(graph, "%ld:%ld", &g.graph_call, &g.graph_replays) != 2 ||
        g.graph_replays < 0 || g.graph_replays > 1000)
        g.graph_call = -1;
}

static void setup(void) { pthread_once(&g_once, configure); }

void fn_prof_comm_init(ncclComm_t c)
{
    setup();
    fn_prof_load_init(c);
}

void fn_prof_comm_fini(ncclComm_t c) { fn_prof_load_fini(c); }

static int active(ncclComm_t c) { return c->prof_ctx || g.step_us > 0; }
static int old_nccl(void) { return fn_prof_version() <= 3; }

static const char *func_name(enum fn_kind k)
{
    static const char *const names[] = {"", "AllReduce", "AllGather", "ReduceScatter",
                                        "Broadcast", "Reduce", "AllToAll", "Gather",
                                        "Scatter", "Send", "Recv"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "";
}

/* The GPU's global timer stands apart from the host clock: another epoch. */
static uint64_t gpu_timer(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 777000000000ull;
}

/* -------------------------------------------------------- proxy ops */

/* A step's state: v4+ with its size; NCCL 2.23-2.26 (v1-v3) without. */
static void step_state(ncclComm_t c, void *st, int state, size_t bytes)
{
    fn_net_lag(c);
    if (old_nccl()) {
        fn_prof_state_v1(st, state, NULL);
        return;
    }
    fn_state_args a = {.proxyStep = {.transSize = bytes}};
    fn_prof_state(st, state, &a);
}

/* v1-v3: the op's own states, with the bytes moved so far. */
static void op_state(void *op, int state, size_t so_far, int steps)
{
    fn_state_args_v1 a = {.proxyOp = {.transSize = so_far, .steps = steps}};
    if (old_nccl())
        fn_prof_state_v1(op, state, &a);
}

typedef struct {
    ncclComm_t c;
    void *ctx;          /* the context NCCL passes (another process's under PXN) */
    void *parent;
    int ch, peer, is_send;
    size_t bytes;
    void *h;
    int ring;           /* a step of the simulated ring: waits on its peer */
} proxy_op;

static void op_begin(proxy_op *p)
{
    fn_descr_v6 d = {.parentObj = p->parent};
    d.proxyOp.pid = p->ctx == p->c->prof_ctx ? getpid() : getpid() + 1;
    d.proxyOp.channelId = (uint8_t)p->ch;
    d.proxyOp.peer = p->peer;
    d.proxyOp.nSteps = g.steps;
    d.proxyOp.chunkSize = (int)(p->bytes / (size_t)g.steps);
    d.proxyOp.isSend = p->is_send;
    p->h = fn_prof_start_ctx(p->c, p->ctx, fnProfProxyOp, &d);
    if (old_nccl())
        op_state(p->h, p->is_send ? fnOpSendPosted : fnOpRecvPosted, 0, 0);
    else if (p->h) {
        fn_state_args none = {{0}};
        fn_prof_state(p->h, fnOpInProgress, &none);
    }
}

/* Step s through the states NCCL's network proxy records, in its order.  A
 * ring step's data leaves once the sender has it and arrives when its
 * sender put it on the wire; any other step spends its wire time at both
 * ends alone. */
static void op_step(proxy_op *p, int s)
{
    ncclComm_t c = p->c;
    size_t step_bytes = p->bytes / (size_t)g.steps;
    long gpu = g.step_us / 10;
    fn_descr_v6 sd = {.parentObj = p->h};
    sd.proxyStep.step = s;
    void *st = p->h ? fn_prof_start_ctx(c, p->ctx, fnProfProxyStep, &sd) : NULL;
    size_t so_far = step_bytes * (size_t)(s + 1);
    if (p->is_send) {
        step_state(c, st, fnStepSendGpuWait, step_bytes);
        fn_pause_us(gpu);
        if (!old_nccl())
            step_state(c, st, fnStepSendPeerWait, step_bytes);
        step_state(c, st, fnStepSendWait, step_bytes);
        op_state(p->h, fnOpSendTransmitted, so_far, s + 1);
        if (p->ring && fn_net_stuck(c, p->peer, p->ch))
            fn_net_hang();
        fn_pause_us(fn_net_wire_us(c, c->rank, p->peer, p->ch));
        if (p->ring)
            fn_net_deliver(c, p->peer, p->ch);
    } else {
        step_state(c, st, fnStepRecvWait, step_bytes);
        if (p->ring)
            fn_net_await(c, p->ch);
        else
            fn_pause_us(fn_net_wire_us(c, p->peer, c->rank, p->ch));
        step_state(c, st, fnStepRecvFlushWait, step_bytes);
        op_state(p->h, fnOpRecvReceived, so_far, s + 1);
        step_state(c, st, fnStepRecvGpuWait, step_bytes);
        fn_pause_us(gpu);
    }
    fn_net_lag(c);
    fn_prof_stop(st);
}

static void op_steps(proxy_op *p)
{
    for (int s = 0; s < g.steps; s++)
        op_step(p, s);
}

static void op_end(proxy_op *p)
{
    op_state(p->h, p->is_send ? fnOpSendDone : fnOpRecvDone,
             p->bytes / (size_t)g.steps * (size_t)g.steps, g.steps);
    fn_prof_stop(p->h);
}

/* The simulated ring (fn_net.h): every channel's send and receive open
 * at once, as NCCL's proxy runs them, and each step in turn on every
 * channel: a send of step s, whose data (for s > 0) is the step received
 * before, then the receive of step s from the previous rank. */
static void ring_paced(ncclComm_t c, proxy_op *ops, int n)
{
    c->net_colls++;
    for (int i = 0; i < n; i++) {
        ops[i].ring = 1;
        op_begin(&ops[i]);
    }
    for (int s = 0; s < g.steps; s++)
        for (int i = 0; i < n; i++)
            op_step(&ops[i], s);
    for (int i = 0; i < n; i++)
        op_end(&ops[i]);
}

/* A ring on every channel: a send to the next rank and a receive from the
 * previous; over the simulated network paced step by step, else one after
 * the other, or all open at once (FAKENCCL_PROXY_OPEN). */
static void ring_ops(ncclComm_t c, void *parent, size_t bytes)
{
    proxy_op ops[64];
    int n = 0;
    size_t per_ch = bytes / (size_t)g.channels;
    int next = (c->rank + 1) % c->nranks, prev = (c->rank + c->nranks - 1) % c->nranks;
    for (int ch = 0; ch < g.channels; ch++) {
        ops[n++] = (proxy_op){c, c->prof_ctx, parent, ch, next, 1, per_ch, NULL, 0};
        ops[n++] = (proxy_op){c, c->prof_ctx, parent, ch, prev, 0, per_ch, NULL, 0};
    }
    if (g.step_us > 0 && !g.open_ops) {
        ring_paced(c, ops, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        op_begin(&ops[i]);
        if (!g.open_ops) {
            op_steps(&ops[i]);
            op_end(&ops[i]);
        }
    }
    for (int i = 0; g.open_ops && i < n; i++)
        op_steps(&ops[i]);
    for (int i = 0; g.open_ops && i < n; i++)
        op_end(&ops[i]);
}

/* PXN: an op this proxy runs for another process; NCCL passes that
 * process's context and parent handle, not addresses here. */
static void pxn_op(ncclComm_t c, size_t bytes)
{
    if (!g.pxn || !c->prof_ctx)
        return;
    proxy_op p = {c, (void *)(uintptr_t)0x10, (void *)(uintptr_t)0xdeadbeef000ull, 0,
                  (c->rank + 1) % c->nranks, 1, bytes, NULL, 0};
    op_begin(&p);
    op_steps(&p);
    op_end(&p);
}

/* ------------------------------------------------- kernel channels */

/* The calling thread's open kernel channels, ended after the data moved
 * (NCCL's proxy thread reports a channel's start and end as the kernel
 * runs them). */
static __thread struct {
    void *h[FN_MAX_KCH];
    int n;
} t_kch;

static void kernel_channels(ncclComm_t c, void *parent, int channels)
{
    for (int ch = 0; parent && ch < channels && t_kch.n < FN_MAX_KCH; ch++) {
        fn_descr_v6 d = {.parentObj = parent};
        d.kernelCh.channelId = (uint8_t)ch;
        d.kernelCh.pTimer = gpu_timer();
        void *h = fn_prof_start(c, fnProfKernelCh, &d);
        if (h)
            t_kch.h[t_kch.n++] = h;
    }
}

static void kernel_channels_end(void)
{
    for (int i = 0; i < t_kch.n; i++) {
        if (fn_prof_version() >= 4) {
            fn_state_args a = {.kernelCh = {.pTimer = gpu_timer()}};
            fn_prof_state(t_kch.h[i], fnKernelChStop, &a);
        }
        fn_prof_stop(t_kch.h[i]);
    }
    t_kch.n = 0;
}

/* ------------------------------------------------------ collectives */

static size_t op_bytes(const fn_op *op) { return op->count * fn_dtype_size(op->dtype); }

int fn_prof_api(const fn_op *op)
{
    setup();
    ncclComm_t c = op->comm;
    int p2p = op->kind == FN_SEND || op->kind == FN_RECV;
    int captured = !p2p && c->nranks > 1 && (long)c->prof_calls++ == g.graph_call;
    fn_descr_v6 d = {0};
    if (p2p) {
        d.p2pApi.func = func_name(op->kind);
        d.p2pApi.count = op->count;
        d.p2pApi.datatype = "ncclFloat32";
        d.p2pApi.stream = op->stream;
    } else {
        d.collApi.func = func_name(op->kind);
        d.collApi.count = op->count;
        d.collApi.datatype = "ncclFloat32";
        d.collApi.root = op->root;
        d.collApi.stream = op->stream;
        d.collApi.graphCaptured = captured;
    }
    fn_prof_stop(fn_prof_start(c, p2p ? fnProfP2pApi : fnProfCollApi, &d));
    return captured;
}

static int ce_kind(enum fn_kind k)
{
    return k == FN_ALLGATHER || k == FN_ALLTOALL || k == FN_GATHER || k == FN_SCATTER;
}

/* One synchronisation of the ranks, as NCCL's ncclMemOpSync reports it. */
static void ce_sync(ncclComm_t c, void *ce)
{
    fn_descr_v6 d = {.parentObj = ce};
    d.ceCollSync.isComplete = c->prof_ce_complete;
    d.ceCollSync.nRanks = c->nranks;
    void *h = fn_prof_start(c, fnProfCeSync, &d);
    c->prof_ce_seq++;
    c->prof_ce_complete = !c->prof_ce_complete;
    fn_prof_stop(h);
}

/* A copy-engine collective (v6): no kernel, no proxy, its own numbering;
 * NCCL's per-function sequence number does not move. */
static void ce_coll(const fn_op *op)
{
    ncclComm_t c = op->comm;
    fn_descr_v6 d = {0};
    d.ceColl.seqNumber = c->prof_ce_seq;
    d.ceColl.func = func_name(op->kind);
    d.ceColl.sendBuff = op->sendbuff;
    d.ceColl.recvBuff = op->recvbuff;
    d.ceColl.count = op->count;
    d.ceColl.root = op->root;
    d.ceColl.datatype = "ncclFloat32";
    d.ceColl.syncStrategy = "UC";
    d.ceColl.ceSeqNum = c->prof_ce_seq;
    d.ceColl.stream = op->stream;
    void *ce = fn_prof_start(c, fnProfCeColl, &d);
    ce_sync(c, ce);
    fn_descr_v6 bd = {.parentObj = ce};
    bd.ceCollBatch.numOps = c->nranks - 1;
    bd.ceCollBatch.totalBytes = op_bytes(op) * (size_t)(c->nranks - 1);
    fn_prof_stop(fn_prof_start(c, fnProfCeBatch, &bd));
    ce_sync(c, ce);
    fn_prof_stop(ce);
}

/* What NCCL's host task reports for one launched collective: its group,
 * the collective (seq: NCCL's per-function number, moved on unless the
 * work was replayed from a graph), its kernel's channels and its proxy
 * operations. */
static void launch(const fn_op *op, uint64_t seq)
{
    ncclComm_t c = op->comm;
    fn_descr_v6 gd = {0};
    void *group = fn_prof_start(c, fnProfGroup, &gd);
    fn_descr_v6 d = {.parentObj = NULL};
    d.coll.seqNumber = seq;
    d.coll.func = func_name(op->kind);
    d.coll.sendBuff = op->sendbuff;
    d.coll.recvBuff = op->recvbuff;
    d.coll.count = op->count;
    d.coll.root = op->root;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = (uint8_t)g.channels;
    d.coll.nWarps = 8;
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    d.coll.parentGroup = group;
    void *coll = fn_prof_start(c, fnProfColl, &d);
    fn_prof_stop(coll); /* enqueued; the events below still name it */
    kernel_channels(c, coll, g.channels);
    ring_ops(c, coll, op_bytes(op));
    pxn_op(c, op_bytes(op) / (size_t)g.channels);
    fn_prof_stop(group);
}

void fn_prof_coll(const fn_op *op)
{
    ncclComm_t c = op->comm;
    setup();
    if (!active(c) || c->nranks < 2 || op->captured)
        return; /* a captured call runs nothing now: its replays do */
    if (g.ce && ce_kind(op->kind) && fn_prof_version() >= 6 && c->prof_ce_pick++ % g.ce == 0) {
        ce_coll(op);
        return;
    }
    launch(op, c->prof_seq[op->kind & 15]++);
}

/* The replays of a captured collective, from a thread of their own (CUDA
 * runs a graph's host nodes on its callback thread), each with the
 * sequence number NCCL has now, which a replay does not move. */
static void *replay_main(void *arg)
{
    const fn_op *op = arg;
    for (long i = 0; i < g.graph_replays; i++) {
        launch(op, op->comm->prof_seq[op->kind & 15]);
        kernel_channels_end();
    }
    return NULL;
}

void fn_prof_coll_end(const fn_op *op)
{
    kernel_channels_end();
    if (!op->captured || !op->comm->prof_ctx)
        return;
    pthread_t th;
    if (pthread_create(&th, NULL, replay_main, (void *)op) == 0)
        pthread_join(th, NULL);
}

void fn_prof_p2p(const fn_op *ops, size_t n)
{
    setup();
    for (size_t i = 0; i < n; i++) {
        ncclComm_t c = ops[i].comm;
        if (!active(c))
            continue;
        fn_descr_v6 d = {0};
        d.p2p.func = func_name(ops[i].kind);
        d.p2p.buff = ops[i].kind == FN_SEND ? (void *)ops[i].sendbuff : ops[i].recvbuff;
        d.p2p.datatype = "ncclFloat32";
        d.p2p.count = ops[i].count;
        d.p2p.peer = ops[i].root;
        d.p2p.nChannels = 1;
        void *h = fn_prof_start(c, fnProfP2p, &d);
        fn_prof_stop(h);
        kernel_channels(c, h, 1);
        proxy_op p = {c, c->prof_ctx, h, 0, ops[i].root, ops[i].kind == FN_SEND,
                      op_bytes(&ops[i]), NULL, 0};
        op_begin(&p);
        op_steps(&p);
        op_end(&p);
    }
}

void fn_prof_p2p_end(const fn_op *ops, size_t n)
{
    (void)ops, (void)n;
    kernel_channels_end();
}
