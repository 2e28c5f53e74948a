/* The stand-in CUPTI (libcupti.so.13): the callback and activity API that
 * tscope uses, with the record layouts of the CUDA 13.0 headers.
 *
 * Modelled (docs/gpu-capture.md lists each with its source):
 *  - one subscriber at a time: a second cuptiSubscribe / _v2 gets
 *    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
 *  - one pair of buffer callbacks per process: registering again replaces
 *    the first pair;
 *  - API records per call (each enabled kind or cbid), a nested driver
 *    call sharing its runtime call's correlation id (STANDIN_NESTED_CORR=
 *    distinct gives it its own); external correlation records for each
 *    kind whose per-thread stack is not empty, per outermost call;
 *  - device records written when the work has finished; graph kernels
 *    carry the graph launch's correlation id, graph id and node id;
 *  - a worker thread that hands over full buffers; FlushAll on the
 *    calling thread, after the batch the worker is writing (test option
 *    STANDIN_WORKER_PARKS=1 parks the worker there: sim_cupti_park.h);
 *    dropped counts when no buffer is given;
 *  - thread ids by cuptiSetThreadIdType; timestamps from CLOCK_REALTIME or
 *    from a registered timestamp callback.
 * STANDIN_TRUTH=<file>: at exit, what was produced and lost, as key=value.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "sim_cupti_park.h"
#include "sim_cupti_queue.h"
#include "sim_cupti_state.h"
#include "sim_seam.h"

/* ------------------------------------------------------------- state */

sim_cupti_state simc = {.lock = PTHREAD_MUTEX_INITIALIZER,
                        .thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};

static __thread uint32_t tls_depth, tls_corr;
__thread uint64_t simc_ext_stack[SIMC_EXT_KINDS][SIMC_EXT_DEPTH];
__thread int simc_ext_top[SIMC_EXT_KINDS];

static int distinct_nested_corr(void)
{
    const char *s = getenv("STANDIN_NESTED_CORR");
    return s != NULL && strcmp(s, "distinct") == 0;
}

/* ---------------------------------------------------------- callbacks */

static void callback(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data)
{
    pthread_mutex_lock(&simc.lock);
    simc_subscriber *s = simc.sub;
    int on = s && (s->domain_on[d] || (cbid < SIMC_MAX_CBID && s->cbid_on[d][cbid]));
    CUpti_CallbackFunc fn = on ? s->fn : NULL;
    void *ud = on ? s->userdata : NULL;
    pthread_mutex_unlock(&simc.lock);
    if (fn) {
        atomic_fetch_add(&simc.callbacks_made, 1);
        fn(ud, d, cbid, data);
    }
}

/* Cached, as a profiler on the launch path must: a system call per
 * record would be the stand-in's cost, not the capture's. */
static __thread uint32_t tls_tid;
static uint32_t cached_pid;

static uint32_t record_tid(void)
{
    if (atomic_load(&simc.thread_id_type) != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return (uint32_t)pthread_self();
    if (tls_tid == 0)
        tls_tid = (uint32_t)syscall(SYS_gettid);
    return tls_tid;
}

static void forget_ids(void)
{
    cached_pid = 0;
    tls_tid = 0;
}

static void api_callback(sim_call *c, CUpti_ApiCallbackSite site, int *status)
{
    CUpti_CallbackData cb;
    memset(&cb, 0, sizeof cb);
    cb.callbackSite = site;
    cb.functionName = c->name;
    cb.functionParams = c->params;
    cb.functionReturnValue = status;
    cb.context = c->ctx;
    cb.contextUid = sim_context_id(c->ctx);
    cb.correlationData = &c->corr_data;
    cb.correlationId = c->corr;
    callback(c->domain, c->cbid, &cb);
}

/* -------------------------------------------------------- seam hooks */

static void hook_api_enter(sim_call *c)
{
    c->depth = tls_depth++;
    if (c->depth == 0 || distinct_nested_corr())
        c->corr = atomic_fetch_add(&simc.corr_counter, 1) + 1;
    else
        c->corr = tls_corr;
    if (c->depth == 0)
        tls_corr = c->corr;
    c->start = simq_now();
    api_callback(c, CUPTI_API_ENTER, NULL);
}

static int api_record_wanted(const sim_call *c)
{
    if (c->cbid >= SIMC_MAX_CBID)
        return 0;
    if (c->domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return atomic_load(&simc.kind_on[CUPTI_ACTIVITY_KIND_RUNTIME]) ||
               atomic_load(&simc.runtime_cbid_on[c->cbid]);
    return atomic_load(&simc.kind_on[CUPTI_ACTIVITY_KIND_DRIVER]) ||
           atomic_load(&simc.driver_cbid_on[c->cbid]);
}

static void hook_api_exit(sim_call *c, int status)
{
    uint64_t end = simq_now();
    api_callback(c, CUPTI_API_EXIT, &status);
    tls_depth--;
    if (c->depth == 0 && atomic_load(&simc.kind_on[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])) {
        for (int k = 0; k < SIMC_EXT_KINDS; k++) {
            if (simc_ext_top[k] == 0)
                continue;
            CUpti_ActivityExternalCorrelation e;
            memset(&e, 0, sizeof e);
            e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            e.externalKind = (CUpti_ExternalCorrelationKind)k;
            e.externalId = simc_ext_stack[k][simc_ext_top[k] - 1];
            e.correlationId = c->corr;
            simq_append(NULL, &e, sizeof e);
        }
    }
    if (!api_record_wanted(c))
        return;
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = c->domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME
                                                      : CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = c->cbid;
    a.start = c->start;
    a.end = end;
    if (cached_pid == 0)
        cached_pid = (uint32_t)getpid();
    a.processId = cached_pid;
    a.threadId = record_tid();
    a.correlationId = c->corr;
    a.returnValue = (uint32_t)status;
        simq_append(NULL, &a, sizeof a);
}

static void hook_work(const sim_work *w)
{
    CUpti_ActivityKind k = w->kind == SIM_WORK_KERNEL   ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                           : w->kind == SIM_WORK_MEMCPY ? CUPTI_ACTIVITY_KIND_MEMCPY
                                                        : CUPTI_ACTIVITY_KIND_MEMSET;
    int on = atomic_load(&simc.kind_on[k]) ||
             (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && atomic_load(&simc.kind_on[CUPTI_ACTIVITY_KIND_KERNEL]));
    if (on)
        simq_work(w->ctx, w);
}

static void hook_sync(const sim_call *c, CUpti_ActivitySynchronizationType type,
                      uint32_t context, uint32_t stream, uint64_t t0, uint64_t t1)
{
    if (!atomic_load(&simc.kind_on[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]))
        return;
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = type;
    s.start = simq_timestamp(t0);
    s.end = simq_timestamp(t1);
    s.correlationId = c->corr;
    s.contextId = context;
    s.streamId = stream ? stream : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    simq_append(NULL, &s, sizeof s);
}

static void hook_context_created(CUcontext ctx, uint32_t device)
{
    (void)device;
    CUpti_ResourceData r;
    memset(&r, 0, sizeof r);
    r.context = ctx;
    callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
}

static void hook_graph_node(const sim_call *c, uint32_t graph_id, uint64_t node_id)
{
    (void)graph_id;
    CUpti_GraphData g;
    memset(&g, 0, sizeof g);
    g.node = (CUgraphNode)(uintptr_t)node_id;
    g.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
    CUpti_ResourceData r;
    memset(&r, 0, sizeof r);
    r.context = c->ctx;
    r.resourceDescriptor = &g;
    callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &r);
}

static const sim_prof_ops ops = {
    .api_enter = hook_api_enter,
    .api_exit = hook_api_exit,
    .work = hook_work,
    .sync = hook_sync,
    .context_created = hook_context_created,
    .graph_node = hook_graph_node,
};

/* ------------------------------------------------------------- worker */

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        unsigned period = atomic_load(&simc.flush_period_ms);
        /* CUPTI's own heuristics wake it often; a period overrides them. */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};
        if (period)
            ts = (struct timespec){.tv_sec = period / 1000, .tv_nsec = (long)(period % 1000) * 1000000};
        nanosleep(&ts, NULL);
        simq_complete(SIMQ_WORKER);
        simq_deliver(1);
    }
    return NULL;
}

static void spawn_worker(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, worker_main, NULL) == 0)
        pthread_detach(th);
}

void simc_start_worker(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, spawn_worker);
}

/* ------------------------------------------------------- truth report */

static void write_truth(void)
{
    const char *prefix = getenv("STANDIN_TRUTH");
    if (prefix == NULL || *prefix == '\0')
        return;
    const char *rank = getenv("RANK");
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", prefix, rank ? rank : "0");
    simq_totals t;
    simq_get_totals(&t);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f, "kernels=%llu\n",
            (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
    fprintf(f, "runtime_api=%llu\n", (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_RUNTIME]);
    fprintf(f, "driver_api=%llu\n", (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_DRIVER]);
    fprintf(f, "memcpy=%llu\n", (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_MEMCPY]);
    fprintf(f, "memset=%llu\n", (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_MEMSET]);
    fprintf(f, "sync=%llu\n", (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]);
    fprintf(f, "extcorr=%llu\n",
            (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]);
    fprintf(f, "marker=%llu\n", (unsigned long long)t.records[CUPTI_ACTIVITY_KIND_MARKER]);
    fprintf(f, "dropped=%llu\n", (unsigned long long)t.dropped);
    fprintf(f, "dropped_device=%llu\n", (unsigned long long)t.dropped_device);
    fprintf(f, "dropped_kernels=%llu\n",
            (unsigned long long)t.dropped_kind[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
    fprintf(f, "incomplete=%llu\n", (unsigned long long)t.incomplete);
    fprintf(f, "parked_batches=%llu\n", (unsigned long long)simp_parked_batches());
    fprintf(f, "buffers_requested=%llu\n", (unsigned long long)t.buffers_requested);
    fprintf(f, "buffers_refused=%llu\n", (unsigned long long)t.buffers_refused);
    fprintf(f, "buffers_delivered=%llu\n", (unsigned long long)t.buffers_delivered);
    fprintf(f, "callbacks=%llu\n", (unsigned long long)atomic_load(&simc.callbacks_made));
    fprintf(f, "thread_id_type=%d\n", atomic_load(&simc.thread_id_type));
    fprintf(f, "flush_period_ms=%u\n", atomic_load(&simc.flush_period_ms));
    fclose(f);
}

__attribute__((constructor)) static void attach(void)
{
    sim_driver_attach(&ops);
    atexit(write_truth);
    pthread_atfork(NULL, NULL, forget_ids);
}
