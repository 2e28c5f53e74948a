/* Cost of the NCCL profiler plugin callbacks per event, side by side:
 * NCCL without a plugin (no call: the pointer test NCCL makes), a plugin
 * whose callbacks do nothing (the bare indirect calls), and tscope's
 * plugin, in the capture mode given.  The work is what NCCL reports for
 * one ring collective on 2 channels, as far as the plugin's activation
 * mask asks for it: the collective's API call (v5+), the collective, per
 * channel its kernel channel (start, GPU stop, stop) and, in full capture,
 * a send and a receive proxy op of 8 network steps, each step started,
 * moved through its states, stopped.  The no-op plugin asks for what
 * tscope asked for, so both make the same calls.
 *
 *   bench_nprof PRELOAD.so [COLLECTIVES] [ROUNDS] [light|full]
 *
 * Loads the preload library as NCCL loads its plugin (dlopen, the v5
 * table: every tscope since the plugin has it), recording into TSCOPE_OUT
 * (a temporary directory by default). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakenccl/fn_prof_abi.h"

#define CHANNELS 2
#define STEPS 8

static int g_mask; /* what the plugin under test asked for */

static ncclResult_t nop_init(void **ctx, uint64_t id, int *mask, const char *n, int nn, int nr,
                             int r, fn_logger l)
{
    (void)id, (void)n, (void)nn, (void)nr, (void)r, (void)l;
    static int dummy;
    *ctx = &dummy;
    *mask = g_mask;
    return ncclSuccess;
}
static ncclResult_t nop_start(void *ctx, void **h, fn_descr_v5 *d)
{
    *h = d->type == fnProfCollApi ? NULL : ctx;
    return ncclSuccess;
}
static ncclResult_t nop_stop(void *h) { (void)h; return ncclSuccess; }
static ncclResult_t nop_record(void *h, int s, fn_state_args *a)
{
    (void)h, (void)s, (void)a;
    return ncclSuccess;
}
static ncclResult_t nop_finalize(void *ctx) { (void)ctx; return ncclSuccess; }

static const fn_profiler_v5 nop_plugin = {"nop", nop_init, nop_start, nop_stop, nop_record,
                                          nop_finalize};

/* CPU time, not wall time: on a shared machine the wall clock mostly
 * measures the other tenants.  The thread's (what NCCL's threads pay) and
 * the process's (also tscope's writer thread draining the records). */
static uint64_t cpu_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t g_pid;

/* The calls of a start: (start, calls so far). */
#define START(p, ctx, h, d, calls) ((p)->startEvent((ctx), (h), (d)), (calls)++)

static uint64_t proxy_ops(const fn_profiler_v5 *p, void *ctx, void *coll, int ch)
{
    uint64_t calls = 0;
    for (int send = 0; send < 2; send++) {
        fn_descr_v5 od = {.type = fnProfProxyOp, .parentObj = coll};
        od.proxyOp.pid = g_pid;
        od.proxyOp.channelId = (uint8_t)ch;
        od.proxyOp.peer = 1;
        od.proxyOp.nSteps = STEPS;
        od.proxyOp.isSend = send;
        void *op = NULL;
        START(p, ctx, &op, &od, calls);
        for (int s = 0; s < STEPS; s++) {
            fn_state_args a = {.proxyStep = {.transSize = 524288}};
            fn_descr_v5 sd = {.type = fnProfProxyStep, .parentObj = op};
            sd.proxyStep.step = s;
            void *st = NULL;
            START(p, ctx, &st, &sd, calls);
            p->recordEventState(st, send ? fnStepSendGpuWait : fnStepRecvWait, &a);
            p->recordEventState(st, send ? fnStepSendPeerWait : fnStepRecvFlushWait, &a);
            p->recordEventState(st, send ? fnStepSendWait : fnStepRecvGpuWait, &a);
            p->stopEvent(st);
            calls += 4;
        }
        p->stopEvent(op);
        calls++;
    }
    return calls;
}

/* The callbacks of one collective; returns how many were made.  plugin
 * NULL: NCCL without a plugin tests the pointer and goes on. */
static uint64_t one_collective(const fn_profiler_v5 *const volatile *pp, void *ctx, uint64_t seq)
{
    const fn_profiler_v5 *p = *pp;
    if (!p)
        return 0;
    uint64_t calls = 0;
    if (g_mask & fnProfCollApi) {
        fn_descr_v5 ad = {.type = fnProfCollApi};
        ad.collApi.func = "AllReduce";
        void *api = NULL;
        START(p, ctx, &api, &ad, calls);
    }
    void *coll = NULL;
    fn_descr_v5 d = {.type = fnProfColl};
    d.coll.seqNumber = seq;
    d.coll.func = "AllReduce";
    d.coll.nChannels = CHANNELS;
    START(p, ctx, &coll, &d, calls);
    p->stopEvent(coll);
    calls++;
    for (int ch = 0; ch < CHANNELS; ch++) {
        if (g_mask & fnProfKernelCh) {
            fn_descr_v5 kd = {.type = fnProfKernelCh, .parentObj = coll};
            kd.kernelCh.channelId = (uint8_t)ch;
            kd.kernelCh.pTimer = seq * 1000;
            void *k = NULL;
            START(p, ctx, &k, &kd, calls);
            fn_state_args a = {.kernelCh = {.pTimer = seq * 1000 + 500}};
            p->recordEventState(k, fnKernelChStop, &a);
            p->stopEvent(k);
            calls += 2;
        }
        if (g_mask & fnProfProxyOp)
            calls += proxy_ops(p, ctx, coll, ch);
    }
    return calls;
}

typedef struct { double thread, process; } cost;

/* Best of rounds: CPU ns per collective; callbacks per collective. */
static cost run(const fn_profiler_v5 *p, void *ctx, long colls, int rounds, uint64_t *calls)
{
    const fn_profiler_v5 *const volatile pp = p;
    cost best = {1e30, 1e30};
    for (int r = 0; r < rounds; r++) {
        uint64_t c = 0, t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
        for (long i = 0; i < colls; i++)
            c += one_collective(&pp, ctx, (uint64_t)i);
        /* Let the writer drain this round's records into the process's time. */
        if (p)
            usleep(1200000);
        double th = (double)(cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / (double)colls;
        double pr = (double)(cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - p0) / (double)colls;
        if (th < best.thread)
            best.thread = th;
        if (pr < best.process)
            best.process = pr;
        *calls = c / (uint64_t)colls;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_nprof PRELOAD.so [COLLECTIVES] [ROUNDS] [light|full]\n");
        return 2;
    }
    long colls = argc > 2 ? atol(argv[2]) : 20000;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    const char *mode = argc > 4 ? argv[4] : "full";
    char tmp[] = "/tmp/bench_nprof.XXXXXX";
    if (!getenv("TSCOPE_OUT")) {
        if (!mkdtemp(tmp))
            return 1;
        setenv("TSCOPE_OUT", tmp, 1);
    }
    setenv("TSCOPE_NCCL_PROFILER", mode, 1);
    setenv("TSCOPE_NVML_MS", "0", 1);
    /* Large per-thread buffers so the writer never drops at this rate. */
    if (!getenv("TSCOPE_BUFFER_KB"))
        setenv("TSCOPE_BUFFER_KB", "65536", 1);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const fn_profiler_v5 *ts = lib ? dlsym(lib, "ncclProfiler_v5") : NULL;
    if (!ts) {
        fprintf(stderr, "bench_nprof: no ncclProfiler_v5 in %s: %s\n", argv[1], dlerror());
        return 1;
    }
    void *ts_ctx = NULL, *nop_ctx = NULL;
    int mask = 0;
    if (ts->init(&ts_ctx, 1, &g_mask, "bench", 1, 2, 0, NULL) != ncclSuccess) {
        fprintf(stderr, "bench_nprof: tscope's plugin init failed\n");
        return 1;
    }
    nop_plugin.init(&nop_ctx, 1, &mask, "bench", 1, 2, 0, NULL);
    uint64_t c_none = 0, c_nop = 0, c_ts = 0;
    g_pid = getpid();
    run(ts, ts_ctx, colls / 10, 1, &c_ts); /* warm up: set-up, thread slot, pages */
    cost none = run(NULL, NULL, colls, rounds, &c_none);
    cost nop = run(&nop_plugin, nop_ctx, colls, rounds, &c_nop);
    cost tsc = run(ts, ts_ctx, colls, rounds, &c_ts);
    int steps = g_mask & fnProfProxyOp ? CHANNELS * 2 * STEPS : 0;
    printf("bench_nprof: %s capture (mask 0x%x), %ld collectives x %d rounds (best), "
           "%d channels%s, %llu callbacks per collective; CPU ns\n",
           mode, g_mask, colls, rounds, CHANNELS,
           steps ? " x 2 proxy ops x 8 steps" : "", (unsigned long long)c_ts);
    printf("%-24s %10s %12s %13s %14s\n", "plugin", "per coll", "per callback",
           "added / step", "process / coll");
    printf("%-24s %10.0f %12s %13s %14.0f\n", "none (NCCL, no plugin)", none.thread, "-", "-",
           none.process);
    char per_step[32] = "-";
    if (steps)
        snprintf(per_step, sizeof per_step, "%.1f", (nop.thread - none.thread) / steps);
    printf("%-24s %10.0f %12.1f %13s %14.0f\n", "no-op callbacks", nop.thread,
           (nop.thread - none.thread) / (double)c_nop, per_step, nop.process);
    if (steps)
        snprintf(per_step, sizeof per_step, "%.1f", (tsc.thread - none.thread) / steps);
    char label[32];
    snprintf(label, sizeof label, "tscope (%s)", mode);
    printf("%-24s %10.0f %12.1f %13s %14.0f\n", label, tsc.thread,
           (tsc.thread - none.thread) / (double)c_ts, per_step, tsc.process);
    printf("tscope added per callback / no-op's: %.1fx; with the writer thread: %.0f ns per "
           "callback\n",
           (tsc.thread - none.thread) / (nop.thread - none.thread),
           (tsc.process - none.process) / (double)c_ts);
    ts->finalize(ts_ctx);
    return 0;
}
