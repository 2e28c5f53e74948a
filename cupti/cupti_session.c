/* CUPTI session inside the preload: subscription, activity buffers,
 * periodic/exit flushing, clock samples, external correlation, and
 * stepping aside for another CUPTI client.  The entry points that decide
 * whether to start at all are in cupti_inject.c.
 *
 * Every failure degrades to "no GPU records" with one stderr line; NCCL
 * capture is never affected.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "activity_sink.h"
#include "buffer_pool.h"
#include "buffer_queue.h"
#include "bulk_stream.h"
#include "cbid_filter.h"
#include "clock_check.h"
#include "cupti_api.h"
#include "cupti_control.h"
#include "cupti_mode.h"
#include "device_meta.h"
#include "light_step.h"
#include "memory_capture.h"
#include "nccl_launch_gate.h"
#include "parts.h"
#include "recorder.h"
#include "self_cost.h"
#include "tsc_tls.h"

/* 2 MiB buffers, at most 20 (40 MiB) between CUPTI and the writer.  A
 * buffer holds about 9,700 kernel records or 26,000 call records, which
 * the writer translates in a few milliseconds of CPU; 20 absorb a quarter
 * of a second of launches at the highest rate while the writer waits for
 * a core.  Beyond that CUPTI drops records and counts them, which the
 * dump reports, rather than the profiler eating the job's memory.
 * Smaller buffers come back sooner, so a kernel and its launch call (in
 * different buffers) wait less for each other. */
#define TSC_CUPTI_BUFFER_BYTES (2u << 20)
#define TSC_CUPTI_MAX_BUFFERS 20u
/* CUPTI's worker hands over full buffers only once per flush period when
 * one is set, so the pool must hold a period of records: at the highest
 * launch rate (about 500,000 a second, some 180 MB/s of records) 100 ms
 * fit in it, a second would not.  Partly filled buffers are not handed
 * over by the period, so a shorter one costs a wake-up, not buffers. */
#define TSC_CUPTI_DEFAULT_FLUSH_MS 100u
/* How often the fold gives up on records that still wait for their pair
 * (the other half of a launch lies in a buffer not yet handed over). */
#define TSC_CUPTI_AGE_MS 1000u

enum { ST_IDLE = 0, ST_RUNNING = 1, ST_STOPPED = 2 };

static struct {
    atomic_int state;
    tsc_cupti_mode mode;
    int mode_known;            /* the constructor hook ran */
    int nvtx;                  /* NVTX_INJECTION64_PATH points at us */
    tsc_cupti_api api;
    CUpti_SubscriberHandle sub;
    atomic_ullong dropped;         /* CUPTI's own dropped-record count */
    atomic_ullong dropped_device;  /* of those, from context (device work) queues */
    atomic_int final;              /* no more buffers will come: write what waits */
    atomic_ullong captured;        /* kernel launches captured into graph nodes */
    atomic_ullong fold_bytes;      /* the fold's tables, as the writer saw them last */
    pid_t pid;                     /* the process that started the session */
    unsigned flush_ms;
    uint64_t last_age_ns;          /* writer thread only */
    atomic_int primary_device; /* first context's device, -1 unknown */
    atomic_int context_seen;
    atomic_int meta_done;
    atomic_int foreign_seen;   /* another client used CUPTI before we started */
    char foreign_who[320];     /* that client (cupti_conflict.c), written once seen */
    atomic_int whole_run;      /* running since cuInit, never stepped aside */
    atomic_int light_step;     /* full mode stepped down to light by the budget */
    pthread_mutex_t clock_lock;
    tsc_clock_state clock;
} g = {.clock_lock = PTHREAD_MUTEX_INITIALIZER, .primary_device = -1};

/* The ids this thread pushed (the innermost last): a graph node captured
 * inside a call belongs to the innermost. */
#define TSC_EXTCORR_STACK 8
static TSC_TLS int extcorr_depth;
static TSC_TLS uint64_t extcorr_ids[TSC_EXTCORR_STACK];

/* ------------------------------------------------------------ helpers */

static const char *result_text(CUptiResult r)
{
    const char *s = NULL;
    if (g.api.GetResultString == NULL || g.api.GetResultString(r, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

static void set_status(const char *status)
{
    tsc_rec_meta(TSC_META_CUPTI_STATUS, status);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One (realtime, CUPTI, monotonic) sample into the dump and the verdict. */
static void clock_sample(void)
{
    uint64_t rt = tsc_now_ns();
    uint64_t cupti = 0;
    if (g.api.GetTimestamp(&cupti) != CUPTI_SUCCESS)
        cupti = 0;
    uint64_t mono = monotonic_ns();
    tsc_rec_event(TSC_EV_CLOCK, 0, 0, 0, rt, cupti, mono);
    char text[96];
    pthread_mutex_lock(&g.clock_lock);
    tsc_clock_verdict before = g.clock.verdict;
    tsc_clock_feed(&g.clock, rt, cupti);
    tsc_clock_verdict after = g.clock.verdict;
    tsc_clock_status_text(&g.clock, text, sizeof text);
    pthread_mutex_unlock(&g.clock_lock);
    tsc_rec_meta(TSC_META_CLOCK_STATUS, text);
    if (after != before && (after == TSC_CLOCK_SWITCHED || after == TSC_CLOCK_OFFSET))
        tsc_warn_once("cupti_clock",
                      "CUPTI timestamps no longer follow CLOCK_REALTIME (%s): another tool "
                      "(torch.profiler?) replaced CUPTI's clock; GPU times are marked in the dump",
                      text);
}

static void meta_u64(const char *key, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    tsc_rec_meta(key, text);
}

/* What reached the dump and what was lost on the way, each in records of
 * its kind (docs/gpu-capture.md, "Loss accounting"). */
static void write_counters(void)
{
    tsc_sink_stats st = tsc_sink_get_stats();
    meta_u64(TSC_META_CUPTI_DROPPED, atomic_load(&g.dropped));
    meta_u64(TSC_META_CUPTI_DROPPED_DEVICE, atomic_load(&g.dropped_device));
    meta_u64(TSC_META_CUPTI_BUFFERS_REFUSED, tsc_pool_get_stats().refused);
    meta_u64(TSC_META_CUPTI_OVERHEAD, st.overhead_ns);
    meta_u64(TSC_META_GPU_KERNELS, st.kernels);
    meta_u64(TSC_META_GPU_KERNELS_FOLDED, st.kernels_folded);
    meta_u64(TSC_META_GPU_CALLS_ALONE, st.calls_alone);
    if (g.mode == TSC_CUPTI_LIGHT || atomic_load(&g.light_step)) /* full mode keeps every launch */
        meta_u64(TSC_META_GPU_LIGHT_NOT_NCCL, st.light_launches_not_nccl);
    meta_u64(TSC_META_GPU_INCOMPLETE, st.incomplete);
    meta_u64(TSC_META_GPU_LOST_WRITE, tsc_bulk_kernels_lost());
    meta_u64(TSC_META_GPU_CAPTURED, atomic_load(&g.captured));
    /* Buffers are kept once allocated and the fold's tables never shrink:
     * both are at their most now. */
    meta_u64(TSC_META_GPU_MEMORY, (uint64_t)tsc_pool_get_stats().allocated *
                                          TSC_CUPTI_BUFFER_BYTES +
                                      atomic_load(&g.fold_bytes));
}

static void collect_device_meta_once(void)
{
    if (!atomic_load(&g.context_seen) || atomic_exchange(&g.meta_done, 1))
        return;
    tsc_device_meta_collect(atomic_load(&g.primary_device));
    tsc_mem_capture_info(atomic_load(&g.primary_device));
}

/* ------------------------------------------------------------ buffers */

/* From the pool: never waits (CUPTI may ask on an application thread). */
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *buffer = tsc_pool_get(size);
}

static void note_dropped(CUcontext ctx, uint32_t stream)
{
    size_t dropped = 0;
    if (g.api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS || !dropped)
        return;
    atomic_fetch_add(&g.dropped, dropped);
    if (ctx != NULL)
        atomic_fetch_add(&g.dropped_device, dropped);
}

/* On CUPTI's worker or the flushing thread: only queue the buffer; the
 * writer thread translates it (tsc_cupti_drain_hook). */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)size;
    if (buffer != NULL) {
        tsc_bq_push(buffer, valid);
        tsc_rec_wake_writer();
        /* Half the buffers wait: the writer is starved of CPU.  CUPTI's
         * thread does the work itself rather than let CUPTI run out of
         * buffers (which would drop records). */
        if (tsc_bq_depth() >= TSC_CUPTI_MAX_BUFFERS / 2)
            tsc_rec_help_drain();
    }
    note_dropped(ctx, stream);
}

/* The writer's side of the hand-over: records go into the GPU stream. */
static const tsc_sink_out gpu_stream = {
    .intern = tsc_bulk_intern,
    .string = tsc_bulk_string,
    .event = tsc_bulk_event,
    .generation = tsc_bulk_generation,
};

static int clock_trusted(void)
{
    pthread_mutex_lock(&g.clock_lock);
    tsc_clock_verdict v = g.clock.verdict;
    pthread_mutex_unlock(&g.clock_lock);
    return v != TSC_CLOCK_SWITCHED && v != TSC_CLOCK_OFFSET;
}

/* Translate every buffer queued now; how many there were. */
static size_t drain_queue(void)
{
    tsc_done_buffer done[TSC_CUPTI_MAX_BUFFERS];
    size_t n, total = 0;
    while ((n = tsc_bq_pop(done, TSC_CUPTI_MAX_BUFFERS)) > 0) {
        for (size_t i = 0; i < n; i++) {
            tsc_sink_buffer(done[i].buf, done[i].valid, g.api.ActivityGetNextRecord, &gpu_stream);
            tsc_pool_put(done[i].buf);
        }
        total += n;
    }
    return total;
}

/* After the last flush, buffers CUPTI was already handing back on another
 * thread (its worker) may still arrive: wait for them while they keep
 * coming, a fifth of a second at most, before writing what waits. */
static void drain_last_buffers(void)
{
    uint64_t start = monotonic_ns(), last = start;
    while (tsc_pool_get_stats().in_use > 0) {
        uint64_t now = monotonic_ns();
        if (now - start > 200000000ull || now - last > 10000000ull)
            break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (drain_queue() > 0)
            last = monotonic_ns();
    }
}

/* The budget's GPU level (self_cost.h): asked once per drain, applied on
 * this (the writer) thread.  Only a full-mode capture has per-kernel
 * records to give up. */
static void follow_budget(void)
{
    if (g.mode != TSC_CUPTI_FULL || atomic_load(&g.state) != ST_RUNNING)
        return;
    int want = tsc_cost_cut(TSC_COST_PART_GPU) > 0;
    if (want == atomic_load(&g.light_step))
        return;
    if (tsc_light_step_apply(&g.api, want) != 0)
        tsc_warn_once("cupti_light_step", "CUPTI refused a change of the traced kinds for the "
                                          "budget; the records are filtered instead");
    atomic_store(&g.light_step, want);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tsc_cupti_drain_hook(void)
{
    if (g.pid == 0 || g.pid != getpid())
        return; /* never started here (or a forked child: the parent's buffers) */
    follow_budget();
    /* What the per-kernel level would cut: translating the buffers of a
     * full-mode capture (kernels and their launches make most of them). */
    int measure = g.mode == TSC_CUPTI_FULL && !atomic_load(&g.light_step) && tsc_bq_depth() > 0;
    uint64_t c0 = measure ? thread_cpu_ns() : 0;
    int any = drain_queue() > 0;
    if (measure)
        tsc_cost_part_add(TSC_COST_PART_GPU, thread_cpu_ns() - c0, 0);
    uint64_t now = monotonic_ns();
    if (now - g.last_age_ns >= (uint64_t)TSC_CUPTI_AGE_MS * 1000000ull) {
        g.last_age_ns = now;
        tsc_sink_age(&gpu_stream, clock_trusted());
        any = 1;
    }
    /* Sticky: a buffer that arrives after the end still gets written. */
    if (atomic_load(&g.final)) {
        drain_last_buffers();
        tsc_sink_finish(&gpu_stream);
        any = 1;
    }
    tsc_bulk_commit();
    atomic_store(&g.fold_bytes, tsc_sink_fold_bytes());
    if (any)
        write_counters();
}

/* ----------------------------------------------------------- callbacks */

/* A kernel launch captured into a graph (stream capture): it makes a
 * node, not a kernel, so its call will never meet one; and the graph's
 * replays are the work of the call being captured, if it is one of
 * tscope's (an NCCL call, a GEMM). */
static void graph_node_created(const CUpti_ResourceData *rd)
{
    const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
    if (gd == NULL || gd->nodeType != CU_GRAPH_NODE_TYPE_KERNEL)
        return;
    atomic_fetch_add(&g.captured, 1);
    uint64_t node = 0;
    if (g.api.GetGraphNodeId == NULL || g.api.GetGraphNodeId(gd->node, &node) != CUPTI_SUCCESS)
        return;
    int depth = extcorr_depth;
    tsc_desc_graph_node d = {
        .node = node,
        .external_id = depth > 0 && depth <= TSC_EXTCORR_STACK ? extcorr_ids[depth - 1] : 0};
    uint32_t desc = tsc_rec_intern(TSC_DESC_GRAPH_NODE, &d, sizeof d);
    uint64_t t = tsc_now_ns();
    tsc_rec_event(TSC_EV_GRAPH_NODE, 0, 0, desc, t, t, 0);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        tsc_mem_capture_callback(cbid, data);
        return;
    }
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
        graph_node_created(data);
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
        return;
    const CUpti_ResourceData *rd = data;
    uint32_t dev = 0;
    if (atomic_load(&g.primary_device) < 0 && rd != NULL &&
        g.api.GetDeviceId(rd->context, &dev) == CUPTI_SUCCESS && dev <= INT_MAX) {
        int expected = -1;
        atomic_compare_exchange_strong(&g.primary_device, &expected, (int)dev);
    }
    atomic_store(&g.context_seen, 1);
}

/* ------------------------------------------------------------ enabling */

/* Without these the timeline is not worth keeping: refusal stops capture. */
static const CUpti_ActivityKind common_kinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

/* Useful but not vital (a platform without peer copies, a CUPTI that
 * refuses sync records): a refusal costs one line, not the timeline. */
static const CUpti_ActivityKind optional_kinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};

/* Enable exactly the API records the filter keeps; if the per-cbid calls
 * are refused, fall back to whole domains (the translation filters). */
static int enable_api_records(tsc_cupti_mode mode)
{
    size_t n;
    const tsc_api_entry *t = tsc_api_table(&n);
    int per_cbid_ok = 1;
    for (size_t i = 0; i < n && per_cbid_ok; i++) {
        if (!tsc_api_wanted(t[i].domain, t[i].cbid, mode))
            continue;
        CUptiResult r = t[i].domain == TSC_API_RUNTIME
                            ? g.api.ActivityEnableRuntimeApi(t[i].cbid, 1)
                            : g.api.ActivityEnableDriverApi(t[i].cbid, 1);
        if (r != CUPTI_SUCCESS)
            per_cbid_ok = 0;
    }
    if (per_cbid_ok)
        return 0;
    if (g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS ||
        g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS)
        return -1;
    return 0;
}

static void disable_all(void)
{
    for (size_t i = 0; i < sizeof common_kinds / sizeof common_kinds[0]; i++)
        g.api.ActivityDisable(common_kinds[i]);
    for (size_t i = 0; i < sizeof optional_kinds / sizeof optional_kinds[0]; i++)
        g.api.ActivityDisable(optional_kinds[i]);
    g.api.ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    g.api.ActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    g.api.ActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    tsc_mem_capture_stop();
    if (g.nvtx)
        g.api.ActivityDisable(CUPTI_ACTIVITY_KIND_MARKER);
}

static unsigned flush_period_ms(void)
{
    const char *s = getenv("TSCOPE_CUPTI_FLUSH_MS");
    if (s == NULL || *s == '\0')
        return TSC_CUPTI_DEFAULT_FLUSH_MS;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end != '\0' || v > 600000ul)
        return TSC_CUPTI_DEFAULT_FLUSH_MS;
    return (unsigned)v;
}

static void exit_handler(void)
{
    tsc_cupti_exit_hook();
}

/* A forked child (DataLoader worker) inherits the state but not a working
 * CUPTI: it must neither push ids nor flush the parent's buffers. */
static void child_after_fork(void)
{
    atomic_store(&g.state, ST_STOPPED);
    atomic_store(&g.whole_run, 0);
    /* The parent's staged GPU records are not this process's: the GPU
     * stream is this part's, so its owner forgets them. */
    tsc_bulk_reset();
}

/* Subscribe, configure and enable.  0 when running. */
static int start_capture(void)
{
    const char *why = NULL;
    if (tsc_cupti_api_load(&g.api, &why) != 0) {
        tsc_warn_once("cupti_load", "GPU capture off: %s; NCCL capture continues", why);
        set_status(why);
        return -1;
    }
    uint32_t version = 0;
    if (g.api.GetVersion(&version) != CUPTI_SUCCESS ||
        !tsc_cupti_version_supported(version, CUPTI_API_VERSION)) {
        tsc_warn_once("cupti_version",
                      "GPU capture off: CUPTI API version %u is not CUDA 13's (built for %u); its "
                      "activity records would be misread; NCCL capture continues",
                      version, (unsigned)CUPTI_API_VERSION);
        set_status("unsupported CUPTI version");
        return -1;
    }
    char text[32];
    snprintf(text, sizeof text, "%u", version);
    tsc_rec_meta(TSC_META_CUPTI_VERSION, text);

    if (atomic_load(&g.foreign_seen)) {
        tsc_warn_once("cupti_conflict",
                      "%s started first: tscope records no GPU timeline, NCCL capture "
                      "continues",
                      g.foreign_who[0] ? g.foreign_who : "another CUPTI client");
        set_status("another client started first");
        tsc_rec_meta(TSC_META_CUPTI_OTHER, g.foreign_who[0] ? g.foreign_who : "unknown");
        return -1;
    }
    CUptiResult r = g.api.Subscribe(&g.sub, on_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            tsc_warn_once("cupti_conflict",
                          "another CUPTI client (nsys, ncu, torch.profiler) holds CUPTI: "
                          "tscope records no GPU timeline, NCCL capture continues");
        else
            tsc_warn_once("cupti_subscribe", "GPU capture off: cuptiSubscribe: %s",
                          result_text(r));
        set_status(r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "another subscriber"
                                                                      : "subscribe failed");
        /* It subscribed without the dynamic linker: nothing names it. */
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            tsc_rec_meta(TSC_META_CUPTI_OTHER, "unknown");
        return -1;
    }
    g.api.EnableDomain(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE);
    /* API records then carry gettid(), the ids /proc and NCCL events use. */
    g.api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    /* Ready before the first buffer can complete. */
    if (tsc_sink_reset(g.mode) != 0)
        tsc_warn_once("cupti_fold", "out of memory for the launch fold: kernels and their "
                                    "launch calls are written as separate records");
    tsc_pool_configure(TSC_CUPTI_BUFFER_BYTES, TSC_CUPTI_MAX_BUFFERS);
    g.pid = getpid();
    g.flush_ms = flush_period_ms();
    g.last_age_ns = monotonic_ns();
    tsc_clock_init(&g.clock);
    r = g.api.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
    int ok = r == CUPTI_SUCCESS;
    for (size_t i = 0; ok && i < sizeof common_kinds / sizeof common_kinds[0]; i++)
        ok = g.api.ActivityEnable(common_kinds[i]) == CUPTI_SUCCESS;
    for (size_t i = 0; ok && i < sizeof optional_kinds / sizeof optional_kinds[0]; i++)
        if (g.api.ActivityEnable(optional_kinds[i]) != CUPTI_SUCCESS)
            tsc_warn_once("cupti_optional_kind",
                          "CUPTI refused activity kind %d; the GPU timeline lacks it",
                          (int)optional_kinds[i]);
    if (ok && g.mode == TSC_CUPTI_FULL)
        ok = g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
    if (ok)
        ok = enable_api_records(g.mode) == 0;
    /* Device memory: each part optional, its state in mem_capture. */
    if (ok)
        tsc_mem_capture_start(&g.api, g.sub);
    /* NVTX ranges: only useful if NVTX was routed to CUPTI; not fatal. */
    if (ok && g.nvtx && g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_MARKER) != CUPTI_SUCCESS)
        tsc_warn_once("cupti_nvtx", "CUPTI refused NVTX marker records: no NVTX ranges");
    if (!ok) {
        tsc_warn_once("cupti_enable", "GPU capture off: CUPTI refused activity tracing; NCCL "
                                      "capture continues");
        disable_all();
        g.api.Unsubscribe(g.sub);
        set_status("activity enable failed");
        return -1;
    }
    g.api.ActivityFlushPeriod(g.flush_ms);
    atomic_store(&g.state, ST_RUNNING);
    atomic_store(&g.whole_run, 1);
    /* Registered during cuInit, after the CUDA runtime's own teardown
     * handler, so it runs before it: records are flushed while contexts
     * still exist. */
    atexit(exit_handler);
    pthread_atfork(NULL, NULL, child_after_fork);
    set_status("ok");
    return 0;
}

/* ---------------------------------------------------------- controls */

void tsc_cupti_configure(tsc_cupti_mode mode, int nvtx)
{
    g.mode = mode;
    g.nvtx = nvtx;
    g.mode_known = 1;
}

int tsc_cupti_nvtx_routed(void)
{
    return g.nvtx;
}

int tsc_cupti_start(void)
{
    return start_capture();
}

void tsc_cupti_flush_hook(int from_signal)
{
    /* CUPTI's flush takes locks and allocates: not from a signal handler.
     * The periodic flush (TSCOPE_CUPTI_FLUSH_MS) bounds what a SIGKILL
     * loses; SIGTERM handlers that exit() reach the exit hook. */
    if (from_signal || atomic_load(&g.state) != ST_RUNNING)
        return;
    g.api.ActivityFlushAll(0);
    clock_sample();
    collect_device_meta_once();
    write_counters();
}

void tsc_cupti_exit_hook(void)
{
    int expected = ST_RUNNING;
    if (!atomic_compare_exchange_strong(&g.state, &expected, ST_STOPPED))
        return;
    collect_device_meta_once();
    /* FORCED also hands over buffers that are not full yet; the drain
     * that follows (tsc_rec_finish) writes them and what still waits. */
    g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    atomic_store(&g.final, 1);
    clock_sample();
    write_counters();
}

void tsc_cupti_yield(const char *who)
{
    int expected = ST_RUNNING;
    if (!atomic_compare_exchange_strong(&g.state, &expected, ST_STOPPED)) {
        /* Not started yet: remember, so starting later does not take the
         * subscription or the buffer callbacks away from that client. */
        if (expected == ST_IDLE && !atomic_exchange(&g.foreign_seen, 1))
            snprintf(g.foreign_who, sizeof g.foreign_who, "%s", who);
        return;
    }
    atomic_store(&g.whole_run, 0);
    tsc_warn_once("cupti_yield",
                  "%s takes over CUPTI: tscope stops its GPU timeline here and steps aside; NCCL "
                  "capture continues",
                  who);
    g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    atomic_store(&g.final, 1);
    tsc_rec_wake_writer();
    clock_sample();
    write_counters();
    disable_all();
    /* Leave CUPTI as a fresh client finds it: its own thread ids and
     * CUPTI's own flush heuristics, not tscope's settings. */
    g.api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
    g.api.ActivityFlushPeriod(0);
    g.api.Unsubscribe(g.sub);
    set_status("yielded to another CUPTI client");
    tsc_rec_meta(TSC_META_CUPTI_OTHER, who);
}

static atomic_ullong g_gemm_calls; /* recorded by gemm_wrap.c */

void tsc_cupti_count_gemm(void) { atomic_fetch_add_explicit(&g_gemm_calls, 1, memory_order_relaxed); }

int tsc_cupti_saw_no_device_work(void)
{
    if (!atomic_load(&g.whole_run) || g.pid != getpid())
        return 0;
    tsc_sink_stats st = tsc_sink_get_stats();
    return st.kernels == 0 && st.calls_alone == 0 && st.device_work == 0 &&
           st.light_launches_not_nccl == 0 &&
           atomic_load_explicit(&g_gemm_calls, memory_order_relaxed) == 0;
}

tsc_cupti_mode tsc_cupti_current_mode(void)
{
    return g.mode_known ? g.mode : tsc_cupti_mode_parse(getenv("TSCOPE_CUPTI"), NULL);
}

int tsc_cupti_running(void)
{
    /* Acquire: the CUPTI entry points were stored before the state. */
    return atomic_load_explicit(&g.state, memory_order_acquire) == ST_RUNNING;
}

int tsc_cupti_push_extcorr(uint64_t id)
{
    if (!tsc_cupti_running())
        return 0;
    if (g.api.PushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) !=
        CUPTI_SUCCESS)
        return 0;
    /* Light mode keeps the launches made inside NCCL's calls only; the GEMM
     * wrapper pushes ids of the same form (nccl_launch_gate.h). */
    if ((g.mode == TSC_CUPTI_LIGHT || atomic_load_explicit(&g.light_step, memory_order_relaxed)) &&
        tsc_call_in_nccl)
        tsc_gate_note_nccl_desc((uint32_t)(id >> 32) & 0x7fffffffu);
    if (extcorr_depth < TSC_EXTCORR_STACK)
        extcorr_ids[extcorr_depth] = id;
    extcorr_depth++;
    return 1;
}

void tsc_cupti_pop_extcorr(void)
{
    /* Pop only what this thread pushed, even if CUPTI stopped meanwhile,
     * so no tscope id stays on CUPTI's per-thread stack. */
    if (extcorr_depth <= 0)
        return;
    uint64_t last = 0;
    g.api.PopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
    extcorr_depth--;
}
