/* The test NCCL's plugin loader and version adapters (fn_prof_host.h):
 * what NCCL's src/plugin/profiler.cc and profiler_v1..v6.cc do. */
#include "fn_prof_host.h"

#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct {
    int version; /* 0: no plugin */
    const void *table;
} g;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

long fn_env_long(const char *name, long dflt, long lo, long hi)
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

/* NCCL 2.29 asks for the newest table first; the cap stands in for an
 * older NCCL, which knows no newer version. */
static void load(void)
{
    void *lib = open_plugin();
    if (!lib)
        return;
    long maxv = fn_env_long("FAKENCCL_PROFILER_MAX_VERSION", 6, 0, 6);
    for (long v = maxv; v >= 1 && !g.version; v--) {
        char sym[32];
        snprintf(sym, sizeof sym, "ncclProfiler_v%ld", v);
        if ((g.table = dlsym(lib, sym)))
            g.version = (int)v;
    }
    if (!g.version)
        dlclose(lib); /* no version this NCCL speaks: it runs without */
}

int fn_prof_version(void)
{
    pthread_once(&g_once, load);
    return g.version;
}

#define T(N) ((const fn_profiler_v##N *)g.table)

void fn_prof_load_init(ncclComm_t c)
{
    int rc = 1, v = fn_prof_version();
    uint64_t hash = (uint64_t)c->nranks * 1000003u ^ (uint64_t)(uintptr_t)c->hdr;
    switch (v) {
    case 6: rc = T(6)->init(&c->prof_ctx, hash, &c->prof_mask, c->name, 1, c->nranks, c->rank, NULL); break;
    case 5: rc = T(5)->init(&c->prof_ctx, hash, &c->prof_mask, c->name, 1, c->nranks, c->rank, NULL); break;
    case 4: rc = T(4)->init(&c->prof_ctx, &c->prof_mask, c->name, hash, 1, c->nranks, c->rank, NULL); break;
    case 3: rc = T(3)->init(&c->prof_ctx, &c->prof_mask); break;
    case 2: rc = T(2)->init(&c->prof_ctx, &c->prof_mask); break;
    case 1: rc = T(1)->init(&c->prof_ctx, &c->prof_mask); break;
    default: break;
    }
    c->prof_hash = hash;
    if (rc != 0) { /* NCCL disables the plugin for this communicator */
        c->prof_ctx = NULL;
        c->prof_mask = 0;
    }
}

void fn_prof_load_fini(ncclComm_t c)
{
    if (!c->prof_ctx)
        return;
    switch (g.version) {
    case 6: T(6)->finalize(c->prof_ctx); break;
    case 5: T(5)->finalize(c->prof_ctx); break;
    case 4: T(4)->finalize(c->prof_ctx); break;
    case 3: T(3)->finalize(c->prof_ctx); break;
    case 2: T(2)->finalize(c->prof_ctx); break;
    case 1: T(1)->finalize(c->prof_ctx); break;
    default: break;
    }
    c->prof_ctx = NULL;
}

/* v1's ncclFunc_t codes (0-7 in NCCL 2.23; 8-10 as NCCL numbers them
 * since, for the collectives the test bed also makes). */
static uint8_t func_code(const char *f)
{
    static const char *const names[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                        "AllReduce", "SendRecv", "Send", "Recv", "AllToAll",
                                        "Scatter", "Gather"};
    for (uint8_t i = 0; f && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(f, names[i]))
            return i;
    return 0xff;
}

/* v2 and v3: the same fields, v2 with its traffic bytes. */
#define FN_TO_V23(d, o)                                                           \
    do {                                                                          \
        (o).type = (uint8_t)(d)->type;                                            \
        (o).parentObj = (d)->parentObj;                                           \
        (o).rank = (d)->rank;                                                     \
        if ((d)->type == fnProfColl) {                                            \
            (o).coll.name = c->name, (o).coll.commHash = c->prof_hash;            \
            (o).coll.seqNumber = (d)->coll.seqNumber, (o).coll.func = (d)->coll.func; \
            (o).coll.sendBuff = (d)->coll.sendBuff, (o).coll.recvBuff = (d)->coll.recvBuff; \
            (o).coll.count = (d)->coll.count, (o).coll.root = (d)->coll.root;     \
            (o).coll.datatype = (d)->coll.datatype;                               \
            (o).coll.nMaxChannels = (d)->coll.nChannels;                          \
            (o).coll.nWarps = (d)->coll.nWarps, (o).coll.algo = (d)->coll.algo;   \
            (o).coll.proto = (d)->coll.proto;                                     \
        } else if ((d)->type == fnProfP2p) {                                      \
            (o).p2p.name = c->name, (o).p2p.commHash = c->prof_hash;              \
            (o).p2p.func = (d)->p2p.func, (o).p2p.buff = (d)->p2p.buff;           \
            (o).p2p.datatype = (d)->p2p.datatype, (o).p2p.count = (d)->p2p.count; \
            (o).p2p.peer = (d)->p2p.peer;                                         \
        } else if ((d)->type == fnProfProxyOp) {                                  \
            (o).proxyOp = (d)->proxyOp;                                           \
        } else if ((d)->type == fnProfProxyStep) {                                \
            (o).proxyStep.step = (d)->proxyStep.step;                             \
        }                                                                         \
    } while (0)

static void *start_v1(ncclComm_t c, void *ctx, const fn_descr_v6 *d)
{
    fn_descr_v1 o = {.type = (uint8_t)d->type, .parentObj = d->parentObj, .rank = d->rank};
    if (d->type == fnProfColl) {
        o.coll.name = c->name, o.coll.commHash = c->prof_hash;
        o.coll.seqNumber = d->coll.seqNumber, o.coll.func = func_code(d->coll.func);
        o.coll.sendBuff = d->coll.sendBuff, o.coll.recvBuff = d->coll.recvBuff;
        o.coll.count = d->coll.count, o.coll.root = d->coll.root;
        o.coll.datatype = ncclFloat32, o.coll.nMaxChannels = d->coll.nChannels;
        o.coll.nWarps = d->coll.nWarps;
    } else if (d->type == fnProfP2p) {
        o.p2p.name = c->name, o.p2p.commHash = c->prof_hash;
        o.p2p.func = func_code(d->p2p.func), o.p2p.buff = d->p2p.buff;
        o.p2p.datatype = ncclFloat32, o.p2p.count = d->p2p.count, o.p2p.peer = d->p2p.peer;
    } else if (d->type == fnProfProxyOp) {
        o.proxyOp = d->proxyOp;
    } else if (d->type == fnProfProxyStep) {
        o.proxyStep.step = d->proxyStep.step;
    }
    void *h = NULL;
    T(1)->startEvent(ctx, &h, &o);
    return h;
}

static void *start_v2(ncclComm_t c, void *ctx, const fn_descr_v6 *d)
{
    fn_descr_v2 o = {0};
    FN_TO_V23(d, o);
    void *h = NULL;
    T(2)->startEvent(ctx, &h, &o);
    return h;
}

static void *start_v3(ncclComm_t c, void *ctx, const fn_descr_v6 *d)
{
    fn_descr_v3 o = {0};
    FN_TO_V23(d, o);
    if (d->type == fnProfKernelCh)
        o.kernelCh.channelId = d->kernelCh.channelId;
    void *h = NULL;
    T(3)->startEvent(ctx, &h, &o);
    return h;
}

/* v4 and v5 lay out their union members as v6 does: a copy of the
 * shorter struct; v4's type is one byte. */
static void *start_v45(const fn_descr_v6 *d, void *ctx)
{
    void *h = NULL;
    if (g.version == 5) {
        fn_descr_v5 o;
        memcpy(&o, d, sizeof o);
        T(5)->startEvent(ctx, &h, &o);
    } else {
        fn_descr_v4 o;
        o.type = (uint8_t)d->type;
        memcpy((char *)&o + offsetof(fn_descr_v4, parentObj),
               (const char *)d + offsetof(fn_descr_v6, parentObj),
               sizeof o - offsetof(fn_descr_v4, parentObj));
        T(4)->startEvent(ctx, &h, &o);
    }
    return h;
}

/* Which event types each version knows (NCCL's adapters drop the rest). */
static int known(int version, uint64_t type)
{
    int mask = fnProfGroup | fnProfColl | fnProfP2p | fnProfProxyOp | fnProfProxyStep;
    if (version >= 3)
        mask |= fnProfKernelCh;
    if (version >= 5)
        mask |= fnProfGroupApi | fnProfCollApi | fnProfP2pApi;
    if (version >= 6)
        mask |= fnProfCeColl | fnProfCeSync | fnProfCeBatch;
    return (mask & (int)type) != 0;
}

void *fn_prof_start_ctx(ncclComm_t c, void *ctx, int type, fn_descr_v6 *d)
{
    if (!ctx || !(c->prof_mask & type) || !known(g.version, (uint64_t)type))
        return NULL;
    d->type = (uint64_t)type;
    d->rank = c->rank;
    void *h = NULL;
    switch (g.version) {
    case 6: T(6)->startEvent(ctx, &h, d); break;
    case 5:
    case 4: h = start_v45(d, ctx); break;
    case 3: h = start_v3(c, ctx, d); break;
    case 2: h = start_v2(c, ctx, d); break;
    case 1: h = start_v1(c, ctx, d); break;
    default: break;
    }
    return h;
}

void *fn_prof_start(ncclComm_t c, int type, fn_descr_v6 *d)
{
    return fn_prof_start_ctx(c, c->prof_ctx, type, d);
}

void fn_prof_stop(void *h)
{
    if (!h)
        return;
    switch (g.version) {
    case 6: T(6)->stopEvent(h); break;
    case 5: T(5)->stopEvent(h); break;
    case 4: T(4)->stopEvent(h); break;
    case 3: T(3)->stopEvent(h); break;
    case 2: T(2)->stopEvent(h); break;
    case 1: T(1)->stopEvent(h); break;
    default: break;
    }
}

void fn_prof_state(void *h, int state, fn_state_args *a)
{
    if (!h)
        return;
    switch (g.version) {
    case 6: T(6)->recordEventState(h, state, a); break;
    case 5: T(5)->recordEventState(h, state, a); break;
    case 4: T(4)->recordEventState(h, state, a); break;
    default: break;
    }
}

void fn_prof_state_v1(void *h, int state, fn_state_args_v1 *a)
{
    if (!h)
        return;
    switch (g.version) {
    case 3: T(3)->recordEventState(h, state, a); break;
    case 2: T(2)->recordEventState(h, state, a); break;
    case 1: T(1)->recordEventState(h, state, a); break;
    default: break;
    }
}
