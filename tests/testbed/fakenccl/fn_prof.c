/* The test NCCL's profiler plugin host (fn_prof.h). */
#include "fn_prof.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "fn_prof_abi.h"
#include "fn_reduce.h"

static struct {
    int version; /* 0: no plugin */
    const fn_profiler_v5 *v5;
    const fn_profiler_v4 *v4;
    int channels, steps;
    long step_us;
    int slow_src, slow_dst, slow_ch;
    double slow_factor;
} g = {.slow_src = -1, .slow_dst = -1, .slow_ch = -1};
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    long x = v && *v ? strtol(v, NULL, 10) : dflt;
    return x < lo ? lo : x > hi ? hi : x;
}

static void *open_plugin(void)
{
    const char *name = getenv("NCCL_PROFILER_PLUGIN");
    if (name && !strcasecmp(name, "none"))
        return NULL;
    if (!name || !*name)
        return dlopen("libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        char file[512];
        snprintf(file, sizeof file, "libnccl-profiler-%s.so", name);
        lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    }
    return lib;
}

static void load(void)
{
    g.channels = (int)env_long("FAKENCCL_CHANNELS", 2, 1, 32);
    g.steps = (int)env_long("FAKENCCL_NET_STEPS", 4, 1, 64);
    g.step_us = env_long("FAKENCCL_NET_STEP_US", 0, 0, 1000000);
    const char *slow = getenv("FAKENCCL_SLOW_LINK");
    if (slow && sscanf(slow, "%d:%d:%lf:%d", &g.slow_src, &g.slow_dst, &g.slow_factor,
                       &g.slow_ch) < 3)
        g.slow_src = g.slow_dst = -1;
    void *lib = open_plugin();
    if (!lib)
        return;
    /* NCCL 2.28 asks for the newest table it knows first; the cap stands in
     * for an older NCCL. */
    long maxv = env_long("FAKENCCL_PROFILER_MAX_VERSION", 5, 0, 5);
    if (maxv >= 5 && (g.v5 = dlsym(lib, "ncclProfiler_v5")))
        g.version = 5;
    else if (maxv >= 4 && (g.v4 = dlsym(lib, "ncclProfiler_v4")))
        g.version = 4;
    else
        dlclose(lib); /* no version this NCCL speaks: it runs without */
}

void fn_prof_comm_init(ncclComm_t c)
{
    pthread_once(&g_once, load);
    int rc = 1;
    uint64_t hash = (uint64_t)c->nranks * 1000003u ^ (uint64_t)(uintptr_t)c->hdr;
    if (g.version == 5)
        rc = g.v5->init(&c->prof_ctx, hash, &c->prof_mask, c->name, 1, c->nranks, c->rank, NULL);
    else if (g.version == 4)
        rc = g.v4->init(&c->prof_ctx, &c->prof_mask, c->name, hash, 1, c->nranks, c->rank, NULL);
    if (rc != 0) { /* NCCL disables the plugin for this communicator */
        c->prof_ctx = NULL;
        c->prof_mask = 0;
    }
}

void fn_prof_comm_fini(ncclComm_t c)
{
    if (!c->prof_ctx)
        return;
    if (g.version == 5)
        g.v5->finalize(c->prof_ctx);
    else
        g.v4->finalize(c->prof_ctx);
    c->prof_ctx = NULL;
}

static void *start(ncclComm_t c, int type, fn_descr_v5 *d)
{
    void *h = NULL;
    if (!c->prof_ctx || !(c->prof_mask & type))
        return NULL;
    d->type = (uint64_t)type;
    d->rank = c->rank;
    if (g.version == 5) {
        g.v5->startEvent(c->prof_ctx, &h, d);
    } else {
        /* v4: the same body behind a one-byte type. */
        fn_descr_v4 d4;
        d4.type = (uint8_t)type;
        memcpy((char *)&d4 + offsetof(fn_descr_v4, parentObj),
               (char *)d + offsetof(fn_descr_v5, parentObj),
               sizeof d4 - offsetof(fn_descr_v4, parentObj));
        g.v4->startEvent(c->prof_ctx, &h, &d4);
    }
    return h;
}

static void stop(void *h)
{
    if (h)
        g.version == 5 ? g.v5->stopEvent(h) : g.v4->stopEvent(h);
}

static void record(void *h, int state, size_t bytes)
{
    fn_state_args a = {.proxyStep = {.transSize = bytes}};
    if (h)
        g.version == 5 ? g.v5->recordEventState(h, state, &a)
                       : g.v4->recordEventState(h, state, &a);
}

static void pause_us(long us)
{
    if (us <= 0)
        return;
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Wire time of one step from comm rank src to dst on channel ch. */
static long wire_us(ncclComm_t c, int src, int dst, int ch)
{
    src = fn_info(c, src)->global;
    dst = fn_info(c, dst)->global;
    if (src == g.slow_src && dst == g.slow_dst && (g.slow_ch < 0 || g.slow_ch == ch))
        return (long)((double)g.step_us * g.slow_factor);
    return g.step_us;
}

/* One proxy operation: its steps through the states NCCL's network proxy
 * records, in its order. */
static void proxy_op(ncclComm_t c, void *parent, int ch, int peer, int is_send, size_t bytes)
{
    fn_descr_v5 d = {.parentObj = parent};
    d.proxyOp.pid = getpid();
    d.proxyOp.channelId = (uint8_t)ch;
    d.proxyOp.peer = peer;
    d.proxyOp.nSteps = g.steps;
    d.proxyOp.chunkSize = (int)(bytes / (size_t)g.steps);
    d.proxyOp.isSend = is_send;
    void *op = start(c, fnProfProxyOp, &d);
    record(op, fnOpInProgress, 0);
    size_t step_bytes = bytes / (size_t)g.steps;
    long gpu = g.step_us / 10;
    for (int s = 0; s < g.steps; s++) {
        fn_descr_v5 sd = {.parentObj = op};
        sd.proxyStep.step = s;
        void *st = op ? start(c, fnProfProxyStep, &sd) : NULL;
        if (is_send) {
            record(st, fnStepSendGpuWait, step_bytes);
            pause_us(gpu);
            record(st, fnStepSendPeerWait, step_bytes);
            record(st, fnStepSendWait, step_bytes);
            pause_us(wire_us(c, c->rank, peer, ch));
        } else {
            record(st, fnStepRecvWait, step_bytes);
            pause_us(wire_us(c, peer, c->rank, ch));
            record(st, fnStepRecvFlushWait, step_bytes);
            record(st, fnStepRecvGpuWait, step_bytes);
            pause_us(gpu);
        }
        stop(st);
    }
    stop(op);
}

static const char *func_name(enum fn_kind k)
{
    static const char *const names[] = {"", "AllReduce", "AllGather", "ReduceScatter",
                                        "Broadcast", "Reduce", "AllToAll", "Gather",
                                        "Scatter", "Send", "Recv"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "";
}

static int active(ncclComm_t c) { return c->prof_ctx || g.step_us > 0; }

void fn_prof_coll(const fn_op *op)
{
    ncclComm_t c = op->comm;
    if (!active(c) || c->nranks < 2)
        return;
    size_t bytes = op->count * fn_dtype_size(op->dtype);
    fn_descr_v5 gd = {0};
    void *group = start(c, fnProfGroup, &gd);
    fn_descr_v5 d = {.parentObj = NULL};
    d.coll.seqNumber = c->prof_seq[op->kind & 15]++;
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
    void *coll = start(c, fnProfColl, &d);
    stop(coll); /* enqueued; the proxy ops below still name it */
    size_t per_ch = bytes / (size_t)g.channels;
    int next = (c->rank + 1) % c->nranks, prev = (c->rank + c->nranks - 1) % c->nranks;
    for (int ch = 0; ch < g.channels; ch++) {
        proxy_op(c, coll, ch, next, 1, per_ch);
        proxy_op(c, coll, ch, prev, 0, per_ch);
    }
    stop(group);
}

void fn_prof_p2p(const fn_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ncclComm_t c = ops[i].comm;
        if (!active(c))
            continue;
        fn_descr_v5 d = {0};
        d.p2p.func = func_name(ops[i].kind);
        d.p2p.buff = ops[i].kind == FN_SEND ? (void *)ops[i].sendbuff : ops[i].recvbuff;
        d.p2p.datatype = "ncclFloat32";
        d.p2p.count = ops[i].count;
        d.p2p.peer = ops[i].root;
        d.p2p.nChannels = 1;
        void *h = start(c, fnProfP2p, &d);
        stop(h);
        proxy_op(c, h, 0, ops[i].root, ops[i].kind == FN_SEND,
                 ops[i].count * fn_dtype_size(ops[i].dtype));
    }
}
