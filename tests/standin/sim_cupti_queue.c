/* Activity buffers of the stand-in CUPTI; see sim_cupti_queue.h. */
#include "sim_cupti_queue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_activity.h>

#include "sim_cupti_park.h"
#include "sim_gpu.h"

#define MAX_CONTEXTS 4
#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

typedef struct sim_buf {
    uint8_t *mem;
    size_t size, used, max_records, n_records;
} sim_buf;

typedef struct sim_queue {
    pthread_mutex_t lock;
    CUcontext ctx;                 /* NULL: the global queue */
    sim_buf cur;
    sim_buf *full;                 /* waiting for delivery */
    size_t n_full, cap_full;
    uint64_t dropped;
} sim_queue;

/* A lock per queue (an application thread writing call records does not
 * wait for the worker writing device records), one for the work in
 * flight, one for the registry of queues, callbacks and totals. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t flight_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_queue global_q = {.lock = PTHREAD_MUTEX_INITIALIZER};
static sim_queue ctx_q[MAX_CONTEXTS];
static CUpti_BuffersCallbackRequestFunc request_fn;
static CUpti_BuffersCallbackCompleteFunc complete_fn;
static struct {
    atomic_ullong records[64], dropped_kind[64], dropped, dropped_device, incomplete, delivered,
        requested, refused;
} totals;
static _Atomic(uint64_t (*)(void)) timestamp_fn;

/* Work in flight, per CUPTI stream id; finishes in order on its stream. */
typedef struct inflight {
    CUcontext ctx;
    sim_work w;
} inflight;
static struct {
    inflight *items;
    size_t head, n, cap;
} flight[SIM_MAX_STREAMS + 8];

size_t simq_record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    default: return 0;
    }
}

void simq_set_callbacks(CUpti_BuffersCallbackRequestFunc req,
                        CUpti_BuffersCallbackCompleteFunc done)
{
    pthread_mutex_lock(&lock);
    request_fn = req;
    complete_fn = done;
    pthread_mutex_unlock(&lock);
}

int simq_have_callbacks(void)
{
    pthread_mutex_lock(&lock);
    int have = request_fn != NULL;
    pthread_mutex_unlock(&lock);
    return have;
}

uint64_t simq_now(void)
{
    uint64_t (*fn)(void) = atomic_load(&timestamp_fn);
    return fn ? fn() : sim_realtime_ns();
}

uint64_t simq_timestamp(uint64_t realtime_ns)
{
    uint64_t (*fn)(void) = atomic_load(&timestamp_fn);
    if (fn == NULL)
        return realtime_ns;
    /* The client's clock, shifted by its distance to realtime now. */
    return realtime_ns + (fn() - sim_realtime_ns());
}

void simq_set_timestamp_fn(uint64_t (*fn)(void))
{
    atomic_store(&timestamp_fn, fn);
}

static sim_queue *queue_of(CUcontext ctx)
{
    if (ctx == NULL)
        return &global_q;
    pthread_mutex_lock(&lock);
    sim_queue *q = &global_q;
    for (int i = 0; i < MAX_CONTEXTS; i++) {
        if (ctx_q[i].ctx == ctx) {
            q = &ctx_q[i];
            break;
        }
        if (ctx_q[i].ctx == NULL) {
            pthread_mutex_init(&ctx_q[i].lock, NULL);
            ctx_q[i].ctx = ctx;
            q = &ctx_q[i];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return q;
}

static void retire_current(sim_queue *q)
{
    if (q->cur.mem == NULL)
        return;
    if (q->n_full == q->cap_full) {
        size_t cap = q->cap_full ? q->cap_full * 2 : 16;
        sim_buf *p = realloc(q->full, cap * sizeof *p);
        if (p == NULL)
            abort(); /* a test stand-in: out of memory is not a case to model */
        q->full = p;
        q->cap_full = cap;
    }
    q->full[q->n_full++] = q->cur;
    memset(&q->cur, 0, sizeof q->cur);
}

/* Where a record's kind is counted in the totals. */
static unsigned kind_slot(const void *rec)
{
    CUpti_ActivityKind kind = ((const CUpti_Activity *)rec)->kind;
    return (unsigned)kind < 64 ? (unsigned)kind : 63;
}

/* Caller holds q->lock. */
static void append_locked(sim_queue *q, const void *rec, size_t size)
{
    size_t need = ALIGN8(size);
    sim_buf *b = &q->cur;
    if (b->mem != NULL && (b->used + need > b->size ||
                           (b->max_records && b->n_records >= b->max_records)))
        retire_current(q);
    if (b->mem == NULL) {
        uint8_t *mem = NULL;
        size_t bsize = 0, max = 0;
        atomic_fetch_add(&totals.requested, 1);
        CUpti_BuffersCallbackRequestFunc req = request_fn;
        if (req)
            req(&mem, &bsize, &max);
        if (mem == NULL || bsize < need) {
            /* Declined (or too small): the record is lost, and counted. */
            atomic_fetch_add(&totals.refused, 1);
            q->dropped++;
            atomic_fetch_add(&totals.dropped, 1);
            atomic_fetch_add(&totals.dropped_kind[kind_slot(rec)], 1);
            if (q->ctx != NULL)
                atomic_fetch_add(&totals.dropped_device, 1);
            return;
        }
        b->mem = mem;
        b->size = bsize;
        b->max_records = max;
    }
    memcpy(b->mem + b->used, rec, size);
    memset(b->mem + b->used + size, 0, need - size);
    b->used += need;
    b->n_records++;
    atomic_fetch_add(&totals.records[kind_slot(rec)], 1);
}

void simq_append(CUcontext ctx, const void *rec, size_t size)
{
    sim_queue *q = queue_of(ctx);
    pthread_mutex_lock(&q->lock);
    append_locked(q, rec, size);
    pthread_mutex_unlock(&q->lock);
}

void simq_work(CUcontext ctx, const sim_work *w)
{
    uint32_t s = w->stream < SIM_MAX_STREAMS + 8 ? w->stream : 0;
    pthread_mutex_lock(&flight_lock);
    if (flight[s].n == flight[s].cap) {
        size_t cap = flight[s].cap ? flight[s].cap * 2 : 1024;
        inflight *p = malloc(cap * sizeof *p);
        if (p == NULL)
            abort();
        for (size_t i = 0; i < flight[s].n; i++)
            p[i] = flight[s].items[(flight[s].head + i) % flight[s].cap];
        free(flight[s].items);
        flight[s].items = p;
        flight[s].head = 0;
        flight[s].cap = cap;
    }
    flight[s].items[(flight[s].head + flight[s].n) % flight[s].cap] = (inflight){ctx, *w};
    flight[s].n++;
    pthread_mutex_unlock(&flight_lock);
}

/* The record CUPTI writes for finished device work. */
/* Caller holds q->lock. */
static void write_work(sim_queue *q, const sim_work *w, int complete)
{
    uint64_t start = complete ? simq_timestamp(w->start) : 0;
    uint64_t end = complete ? simq_timestamp(w->end) : 0;
    if (w->kind == SIM_WORK_KERNEL) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = start;
        k.end = end;
        k.completed = end;
        k.deviceId = w->device;
        k.contextId = w->context;
        k.streamId = w->stream;
        k.gridX = w->grid[0], k.gridY = w->grid[1], k.gridZ = w->grid[2];
        k.blockX = w->block[0], k.blockY = w->block[1], k.blockZ = w->block[2];
        k.staticSharedMemory = w->static_smem;
        k.dynamicSharedMemory = w->dynamic_smem;
        k.correlationId = w->corr;
        k.name = w->name;
        k.graphId = w->graph_id;
        k.graphNodeId = w->graph_node;
        append_locked(q, &k, sizeof k);
    } else if (w->kind == SIM_WORK_MEMCPY) {
        CUpti_ActivityMemcpy6 m;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.copyKind = w->copy_kind;
        m.srcKind = w->src_kind;
        m.dstKind = w->dst_kind;
        m.bytes = w->bytes;
        m.start = start;
        m.end = end;
        m.deviceId = w->device;
        m.contextId = w->context;
        m.streamId = w->stream;
        m.correlationId = w->corr;
        append_locked(q, &m, sizeof m);
    } else {
        CUpti_ActivityMemset4 m;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        m.bytes = w->bytes;
        m.start = start;
        m.end = end;
        m.deviceId = w->device;
        m.contextId = w->context;
        m.streamId = w->stream;
        m.correlationId = w->corr;
        m.memoryKind = w->dst_kind;
        append_locked(q, &m, sizeof m);
    }
}

/* Finished work moves out of flight in batches, so launches (which add
 * to flight) wait at most for one batch. */
#define COMPLETE_BATCH 256

/* A batch out of flight and not yet in a buffer is in no place a flush
 * looks: batches move under transit_lock, so a flush waits for the one
 * the worker holds.  FlushAll hands over the records of all finished work
 * (FORCED: of all work); none may stay behind on the worker, to be written
 * after the client's last flush into a buffer nobody hands over. */
static pthread_mutex_t transit_lock = PTHREAD_MUTEX_INITIALIZER;

static void enter_transit(int on_worker)
{
    if (on_worker) {
        pthread_mutex_lock(&transit_lock);
        return;
    }
    if (pthread_mutex_trylock(&transit_lock) == 0)
        return;
    simp_flush_waiting(1); /* a parked worker (STANDIN_WORKER_PARKS) writes its batch now */
    pthread_mutex_lock(&transit_lock);
    simp_flush_waiting(-1);
}

/* Take the next batch of stream s out of flight: how many. */
static size_t take_batch(size_t s, int forced, inflight *batch, int *finished)
{
    size_t n = 0;
    pthread_mutex_lock(&flight_lock);
    uint64_t now = sim_realtime_ns();
    while (flight[s].n > 0 && n < COMPLETE_BATCH) {
        inflight *f = &flight[s].items[flight[s].head];
        int done = f->w.end <= now;
        if (!done && !forced)
            break;
        finished[n] = done;
        batch[n++] = *f;
        flight[s].head = (flight[s].head + 1) % flight[s].cap;
        flight[s].n--;
    }
    pthread_mutex_unlock(&flight_lock);
    return n;
}

void simq_complete(simq_completer who)
{
    int forced = who == SIMQ_FLUSH_FORCED, on_worker = who == SIMQ_WORKER;
    int parks = on_worker && simp_enabled();
    inflight batch[COMPLETE_BATCH];
    int finished[COMPLETE_BATCH];
    for (size_t s = 0; s < sizeof flight / sizeof flight[0]; s++) {
        for (;;) {
            uint64_t mark = parks ? simp_mark() : 0;
            enter_transit(on_worker);
            size_t n = take_batch(s, forced, batch, finished);
            if (n == 0) {
                pthread_mutex_unlock(&transit_lock);
                break;
            }
            if (parks)
                simp_park(mark);
            sim_queue *q = queue_of(batch[0].ctx);
            pthread_mutex_lock(&q->lock);
            for (size_t i = 0; i < n; i++) {
                if (!finished[i])
                    atomic_fetch_add(&totals.incomplete, 1);
                write_work(q, &batch[i].w, finished[i]);
            }
            pthread_mutex_unlock(&q->lock);
            pthread_mutex_unlock(&transit_lock);
        }
    }
}

typedef struct handover {
    CUcontext ctx;
    sim_buf b;
} handover;

/* Take the buffers to deliver out of the queues (under the lock), then
 * call the client without it: its callback may call back into CUPTI. */
/* Caller holds q->lock. */
static size_t collect(sim_queue *q, int only_full, handover **out, size_t *n, size_t *cap)
{
    size_t want = q->n_full + (!only_full && q->cur.mem && q->cur.used ? 1 : 0);
    if (*n + want > *cap) {
        size_t c = (*n + want) * 2;
        handover *p = realloc(*out, c * sizeof *p);
        if (p == NULL)
            abort();
        *out = p;
        *cap = c;
    }
    for (size_t i = 0; i < q->n_full; i++)
        (*out)[(*n)++] = (handover){q->ctx, q->full[i]};
    q->n_full = 0;
    if (!only_full && q->cur.mem && q->cur.used) {
        (*out)[(*n)++] = (handover){q->ctx, q->cur};
        memset(&q->cur, 0, sizeof q->cur);
    }
    return want;
}

void simq_deliver(int only_full)
{
    handover *list = NULL;
    size_t n = 0, cap = 0;
    sim_queue *qs[1 + MAX_CONTEXTS] = {&global_q};
    size_t nq = 1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_CONTEXTS; i++)
        if (ctx_q[i].ctx)
            qs[nq++] = &ctx_q[i];
    CUpti_BuffersCallbackCompleteFunc done = complete_fn;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < nq; i++) {
        pthread_mutex_lock(&qs[i]->lock);
        collect(qs[i], only_full, &list, &n, &cap);
        pthread_mutex_unlock(&qs[i]->lock);
    }
    atomic_fetch_add(&totals.delivered, n);
    for (size_t i = 0; i < n; i++)
        if (done)
            done(list[i].ctx, 0, list[i].b.mem, list[i].b.size, list[i].b.used);
    free(list);
}

size_t simq_take_dropped(CUcontext ctx)
{
    sim_queue *q = queue_of(ctx);
    pthread_mutex_lock(&q->lock);
    size_t d = q->dropped;
    q->dropped = 0;
    pthread_mutex_unlock(&q->lock);
    return d;
}

void simq_get_totals(simq_totals *t)
{
    for (int i = 0; i < 64; i++) {
        t->records[i] = atomic_load(&totals.records[i]);
        t->dropped_kind[i] = atomic_load(&totals.dropped_kind[i]);
    }
    t->dropped = atomic_load(&totals.dropped);
    t->dropped_device = atomic_load(&totals.dropped_device);
    t->incomplete = atomic_load(&totals.incomplete);
    t->buffers_delivered = atomic_load(&totals.delivered);
    t->buffers_requested = atomic_load(&totals.requested);
    t->buffers_refused = atomic_load(&totals.refused);
}
