/* Buffer walking and recording; see activity_sink.h. */
#include "activity_sink.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cbid_filter.h"
#include "launch_fold.h"
#include "memory_xlate.h"
#include "nccl_launch_gate.h"
#include "nvtx_pair.h"
#include "recorder.h"

/* Threads whose name has been written: an open-addressing set.  A job has
 * tens of threads that launch GPU work; past the cap, names are skipped. */
#define TSC_KNOWN_THREADS 1024u
/* Up to 2^17 slots for waiting calls and as many for waiting kernels
 * (about 10 and 14 MiB at most; a few hundred KiB while CUPTI keeps up):
 * 65,000 launches of skew between the two, what a CUPTI worker starved of
 * CPU for a fraction of a second lets build up at the highest rate. */
#define TSC_FOLD_SLOTS_LOG2 17u

const tsc_sink_out tsc_sink_to_ring = {
    .intern = tsc_rec_intern,
    .string = tsc_rec_string,
    .event = tsc_rec_event,
    .generation = NULL, /* per-thread ids: not cached */
};

static struct {
    pthread_mutex_t lock;      /* the thread set and stats: the memory callbacks share them */
    tsc_cupti_mode mode;
    tsc_corr_cache cache;      /* writer thread only */
    tsc_nvtx_pairer nvtx;      /* writer thread only */
    tsc_fold *fold;            /* writer thread only; NULL: no folding */
    tsc_launch_gate gate;      /* writer thread only; light mode: NCCL's launch calls */
    uint32_t known_tid[TSC_KNOWN_THREADS];
    tsc_sink_stats stats;
} sink = {.lock = PTHREAD_MUTEX_INITIALIZER, .mode = TSC_CUPTI_FULL};

int tsc_sink_reset(tsc_cupti_mode mode)
{
    pthread_mutex_lock(&sink.lock);
    sink.mode = mode;
    tsc_corr_clear(&sink.cache);
    tsc_nvtx_init(&sink.nvtx);
    memset(sink.known_tid, 0, sizeof sink.known_tid);
    memset(&sink.stats, 0, sizeof sink.stats);
    memset(&sink.gate, 0, sizeof sink.gate);
    tsc_fold_free(sink.fold);
    /* Light mode traces no kernels: nothing to fold into. */
    sink.fold = mode == TSC_CUPTI_FULL ? tsc_fold_new(TSC_FOLD_SLOTS_LOG2) : NULL;
    /* CUPTI's default clock is tscope's until a sample says otherwise. */
    if (sink.fold)
        tsc_fold_set_ext_redundant(sink.fold, 1);
    int ok = mode != TSC_CUPTI_FULL || sink.fold != NULL;
    pthread_mutex_unlock(&sink.lock);
    return ok ? 0 : -1;
}

void tsc_sink_set_light(int on)
{
    pthread_mutex_lock(&sink.lock);
    if (sink.fold != NULL) /* only a sink that started in full mode has one */
        sink.mode = on ? TSC_CUPTI_LIGHT : TSC_CUPTI_FULL;
    pthread_mutex_unlock(&sink.lock);
}

/* 1 if tid was not in the set (and is now), 0 if known or the set is full.
 * Caller holds the lock. */
static int remember_thread(uint32_t tid)
{
    if (tid == 0)
        return 0;
    for (uint32_t i = 0; i < TSC_KNOWN_THREADS; i++) {
        uint32_t *slot = &sink.known_tid[(tid + i) % TSC_KNOWN_THREADS];
        if (*slot == tid)
            return 0;
        if (*slot == 0) {
            *slot = tid;
            return 1;
        }
    }
    return 0;
}

static size_t read_thread_name(uint32_t tid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, cap);
    close(fd);
    if (n <= 0)
        return 0;
    size_t len = (size_t)n;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
        len--;
    return len;
}

static void define_thread(uint32_t tid, const char *name, const tsc_sink_out *out)
{
    struct {
        tsc_desc_thread head;
        char name[64];
    } payload;
    size_t len;
    if (name != NULL) {
        len = strnlen(name, sizeof payload.name);
        memcpy(payload.name, name, len);
    } else {
        len = read_thread_name(tid, payload.name, sizeof payload.name);
    }
    if (len == 0)
        return; /* thread gone before its buffer completed: nothing to say */
    payload.head.tid = tid;
    payload.head.name_len = (uint32_t)len;
    out->intern(TSC_DESC_THREAD, &payload, (uint16_t)(sizeof payload.head + len));
}

void tsc_sink_note_thread(uint32_t tid, const char *name, const tsc_sink_out *out)
{
    pthread_mutex_lock(&sink.lock);
    int fresh = remember_thread(tid);
    pthread_mutex_unlock(&sink.lock);
    if (fresh)
        define_thread(tid, name, out);
}

/* What one pass over buffers (or one aging) wrote, added to the stats
 * once at its end: no lock per record. */
typedef struct sink_pass {
    const tsc_sink_out *out;
    uint64_t kernels, folded, calls_alone;
    uint32_t last_tid;         /* the thread noted last: most launches share one */
} sink_pass;

static void pass_end(const sink_pass *p)
{
    pthread_mutex_lock(&sink.lock);
    sink.stats.kernels += p->kernels;
    sink.stats.kernels_folded += p->folded;
    sink.stats.calls_alone += p->calls_alone;
    pthread_mutex_unlock(&sink.lock);
}

static void note_thread_once(sink_pass *p, uint32_t tid)
{
    if (tid != 0 && tid != p->last_tid) {
        tsc_sink_note_thread(tid, NULL, p->out);
        p->last_tid = tid;
    }
}

/* Names come as CUPTI's (or the cbid table's) stable pointers: their
 * string ids are cached by pointer instead of hashing the name for every
 * record, as long as the output's ids stay defined. */
#define NAME_CACHE 512u

static struct {
    const tsc_sink_out *out;
    uint64_t generation;
    const char *ptr[NAME_CACHE];
    uint32_t id[NAME_CACHE];
} names;

static uint32_t name_id(const tsc_sink_out *out, uint64_t gen, const char *name)
{
    if (out->generation == NULL)
        return out->string(name, strlen(name));
    if (names.out != out || names.generation != gen) {
        memset(&names, 0, sizeof names);
        names.out = out;
        names.generation = gen;
    }
    size_t slot = ((uintptr_t)name >> 3) % NAME_CACHE;
    if (names.ptr[slot] == name)
        return names.id[slot];
    uint32_t id = out->string(name, strlen(name));
    if (id != 0) {
        names.ptr[slot] = name;
        names.id[slot] = id;
    }
    return id;
}

void tsc_sink_emit(const tsc_xrec *x, const tsc_sink_out *out)
{
    uint32_t desc = x->desc_field;
    if (x->desc_type != 0) {
        /* The descriptor embeds the name id, so copy it to fill that in. */
        tsc_xrec local = *x;
        if (x->name != NULL) {
            uint32_t name_id = out->string(x->name, strlen(x->name));
            if (name_id == 0) {
                out->event(x->ev_kind, x->flags, x->aux, 0, x->start_ns, x->end_ns, x->val);
                return; /* desc 0: the recorder counts it as dropped */
            }
            if (x->desc_type == TSC_DESC_KERNEL)
                local.desc.kernel.name = name_id;
            else if (x->desc_type == TSC_DESC_API)
                local.desc.api.name = name_id;
        }
        desc = out->intern(x->desc_type, &local.desc, x->desc_len);
    }
    if (x->host_tid != 0)
        tsc_sink_note_thread(x->host_tid, NULL, out);
    out->event(x->ev_kind, x->flags, x->aux, desc, x->start_ns, x->end_ns, x->val);
}

/* Every node of a graph has its own launch descriptor (the node id is in
 * it), and a replayed graph brings them all back, more than the stream's
 * intern table holds: their ids are kept by node, valid while the ids the
 * output handed out stay defined. */
#define NODE_CACHE 16384u

static struct {
    uint64_t generation;
    struct node_entry {
        uint64_t node;
        uint32_t tid, cbid, desc;
    } e[NODE_CACHE];
} nodes;

/* The same launch configuration comes back for most kernels: its id is
 * kept in a direct-mapped cache (a few fields pick the slot, the whole
 * descriptor must match), which spares hashing 72 bytes per kernel. */
#define DESC_CACHE 1024u

static struct {
    uint64_t generation;
    struct desc_entry {
        uint32_t id;
        tsc_desc_kernel_launch d;
    } e[DESC_CACHE];
} descs;

static size_t desc_slot(const tsc_desc_kernel_launch *d)
{
    uint32_t h = d->kernel.name * 2654435761u ^ d->kernel.grid[0] * 40503u ^
                 d->kernel.block[0] * 131u ^ d->tid * 65599u ^ d->kernel.stream ^ d->api_cbid;
    return (h ^ (h >> 15)) % DESC_CACHE;
}

static uint32_t plain_launch_desc(const tsc_sink_out *out, const tsc_desc_kernel_launch *d,
                                  uint64_t gen)
{
    if (descs.generation != gen) {
        memset(&descs, 0, sizeof descs);
        descs.generation = gen;
    }
    struct desc_entry *e = &descs.e[desc_slot(d)];
    if (e->id && memcmp(&e->d, d, sizeof *d) == 0)
        return e->id;
    uint32_t id = out->intern(TSC_DESC_KERNEL_LAUNCH, d, sizeof *d);
    if (id) {
        e->id = id;
        e->d = *d;
    }
    return id;
}

static uint32_t launch_desc(const tsc_sink_out *out, uint64_t gen,
                            const tsc_desc_kernel_launch *d)
{
    if (out->generation == NULL)
        return out->intern(TSC_DESC_KERNEL_LAUNCH, d, sizeof *d);
    if (d->graph_node == 0)
        return plain_launch_desc(out, d, gen);
    if (nodes.generation != gen) {
        memset(&nodes, 0, sizeof nodes);
        nodes.generation = gen;
    }
    struct node_entry *e = &nodes.e[d->graph_node % NODE_CACHE];
    if (e->desc && e->node == d->graph_node && e->tid == d->tid && e->cbid == d->api_cbid)
        return e->desc;
    uint32_t id = out->intern(TSC_DESC_KERNEL_LAUNCH, d, sizeof *d);
    if (id)
        *e = (struct node_entry){d->graph_node, d->tid, d->api_cbid, id};
    return id;
}

/* ------------------------------------------------------------- folding */

static void call_as_api(const tsc_fold_call *c, tsc_xrec *x)
{
    memset(x, 0, sizeof *x);
    x->ev_kind = TSC_EV_API;
    x->desc_type = TSC_DESC_API;
    x->desc_len = sizeof(tsc_desc_api);
    x->desc.api.domain = c->domain;
    x->desc.api.cbid = c->cbid;
    x->desc.api.tid = c->tid;
    x->name = c->name;
    x->start_ns = c->start;
    x->end_ns = c->end;
    x->val = c->corr;
    x->host_tid = c->tid;
}

static void fold_both(void *ctx, const tsc_kernel_rec *k, const tsc_fold_call *c)
{
    sink_pass *p = ctx;
    const tsc_sink_out *out = p->out;
    p->kernels++;
    uint64_t kernel_ns = k->end - k->start, call_ns = c->end - c->start;
    uint64_t lead = k->start - c->start;
    /* One slot only when every part fits exactly; otherwise two records. */
    if (k->start < c->start || c->end < c->start || kernel_ns > UINT32_MAX ||
        call_ns > UINT32_MAX || lead > UINT32_MAX) {
        tsc_xrec kx, api;
        tsc_xrec_of_kernel(k, &kx);
        call_as_api(c, &api);
        tsc_sink_emit(&kx, out);
        tsc_sink_emit(&api, out);
        return;
    }
    tsc_desc_kernel_launch d;
    memset(&d, 0, sizeof d);
    d.kernel = k->desc;
    /* Read once per kernel: a chunk that fails to write changes it. */
    uint64_t gen = out->generation ? out->generation() : 0;
    d.kernel.name = name_id(out, gen, k->name);
    d.api_name = name_id(out, gen, c->name);
    d.tid = c->tid;
    d.api_cbid = c->cbid;
    d.api_domain = c->domain;
    d.graph_node = k->graph_node;
    uint32_t desc = d.kernel.name && d.api_name ? launch_desc(out, gen, &d) : 0;
    note_thread_once(p, c->tid);
    out->event(TSC_EV_KERNEL_LAUNCH, 0, 0, desc, k->start, TSC_PACK32(kernel_ns, call_ns),
               TSC_PACK32(k->corr, lead));
    p->folded++;
}

static void fold_kernel_alone(void *ctx, const tsc_kernel_rec *k)
{
    sink_pass *p = ctx;
    p->kernels++;
    tsc_xrec x;
    tsc_xrec_of_kernel(k, &x);
    tsc_sink_emit(&x, p->out);
}

static void fold_call_alone(void *ctx, const tsc_fold_call *c)
{
    sink_pass *p = ctx;
    tsc_xrec api;
    call_as_api(c, &api);
    tsc_sink_emit(&api, p->out);
    p->calls_alone++;
}

static void fold_extcorr(void *ctx, uint32_t corr, uint64_t id, uint8_t kind)
{
    sink_pass *p = ctx;
    p->out->event(TSC_EV_EXTCORR, kind, 0, corr, 0, 0, id);
}

static tsc_fold_actions actions_for(sink_pass *p)
{
    return (tsc_fold_actions){.ctx = p, .both = fold_both, .kernel_alone = fold_kernel_alone,
                              .call_alone = fold_call_alone, .extcorr = fold_extcorr};
}

/* Kernels, launch calls and their external ids go to the fold; the rest
 * is written as it comes.  Returns 1 when the fold took the record. */
static int to_fold(const tsc_xrec *x, const tsc_fold_actions *a)
{
    if (sink.fold == NULL || x->ev_kind != TSC_EV_EXTCORR)
        return 0;
    tsc_fold_add_ext(sink.fold, x->desc_field, x->val, x->flags, a);
    return 1;
}

/* Kernels and launch calls go straight to the fold (nearly all records
 * at high launch rates): no descriptor is built for either unless one
 * never meets the other.  1 when taken (or skipped as malformed, *bad
 * set). */
static int launch_or_kernel(const CUpti_Activity *rec, const tsc_fold_actions *a, int *bad)
{
    *bad = 0;
    if (sink.fold == NULL)
        return 0;
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        tsc_kernel_rec k;
        if (tsc_kernel_rec_of((const CUpti_ActivityKernel10 *)rec, &k))
            tsc_fold_add_kernel(sink.fold, &k, a);
        else
            *bad = 1;
        return 1;
    }
    /* stepped down to light: new calls are filtered as light mode does */
    if (sink.mode != TSC_CUPTI_FULL ||
        (rec->kind != CUPTI_ACTIVITY_KIND_RUNTIME && rec->kind != CUPTI_ACTIVITY_KIND_DRIVER))
        return 0;
    const CUpti_ActivityAPI *api = (const CUpti_ActivityAPI *)rec;
    uint8_t domain = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? TSC_API_RUNTIME : TSC_API_DRIVER;
    const tsc_api_entry *e = tsc_api_lookup(domain, api->cbid);
    if (e == NULL || !tsc_api_class_launches(e->cls))
        return 0;
    if (api->start == 0 || api->end < api->start) {
        *bad = 1;
        return 1;
    }
    tsc_fold_call c = {.corr = api->correlationId, .tid = api->threadId, .cbid = api->cbid,
                       .domain = domain, .graph = e->cls == TSC_APICLASS_GRAPH_LAUNCH,
                       .start = api->start, .end = api->end, .name = e->name};
    tsc_fold_add_call(sink.fold, &c, a);
    return 1;
}

/* ---------------------------------------------------------------- NVTX */

/* NVTX markers (kept out of activity_xlate: they need the pairer's
 * state).  Returns 1 when a range was recorded. */
static int marker_record(const CUpti_ActivityMarker2 *m, const tsc_sink_out *out)
{
    uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
    tsc_nvtx_range r;
    int have = 0;
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        memset(&r, 0, sizeof r);
        r.id = m->id;
        r.tid = tid;
        r.start_ns = r.end_ns = m->timestamp;
        snprintf(r.name, sizeof r.name, "%s", m->name ? m->name : "");
        snprintf(r.domain, sizeof r.domain, "%s", m->domain ? m->domain : "");
        have = 1;
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        tsc_nvtx_start(&sink.nvtx, m->id, m->timestamp, tid, m->name, m->domain);
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        have = tsc_nvtx_end(&sink.nvtx, m->id, m->timestamp, &r);
    }
    if (!have)
        return 0;
    uint32_t name = out->string(r.name, strlen(r.name));
    /* Ranges of a named domain (NCCL's own) are not the user's. */
    uint32_t domain = r.domain[0] ? out->string(r.domain, strlen(r.domain)) : 0;
    out->event(TSC_EV_NVTX, 0, 0, name, r.start_ns, r.end_ns, TSC_PACK32(r.tid, domain));
    if (r.tid != 0)
        tsc_sink_note_thread(r.tid, NULL, out);
    return 1;
}

/* ------------------------------------------------------------ buffers */

/* Light mode: the correlation ids of the buffer's calls made inside an
 * NCCL call, read before its records are written, so that the order of an
 * EXTERNAL_CORRELATION record and its API record in the buffer does not
 * matter (nccl_launch_gate.h). */
static void gate_prescan(uint8_t *buffer, size_t valid_size, tsc_next_record_fn next)
{
    CUpti_Activity *rec = NULL, *prev = NULL;
    for (;;) {
        CUptiResult r = next(buffer, valid_size, &rec);
        if (r == CUPTI_ERROR_INVALID_KIND && rec != NULL && rec != prev) {
            prev = rec;
            continue;
        }
        if (r != CUPTI_SUCCESS || rec == NULL)
            return;
        prev = rec;
        tsc_xrec x;
        if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION &&
            tsc_xlate_extcorr((const CUpti_ActivityExternalCorrelation *)rec, &x) &&
            tsc_gate_is_nccl_external_id(x.val))
            tsc_gate_note(&sink.gate, x.desc_field);
    }
}

/* Light mode keeps no cuLaunchKernelEx but NCCL's (cuBLASLt and Triton
 * launch with it too). */
static int light_launch_not_nccl(const tsc_xrec *x)
{
    return sink.mode == TSC_CUPTI_LIGHT && x->ev_kind == TSC_EV_API && x->api != NULL &&
           x->api->cls == TSC_APICLASS_NCCL_LAUNCH && !tsc_gate_has(&sink.gate, (uint32_t)x->val);
}

void tsc_sink_buffer(uint8_t *buffer, size_t valid_size, tsc_next_record_fn next,
                     const tsc_sink_out *out)
{
    if (buffer == NULL || valid_size == 0 || next == NULL)
        return;
    sink_pass pass = {.out = out};
    tsc_fold_actions acts = actions_for(&pass);
    CUpti_Activity *rec = NULL, *prev = NULL;
    uint64_t records = 0, written = 0, skipped = 0, incomplete = 0, overhead = 0;
    uint64_t not_nccl = 0, device = 0;
    if (sink.mode == TSC_CUPTI_LIGHT)
        gate_prescan(buffer, valid_size, next);
    for (;;) {
        CUptiResult r = next(buffer, valid_size, &rec);
        if (r == CUPTI_ERROR_INVALID_KIND && rec != NULL && rec != prev) {
            /* Handed over unfinished (a forced flush): lost, counted. */
            incomplete++;
            prev = rec;
            continue;
        }
        if (r != CUPTI_SUCCESS || rec == NULL)
            break;
        prev = rec;
        records++;
        if (sink.mode == TSC_CUPTI_OFF) {
            skipped++;
            continue;
        }
        if (rec->kind == CUPTI_ACTIVITY_KIND_MARKER) {
            int ok = marker_record((const CUpti_ActivityMarker2 *)rec, out);
            written += ok;
            skipped += !ok;
            continue;
        }
        if (tsc_is_memory_kind(rec->kind)) {
            tsc_xrec xs[TSC_MEM_XREC_MAX];
            size_t n = tsc_xlate_memory_record(rec, xs);
            for (size_t i = 0; i < n; i++)
                tsc_sink_emit(&xs[i], out);
            written += n;
            skipped += n == 0;
            continue;
        }
        int bad;
        if (launch_or_kernel(rec, &acts, &bad)) {
            written += !bad;
            skipped += bad;
            continue;
        }
        tsc_xrec x;
        if (!tsc_xlate_record(rec, sink.mode, &sink.cache, &overhead, &x)) {
            skipped++;
            continue;
        }
        if (light_launch_not_nccl(&x)) {
            skipped++;
            not_nccl++;
            continue;
        }
        written++;
        device += x.ev_kind == TSC_EV_MEMCPY || x.ev_kind == TSC_EV_MEMSET ||
                  x.ev_kind == TSC_EV_SYNC || x.ev_kind == TSC_EV_API;
        if (!to_fold(&x, &acts)) {
            pass.kernels += x.ev_kind == TSC_EV_KERNEL;
            tsc_sink_emit(&x, out);
        }
    }
    if (sink.fold)
        tsc_fold_settle(sink.fold, &acts);
    pass_end(&pass);
    pthread_mutex_lock(&sink.lock);
    sink.stats.records += records;
    sink.stats.written += written;
    sink.stats.skipped += skipped;
    sink.stats.incomplete += incomplete;
    sink.stats.light_launches_not_nccl += not_nccl;
    sink.stats.device_work += device;
    sink.stats.overhead_ns += overhead;
    pthread_mutex_unlock(&sink.lock);
}

void tsc_sink_age(const tsc_sink_out *out, int ext_redundant)
{
    if (sink.fold == NULL)
        return;
    sink_pass pass = {.out = out};
    tsc_fold_actions acts = actions_for(&pass);
    tsc_fold_set_ext_redundant(sink.fold, ext_redundant);
    tsc_fold_age(sink.fold, &acts);
    pass_end(&pass);
}

uint64_t tsc_sink_fold_bytes(void)
{
    return sink.fold ? tsc_fold_get_stats(sink.fold).table_bytes : 0;
}

void tsc_sink_finish(const tsc_sink_out *out)
{
    if (sink.fold == NULL)
        return;
    sink_pass pass = {.out = out};
    tsc_fold_actions acts = actions_for(&pass);
    tsc_fold_drain(sink.fold, &acts);
    pass_end(&pass);
}

tsc_sink_stats tsc_sink_get_stats(void)
{
    pthread_mutex_lock(&sink.lock);
    tsc_sink_stats s = sink.stats;
    pthread_mutex_unlock(&sink.lock);
    return s;
}
