/* Streaming load of a job directory: each dump is read once through the
 * reader's callbacks straight into flat per-rank arrays.  Descriptors are
 * decoded once and cached by id, so the per-event path does no hashing and
 * no allocation beyond amortised array growth. */
#include "job_load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corr_index.h"
#include "end_meta.h"
#include "util/interval_set.h"
#include "job_build.h"
#include "launch_join.h"
#include "util/mem_hint.h"
#include "memory_timeline.h"
#include "dup_ranks.h"
#include "util/radix_sort.h"
#include "rank_telemetry.h"
#include "rank_nprof.h"
#include "reader/dump_reader.h"
#include "reader/gpu_loss.h"
#include "tsc_peaks.h"

/* A GEMM's precision (format/tsc_peaks.h; tsa_dtype has tsc_prec's values). */
static uint8_t gemm_dtype(const tsc_desc_gemm *g)
{
    return (uint8_t)tsc_gemm_precision(g->a_type, g->compute_type);
}

/* Per-descriptor cache entry, indexed by descriptor id. */
typedef struct desc_cache {
    uint8_t ready;
    uint32_t name;             /* interned name (kernel, api, nvtx) */
    tsc_desc_kernel kernel;
    uint32_t call_name;        /* kernel launch (1.2): the launching call's name */
    uint32_t call_tid;         /* and its thread */
    uint64_t graph_node;       /* a graph kernel's node (1.2), else 0 */
} desc_cache;

#define DESC_CACHE_MAX (1u << 22) /* ids above this are decoded each time */

typedef struct id_pair {
    uint64_t key;
    uint64_t value;
} id_pair;

#define OWN_GEMM (1ull << 63) /* own-id value tag: a GEMM index, not an NCCL one */

typedef struct load_ctx {
    tsa_job *job;
    tsa_rank *rank;
    const char *path;
    desc_cache *cache;
    size_t cache_cap;
    id_pair *ext;  size_t n_ext, cap_ext;    /* EXTCORR: external id -> correlation */
    id_pair *own;  size_t n_own, cap_own;    /* our external id -> nccl (or GEMM) index */
    tsa_nccl_op *open; size_t n_open, cap_open; /* entered, not yet left: one per thread */
    tsa_launch_at *launched; size_t n_launched, cap_launched; /* folded kernels' calls (1.2) */
    tsa_graph_node *nodes; size_t n_nodes, cap_nodes;         /* captured graph nodes (1.2) */
    tsa_replay *replays; size_t n_replays, cap_replays;       /* kernels replayed from them */
    uint64_t bad_times;   /* events skipped for implausible times */
    tsr_gpu_counts gpu;   /* the capture's GPU counters (format 1.2 metadata) */
    int oom;
    /* The primary device among device.N.*: the capture writes device_name
     * right after the primary's device.N.name (cupti/device_meta.c).
     * 1 + index; 0 none seen. */
    int dev_named, dev_primary;
} load_ctx;

static int push_pair(id_pair **arr, size_t *n, size_t *cap, uint64_t key, uint64_t value)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        id_pair *p = realloc(*arr, c * sizeof *p);
        if (!p)
            return -1;
        *arr = p;
        *cap = c;
    }
    (*arr)[*n].key = key;
    (*arr)[*n].value = value;
    (*n)++;
    return 0;
}

static desc_cache *cache_slot(load_ctx *c, uint32_t id)
{
    if (id >= DESC_CACHE_MAX)
        return NULL;
    if (id >= c->cache_cap) {
        size_t cap = c->cache_cap ? c->cache_cap : 1024;
        while (cap <= id)
            cap *= 2;
        desc_cache *p = realloc(c->cache, cap * sizeof *p);
        if (!p)
            return NULL;
        memset(p + c->cache_cap, 0, (cap - c->cache_cap) * sizeof *p);
        c->cache = p;
        c->cache_cap = cap;
    }
    return &c->cache[id];
}

static char *dup_or_keep(char *old, const char *value)
{
    char *s = strdup(value);
    if (!s)
        return old;
    free(old);
    return s;
}

/* device.N.name and device.N.compute_capability ("8.6"): the primary
 * device's capability goes to the rank. */
static void device_meta(load_ctx *c, const char *key, const char *value)
{
    char *end;
    long n = strtol(key + 7, &end, 10);
    if (end == key + 7 || *end != '.' || n < 0 || n > 1000)
        return;
    if (!strcmp(end + 1, "name")) {
        c->dev_named = (int)n + 1;
    } else if (!strcmp(end + 1, "compute_capability") && c->dev_primary == n + 1) {
        int major = 0, minor = 0;
        if (sscanf(value, "%d.%d", &major, &minor) == 2 && major > 0 && major < 100 &&
            minor >= 0 && minor < 10)
            c->rank->compute_capability = (uint16_t)(major * 10 + minor);
    }
}

static void on_meta(void *ctx, const tsr_file *f, const char *key, const char *value,
                    int end_chunk)
{
    (void)f;
    (void)end_chunk;
    load_ctx *c = ctx;
    tsa_rank *r = c->rank;
    if (!strcmp(key, TSC_META_HOST))
        r->host = dup_or_keep(r->host, value);
    else if (!strcmp(key, TSC_META_RANK))
        r->rank = (int32_t)strtol(value, NULL, 10);
    else if (!strcmp(key, TSC_META_LOCAL_RANK))
        r->local_rank = (int32_t)strtol(value, NULL, 10);
    else if (!strcmp(key, TSC_META_WORLD_SIZE))
        r->world_size = (int32_t)strtol(value, NULL, 10);
    else if (!strcmp(key, TSC_META_RUN_ID))
        r->run_id = dup_or_keep(r->run_id, value);
    else if (!strcmp(key, TSC_META_CMDLINE))
        r->cmdline = dup_or_keep(r->cmdline, value);
    else if (!strcmp(key, TSC_META_DEVICE_NAME)) {
        r->device_name = dup_or_keep(r->device_name, value);
        c->dev_primary = c->dev_named;
    } else if (!strncmp(key, "device.", 7))
        device_meta(c, key, value);
    else if (!strcmp(key, TSC_META_CUPTI_OTHER))
        r->cupti_other = dup_or_keep(r->cupti_other, value);
    else if (!strcmp(key, TSC_META_RESTART))
        r->restart = (uint32_t)strtoul(value, NULL, 10);
    else if (!strcmp(key, TSC_META_PID))
        r->pid = (uint32_t)strtoul(value, NULL, 10);
    else if (!strcmp(key, TSC_META_DROPPED))
        r->dropped_events = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_DROPPED_WRITE))
        r->dropped_write_bytes = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_CUPTI_DROPPED))
        r->cupti_dropped_records = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_MEM_INFO_TOTAL))
        r->mem_total_bytes = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_DEVICE_MEM_BYTES) && r->mem_total_bytes == 0)
        r->mem_total_bytes = strtoull(value, NULL, 10); /* cuMemGetInfo's total wins */
    else if (!strcmp(key, TSC_META_MEM_INFO_FREE))
        r->mem_free_bytes = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_MEM_INFO_TIME))
        r->mem_info_ns = (int64_t)(strtoull(value, NULL, 10) & INT64_MAX);
    else {
        tsr_gpu_counts_meta(&c->gpu, key, value);
        tsa_load_end_meta(&r->end, key, value);
        if (tsa_self_cost_on_meta(&r->self_cost, key, value))
            return;
        if (tsa_telemetry_on_meta(r, key, value) || tsa_nprof_on_meta(r, key, value))
            c->oom = 1;
    }
}

/* GPU and host samples (format 1.1), to telemetry.c, with the name their
 * descriptor gives (a task's, a network port's; the table of event kinds
 * says which kinds have one). */
static void add_telemetry(load_ctx *c, const tsr_event *e)
{
    tsc_desc_task t = {0};
    const char *name = NULL;
    size_t name_len = 0;
    switch (tsr_desc_type_for_kind(e->kind)) {
    case TSC_DESC_TASK:
        if (tsr_decode_task(e->desc, &t, &name))
            return; /* undefined descriptor: the reader reported it */
        name_len = t.name_len;
        break;
    case TSC_DESC_STRING:
        if (tsr_decode_string(e->desc, &name, &name_len))
            return;
        break;
    default: break;
    }
    if (tsa_telemetry_on_event(c->rank, e->kind, e->flags, e->aux, e->desc_id, e->start_ns,
                               e->val, t.tid, t.role, name, name_len))
        c->oom = 1;
}

static void on_desc(void *ctx, const tsr_file *f, const tsr_desc *d)
{
    (void)f;
    load_ctx *c = ctx;
    if (d->type == TSC_DESC_THREAD) {
        uint32_t tid;
        const char *name;
        size_t len;
        if (!tsr_decode_thread(d, &tid, &name, &len)) {
            char buf[256];
            if (len >= sizeof buf)
                len = sizeof buf - 1;
            memcpy(buf, name, len);
            buf[len] = 0;
            if (tsa_rank_add_thread(c->rank, tid, buf))
                c->oom = 1;
        }
    }
}

/* Interned name of a string descriptor, cached per referring descriptor. */
static uint32_t intern_string_id(load_ctx *c, const tsr_file *f, uint32_t string_id)
{
    const char *s = tsr_string(f, string_id);
    uint32_t idx = tsa_rank_intern(c->rank, s ? s : "?");
    if (idx == UINT32_MAX)
        c->oom = 1;
    return idx;
}

/* A kernel (or the kernel part of a kernel launch) from its cached
 * descriptor; NULL when the descriptor is unusable or memory is out. */
static tsa_kernel *new_kernel(load_ctx *c, const desc_cache *dc, uint64_t start, uint64_t end,
                              uint32_t correlation)
{
    tsa_kernel *k = tsa_rank_new_kernel(c->rank);
    if (!k) {
        c->oom = 1;
        return NULL;
    }
    k->start_ns = (int64_t)start;
    k->end_ns = (int64_t)end;
    k->name = dc->name;
    k->stream = dc->kernel.stream;
    k->device = dc->kernel.device;
    k->correlation = correlation;
    memcpy(k->grid, dc->kernel.grid, sizeof k->grid);
    memcpy(k->block, dc->kernel.block, sizeof k->block);
    k->graph_id = dc->kernel.graph_id;
    k->nccl = TSA_NONE;
    k->gemm = TSA_NONE;
    return k;
}

static desc_cache *cached_desc(load_ctx *c, uint32_t id, desc_cache *local)
{
    desc_cache *dc = cache_slot(c, id);
    if (!dc) {
        memset(local, 0, sizeof *local);
        dc = local;
    }
    return dc;
}

static void add_kernel(load_ctx *c, const tsr_file *f, const tsr_event *e)
{
    desc_cache local, *dc = cached_desc(c, e->desc_id, &local);
    if (!dc->ready) {
        if (tsr_decode_kernel(e->desc, &dc->kernel))
            return;
        dc->name = intern_string_id(c, f, dc->kernel.name);
        dc->ready = 1;
    }
    new_kernel(c, dc, e->start_ns, e->end_ns, (uint32_t)e->val);
}

/* One slot, two records (format 1.2): the kernel, and the call that
 * launched it as an API record, exactly as if both had been written. */
static void add_kernel_launch(load_ctx *c, const tsr_file *f, const tsr_event *e)
{
    desc_cache local, *dc = cached_desc(c, e->desc_id, &local);
    if (!dc->ready) {
        tsc_desc_kernel_launch d;
        if (tsr_decode_kernel_launch(e->desc, &d))
            return;
        dc->kernel = d.kernel;
        dc->name = intern_string_id(c, f, d.kernel.name);
        dc->call_name = intern_string_id(c, f, d.api_name);
        dc->call_tid = d.tid;
        dc->graph_node = d.graph_node;
        dc->ready = 1;
    }
    tsr_launch_split s;
    tsr_split_kernel_launch(e, &s);
    if (s.call_start > s.kernel_start || s.kernel_end > (1ull << 62)) {
        c->bad_times++;
        return;
    }
    tsa_kernel *k = new_kernel(c, dc, s.kernel_start, s.kernel_end, s.correlation);
    tsa_api *a = k ? tsa_rank_new_api(c->rank) : NULL;
    if (!a) {
        c->oom = 1;
        return;
    }
    k->launch_tid = dc->call_tid;
    a->start_ns = (int64_t)s.call_start;
    a->end_ns = (int64_t)s.call_end;
    a->tid = dc->call_tid;
    a->correlation = s.correlation;
    a->name = dc->call_name;
    tsa_launch_at at = {.tid = dc->call_tid, .t_ns = (int64_t)s.call_start,
                        .correlation = s.correlation};
    if (tsa_launch_push(&c->launched, &c->n_launched, &c->cap_launched, at))
        c->oom = 1;
    tsa_replay rp = {.kernel = c->rank->n_kernels - 1, .node = dc->graph_node,
                     .call_start = (int64_t)s.call_start, .call_end = (int64_t)s.call_end};
    if (dc->graph_node && tsa_replay_push(&c->replays, &c->n_replays, &c->cap_replays, rp))
        c->oom = 1;
}

static void add_graph_node(load_ctx *c, const tsr_event *e)
{
    tsc_desc_graph_node d;
    if (tsr_decode_graph_node(e->desc, &d))
        return;
    tsa_graph_node n = {.node = d.node, .external_id = d.external_id};
    if (tsa_node_push(&c->nodes, &c->n_nodes, &c->cap_nodes, n))
        c->oom = 1;
}

static int fill_nccl(tsa_nccl_op *op, const tsr_event *e);

/* The call thread `tid` is inside, or NULL. */
static tsa_nccl_op *open_call(load_ctx *c, uint32_t tid)
{
    for (size_t i = 0; i < c->n_open; i++)
        if (c->open[i].tid == tid)
            return &c->open[i];
    return NULL;
}

/* ENTER opens the thread's call (a thread is inside one call at a time: a
 * later ENTER replaces an earlier one whose exit record was lost); HANG
 * marks it as reported by the watchdog; the exit record closes it. */
static void note_entry(load_ctx *c, const tsr_event *e)
{
    tsa_nccl_op op;
    if (!e->desc || fill_nccl(&op, e))
        return;
    tsa_nccl_op *o = open_call(c, e->tid);
    if (e->kind == TSC_EV_HANG) {
        if (o && o->seq == op.seq && o->comm_id == op.comm_id)
            o->flags |= TSA_NCCL_F_WATCHDOG;
        return;
    }
    op.end_ns = op.gpu_end_ns = op.start_ns;
    if (!o) {
        if (c->n_open == c->cap_open) {
            size_t cap = c->cap_open ? c->cap_open * 2 : 8;
            tsa_nccl_op *p = realloc(c->open, cap * sizeof *p);
            if (!p) {
                c->oom = 1;
                return;
            }
            c->open = p;
            c->cap_open = cap;
        }
        o = &c->open[c->n_open++];
    }
    *o = op;
}

static void close_entry(load_ctx *c, const tsa_nccl_op *op)
{
    tsa_nccl_op *o = open_call(c, op->tid);
    if (o && o->seq == op->seq && o->comm_id == op->comm_id && o->op == op->op)
        *o = c->open[--c->n_open];
}

static int fill_nccl(tsa_nccl_op *op, const tsr_event *e)
{
    tsc_desc_nccl_call d;
    if (tsr_decode_nccl_call(e->desc, &d))
        return -1;
    memset(op, 0, sizeof *op);
    op->start_ns = op->gpu_start_ns = (int64_t)e->start_ns;
    op->end_ns = op->gpu_end_ns = (int64_t)e->end_ns;
    op->seq = e->val;
    op->comm_id = d.comm_id;
    op->count = d.count;
    op->bytes = d.bytes;
    op->stream = d.stream;
    op->comm_rank = d.comm_rank;
    op->comm_size = d.comm_size;
    op->tid = e->tid;
    op->peer = d.peer;
    op->op = d.op;
    op->dtype = d.dtype;
    op->redop = d.redop;
    op->result = (uint8_t)(e->aux >> 8);
    op->group_depth = (uint8_t)(e->aux & 0xff);
    op->flags = e->flags;
    op->kernel = TSA_NONE;
    return 0;
}

static void add_nccl(load_ctx *c, const tsr_event *e)
{
    tsa_nccl_op op;
    if (fill_nccl(&op, e))
        return;
    close_entry(c, &op);
    if (push_pair(&c->own, &c->n_own, &c->cap_own, TSC_EXTCORR_ID(e->desc_id, e->val),
                  c->rank->n_nccl) ||
        tsa_rank_add_nccl(c->rank, &op))
        c->oom = 1;
}

/* CUpti_ActivityMemoryKind of pageable host memory.  Only an explicit
 * PAGEABLE counts: UNKNOWN (older drivers, memsets) says nothing. */
#define CUPTI_MEMORY_KIND_PAGEABLE_ 1

static uint8_t host_pageable(uint8_t dir, const tsc_desc_copy *d)
{
    uint8_t host = dir == TSA_COPY_H2D ? d->src_kind : dir == TSA_COPY_D2H ? d->dst_kind : 0;
    return host == CUPTI_MEMORY_KIND_PAGEABLE_;
}

static void add_copy(load_ctx *c, const tsr_event *e)
{
    tsc_desc_copy d;
    if (tsr_decode_copy(e->desc, &d))
        return;
    tsa_copy cp;
    memset(&cp, 0, sizeof cp);
    cp.start_ns = (int64_t)e->start_ns;
    cp.end_ns = (int64_t)e->end_ns;
    cp.bytes = d.bytes;
    cp.stream = d.stream;
    cp.device = d.device;
    cp.correlation = (uint32_t)e->val;
    cp.dir = e->kind == TSC_EV_MEMSET ? TSA_COPY_MEMSET : (d.dir <= TSC_COPY_MEMSET ? d.dir : 0);
    cp.pinned = d.pinned;
    cp.pageable = host_pageable(cp.dir, &d);
    if (tsa_rank_add_copy(c->rank, &cp))
        c->oom = 1;
}

static void add_sync(load_ctx *c, const tsr_event *e)
{
    tsc_desc_sync d;
    if (tsr_decode_sync(e->desc, &d))
        return;
    static const uint8_t map[] = {
        [TSC_SYNC_OTHER] = TSA_SYNC_OTHER, [TSC_SYNC_EVENT] = TSA_SYNC_EVENT,
        [TSC_SYNC_STREAM_WAIT_EVENT] = TSA_SYNC_STREAM_WAIT_EVENT,
        [TSC_SYNC_STREAM] = TSA_SYNC_STREAM, [TSC_SYNC_CONTEXT] = TSA_SYNC_CONTEXT,
        [TSC_SYNC_DEVICE] = TSA_SYNC_DEVICE};
    tsa_sync s = {.start_ns = (int64_t)e->start_ns, .end_ns = (int64_t)e->end_ns,
                  .tid = d.tid ? d.tid : e->tid, .stream = d.stream,
                  .kind = d.type < sizeof map ? map[d.type] : TSA_SYNC_OTHER};
    if (tsa_rank_add_sync(c->rank, &s))
        c->oom = 1;
}

static void add_api(load_ctx *c, const tsr_file *f, const tsr_event *e)
{
    tsc_desc_api d;
    if (tsr_decode_api(e->desc, &d))
        return;
    desc_cache local, *dc = cache_slot(c, e->desc_id);
    if (!dc) {
        memset(&local, 0, sizeof local);
        dc = &local;
    }
    if (!dc->ready) {
        dc->name = intern_string_id(c, f, d.name);
        dc->ready = 1;
    }
    tsa_api *a = tsa_rank_new_api(c->rank);
    if (!a) {
        c->oom = 1;
        return;
    }
    a->start_ns = (int64_t)e->start_ns;
    a->end_ns = (int64_t)e->end_ns;
    a->tid = d.tid ? d.tid : e->tid;
    a->correlation = (uint32_t)e->val;
    a->name = dc->name;
}

/* The analyzer's own flag bits keep clear of the dump's. */
_Static_assert(((TSA_NCCL_F_WATCHDOG | TSA_NCCL_F_CPU_BACKEND | TSA_NCCL_F_BYTES_UNKNOWN) &
                (TSC_NCCL_F_IN_GROUP | TSC_NCCL_F_ASYNC_ERR)) == 0,
               "tsa_nccl_op.flags bits overlap the dump's");

static void add_gemm(load_ctx *c, const tsr_event *e)
{
    tsc_desc_gemm d;
    if (tsr_decode_gemm(e->desc, &d))
        return;
    /* A call cuBLAS refused did no work (aux: the cublasStatus_t it
     * returned): counting it would count a GEMM retried another way twice. */
    if (e->aux != 0)
        return;
    if (push_pair(&c->own, &c->n_own, &c->cap_own, TSC_EXTCORR_ID(e->desc_id, e->val),
                  OWN_GEMM | c->rank->n_gemms)) {
        c->oom = 1;
        return;
    }
    tsa_gemm *g = tsa_rank_new_gemm(c->rank);
    if (!g) {
        c->oom = 1;
        return;
    }
    g->start_ns = (int64_t)e->start_ns;
    g->end_ns = (int64_t)e->end_ns;
    g->m = d.m;
    g->n = d.n;
    g->k = d.k;
    g->batch = d.batch;
    g->flops = (double)d.flops;
    g->tid = e->tid;
    g->dtype = gemm_dtype(&d);
    g->kernel = TSA_NONE;
}

static void add_range(load_ctx *c, const tsr_file *f, const tsr_event *e)
{
    desc_cache local, *dc = cache_slot(c, e->desc_id);
    if (!dc) {
        memset(&local, 0, sizeof local);
        dc = &local;
    }
    if (!dc->ready) {
        dc->name = intern_string_id(c, f, e->desc_id);
        dc->ready = 1;
    }
    /* Format 1.2 says whose range it is: a named domain (NCCL's own
     * ranges) is not the user's; the thread is the one that opened it. */
    if (TSC_HI32(e->val) != 0)
        return;
    uint32_t tid = TSC_LO32(e->val) ? TSC_LO32(e->val) : e->tid;
    tsa_range rg = {.start_ns = (int64_t)e->start_ns, .end_ns = (int64_t)e->end_ns,
                    .tid = tid, .name = dc->name};
    if (tsa_rank_add_range(c->rank, &rg))
        c->oom = 1;
}

/* NCCL's own buffers are not the caching allocator's: counted apart, in
 * the order its thread made them, for the headroom. */
static void add_nccl_mem(tsa_rank *r, const tsr_event *e)
{
    if (e->kind == TSC_EV_MEM_ALLOC)
        r->mem_nccl_bytes = e->val > UINT64_MAX - r->mem_nccl_bytes ? UINT64_MAX
                                                                     : r->mem_nccl_bytes + e->val;
    else if (e->kind == TSC_EV_MEM_FREE)
        r->mem_nccl_bytes = e->val > r->mem_nccl_bytes ? 0 : r->mem_nccl_bytes - e->val;
    if (r->mem_nccl_bytes > r->mem_nccl_peak_bytes)
        r->mem_nccl_peak_bytes = r->mem_nccl_bytes;
}

static void add_mem(load_ctx *c, const tsr_event *e)
{
    tsc_desc_mem d;
    if (tsr_decode_mem(e->desc, &d))
        return;
    if (d.source == TSC_MEM_SRC_NCCL) {
        add_nccl_mem(c->rank, e);
        return;
    }
    tsa_mem_event m = {.t_ns = (int64_t)e->start_ns, .bytes = e->val, .device = d.device,
                       .stream = d.stream, .pool = d.pool, .source = d.source,
                       .op = e->kind == TSC_EV_MEM_ALLOC  ? TSA_MEM_ALLOC
                             : e->kind == TSC_EV_MEM_FREE ? TSA_MEM_FREE
                                                          : TSA_MEM_POOL};
    if (tsa_rank_add_mem(c->rank, &m))
        c->oom = 1;
}

static void on_event(void *ctx, const tsr_file *f, const tsr_event *e)
{
    load_ctx *c = ctx;
    c->job->events_read++;
    if (e->kind == TSC_EV_EXTCORR) {
        if (push_pair(&c->ext, &c->n_ext, &c->cap_ext, e->val, e->desc_id))
            c->oom = 1;
        return;
    }
    /* Whole blocks of codes go to their readers, which skip the codes of a
     * newer dump they do not know. */
    switch (tsc_event_range(e->kind)) {
    case TSC_EVR_TELEMETRY: add_telemetry(c, e); return;
    case TSC_EVR_PLUGIN:
        if (tsa_nprof_on_event(c->rank, e))
            c->oom = 1;
        return;
    default: break;
    }
    if (!e->desc)
        return; /* the reader reported it; nothing to place on a timeline */
    if (e->kind == TSC_EV_NCCL_ENTER || e->kind == TSC_EV_HANG) {
        note_entry(c, e); /* no end time yet: before the time checks */
        return;
    }
    if (e->kind == TSC_EV_KERNEL_LAUNCH) {
        add_kernel_launch(c, f, e); /* packed durations: its own checks */
        return;
    }
    if (e->kind == TSC_EV_GRAPH_NODE) {
        add_graph_node(c, e);
        return;
    }
    /* Times that cannot be real (reversed, beyond 2^62 ns, longer than
     * 2^50 ns = 13 days) are skipped so no sum can overflow. */
    if (e->end_ns < e->start_ns || e->end_ns > (1ull << 62) ||
        e->end_ns - e->start_ns > (1ull << 50)) {
        c->bad_times++;
        return;
    }
    switch (e->kind) {
    case TSC_EV_NCCL: add_nccl(c, e); break;
    case TSC_EV_KERNEL: add_kernel(c, f, e); break;
    case TSC_EV_MEMCPY: case TSC_EV_MEMSET: add_copy(c, e); break;
    case TSC_EV_SYNC: add_sync(c, e); break;
    case TSC_EV_API: add_api(c, f, e); break;
    case TSC_EV_GEMM: add_gemm(c, e); break;
    case TSC_EV_NVTX: add_range(c, f, e); break;
    case TSC_EV_MEM_ALLOC: case TSC_EV_MEM_FREE: case TSC_EV_MEM_POOL: add_mem(c, e); break;
    default: break;
    }
}

static void on_problem(void *ctx, const char *path, uint64_t offset, const char *message)
{
    load_ctx *c = ctx;
    if (tsa_job_add_problem(c->job, path, offset, "%s", message))
        c->oom = 1;
}

static int by_key(const void *pa, const void *pb)
{
    const id_pair *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

/* Correlation ids mostly arrive in order: sort only when they do not.
 * Stable (equal keys keep their arrival order: find_key then returns the
 * first to arrive), through the run-merge / radix sort of radix_sort.h;
 * qsort only when that is out of memory. */
static void sort_pairs(id_pair *v, size_t n)
{
    size_t i = 1;
    while (i < n && v[i].key >= v[i - 1].key)
        i++;
    if (i >= n)
        return;
    tsa_sort_key *keys = malloc(n * sizeof *keys);
    id_pair *out = malloc(n * sizeof *out);
    if (keys && out) {
        /* Flipping bit 63 maps unsigned order onto signed order. */
        for (size_t k = 0; k < n; k++) {
            keys[k].key = (int64_t)(v[k].key ^ (1ull << 63));
            keys[k].idx = k;
        }
        if (!tsa_sort_keys(keys, n)) {
            for (size_t k = 0; k < n; k++)
                out[k] = v[keys[k].idx];
            memcpy(v, out, n * sizeof *v);
            free(keys);
            free(out);
            return;
        }
    }
    free(keys);
    free(out);
    qsort(v, n, sizeof *v, by_key);
}

static const id_pair *find_key(const id_pair *arr, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (arr[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && arr[lo].key == key ? &arr[lo] : NULL;
}

/* Join NCCL calls and GEMMs to their kernels (our external id -> CUPTI correlation ->
 * kernel) and kernels to the host thread that launched them. */
static int push_ext(void *ctx, uint64_t ext, uint32_t corr)
{
    load_ctx *c = ctx;
    return push_pair(&c->ext, &c->n_ext, &c->cap_ext, ext, corr);
}

/* Kernels folded with their call (1.2) carry no external correlation:
 * the call span that holds the launch gives it (launch_join.h). */
static int join_folded_launches(load_ctx *c)
{
    tsa_rank *r = c->rank;
    if (!c->n_launched || !c->n_own)
        return 0;
    tsa_call_span *spans = malloc(c->n_own * sizeof *spans);
    if (!spans)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < c->n_own; i++) {
        uint64_t v = c->own[i].value;
        if (v & OWN_GEMM) {
            size_t gi = (size_t)(v & ~OWN_GEMM);
            if (gi < r->n_gemms)
                spans[n++] = (tsa_call_span){r->gemms[gi].tid, r->gemms[gi].start_ns,
                                             r->gemms[gi].end_ns, c->own[i].key};
        } else if (v < r->n_nccl) {
            spans[n++] = (tsa_call_span){r->nccl[v].tid, r->nccl[v].start_ns, r->nccl[v].end_ns,
                                         c->own[i].key};
        }
    }
    int rc = tsa_join_launches(spans, n, c->launched, c->n_launched, push_ext, c);
    free(spans);
    return rc;
}

/* A replayed graph kernel is the work of the call captured into its
 * node: the GEMM again (its FLOPs counted once per replay, at the graph
 * launch), or the NCCL call's communication. */
static int attribute_replay(void *ctx, const tsa_replay *rp, uint64_t ext)
{
    load_ctx *c = ctx;
    tsa_rank *r = c->rank;
    const id_pair *own = find_key(c->own, c->n_own, ext);
    if (!own || rp->kernel >= r->n_kernels)
        return 0;
    tsa_kernel *k = &r->kernels[rp->kernel];
    if (own->value & OWN_GEMM) {
        size_t gi = (size_t)(own->value & ~OWN_GEMM);
        tsa_gemm *g = gi < r->n_gemms ? tsa_rank_new_gemm(r) : NULL;
        if (!g)
            return gi < r->n_gemms ? -1 : 0;
        *g = r->gemms[gi];  /* after the call: tsa_rank_new_gemm may move the array */
        g->start_ns = rp->call_start;
        g->end_ns = rp->call_end;
        g->kernel = (int32_t)rp->kernel;
        k->gemm = (int32_t)(r->n_gemms - 1);
        return 0;
    }
    if (own->value < r->n_nccl) {
        k->nccl = (int32_t)own->value;
        k->category = TSA_KCAT_COMM;
    }
    return 0;
}

static int link_rank(load_ctx *c)
{
    tsa_rank *r = c->rank;
    if (!r->n_kernels) {
        for (size_t i = 0; i < r->n_apis; i++)
            c->gpu.launches_unmatched += tsr_is_launch_call(r->strings[r->apis[i].name]) &&
                                         tsa_self_cost_kernels_traced(&r->self_cost,
                                                                      r->apis[i].start_ns);
        return 0;
    }
    if (join_folded_launches(c))
        return -1;
    tsa_corr_index kc;
    if (tsa_corr_index_build(&kc, r->kernels, r->n_kernels))
        return -1;
    if (c->n_ext && c->n_own) {
        sort_pairs(c->ext, c->n_ext);
        for (size_t i = 0; i < c->n_own; i++) {
            const id_pair *x = find_key(c->ext, c->n_ext, c->own[i].key);
            if (!x)
                continue;
            int64_t k = tsa_corr_index_find(&kc, x->value);
            if (k < 0)
                continue;
            if (c->own[i].value & OWN_GEMM) {
                size_t gi = (size_t)(c->own[i].value & ~OWN_GEMM);
                if (gi < r->n_gemms && r->kernels[k].gemm < 0) {
                    r->gemms[gi].kernel = (int32_t)k;
                    r->kernels[k].gemm = (int32_t)gi;
                }
                continue;
            }
            if (c->own[i].value >= r->n_nccl)
                continue;
            tsa_nccl_op *op = &r->nccl[c->own[i].value];
            tsa_kernel *kk = &r->kernels[k];
            op->kernel = (int32_t)k;
            op->gpu_start_ns = kk->start_ns;
            op->gpu_end_ns = kk->end_ns;
            kk->nccl = (int32_t)c->own[i].value;
            kk->category = TSA_KCAT_COMM;
        }
    }
    for (size_t i = 0; i < r->n_apis; i++) {
        int64_t k = tsa_corr_index_find(&kc, r->apis[i].correlation);
        if (k >= 0)
            r->kernels[k].launch_tid = r->apis[i].tid;
        else if (tsr_is_launch_call(r->strings[r->apis[i].name]) &&
                 tsa_self_cost_kernels_traced(&r->self_cost, r->apis[i].start_ns))
            c->gpu.launches_unmatched++; /* not one the budget's light level left out */
    }
    tsa_corr_index_free(&kc);
    if (c->n_replays && c->n_nodes && c->n_own) {
        sort_pairs(c->own, c->n_own);
        if (tsa_join_replays(c->nodes, c->n_nodes, c->replays, c->n_replays, attribute_replay, c))
            return -1;
    }
    return 0;
}

/* Drop API records lying entirely inside GPU-busy time (kernels and
 * copies): they cannot overlap GPU idle time, the only use the report has
 * for them once launch threads are joined.  Kernels and copies are sorted
 * (by tsa_rank_finish_but_apis), so the busy set is built by merging them
 * in start order (no sort).  The APIs are not sorted yet: most of them are
 * dropped here, and sorting the few kept ones afterwards gives the same
 * array as filtering sorted ones (whether one is kept does not depend on
 * the others; the sort is stable).  They arrive as a few sorted runs
 * (per-thread chunks), so each run is swept against the busy set, the
 * sweep starting again by bisection where a run begins. */
static int lean_apis(tsa_rank *r, tsa_ivset *scratch)
{
    /* Built already normalised (what tsa_ivset_normalize would make of
     * the raw intervals): in start order, each interval either extends the
     * last one (overlapping or adjacent) or starts a new one. */
    tsa_ivset busy = *scratch;
    busy.n = 0;
    size_t i = 0, j = 0;
    while (i < r->n_kernels || j < r->n_copies) {
        int take_kernel = j == r->n_copies ||
                          (i < r->n_kernels && r->kernels[i].start_ns <= r->copies[j].start_ns);
        int64_t s = take_kernel ? r->kernels[i].start_ns : r->copies[j].start_ns;
        int64_t e = take_kernel ? r->kernels[i].end_ns : r->copies[j].end_ns;
        if (take_kernel)
            i++;
        else
            j++;
        if (e <= s)
            continue;
        if (busy.n && s <= busy.v[busy.n - 1].e) {
            if (e > busy.v[busy.n - 1].e)
                busy.v[busy.n - 1].e = e;
        } else if (tsa_ivset_push(&busy, s, e)) {
            *scratch = busy;
            return -1;
        }
    }
    /* busy is sorted, disjoint and non-adjacent: [s, e) lies inside it iff
     * one interval holds it, and that interval is the first one ending after
     * s, which only moves forward while the APIs' starts grow. */
    size_t w = 0, b = 0;
    for (size_t k = 0; k < r->n_apis; k++) {
        const tsa_api *a = &r->apis[k];
        if (k && a->start_ns < r->apis[k - 1].start_ns) {
            size_t lo = 0, hi = busy.n; /* a new run: first interval ending after start */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (busy.v[mid].e <= a->start_ns)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            b = lo;
        }
        while (b < busy.n && busy.v[b].e <= a->start_ns)
            b++;
        int covered = a->end_ns <= a->start_ns ||
                      (b < busy.n && busy.v[b].s <= a->start_ns && a->end_ns <= busy.v[b].e);
        if (!covered)
            r->apis[w++] = *a;
    }
    r->n_apis = w;
    *scratch = busy; /* kept for the next rank */
    return 0;
}

/* Run id of a dump from its first META chunk, without validating the file
 * (the full read does that): used only to group files before loading.
 * Returns 0 for a dump (*id NULL when its first chunk names no run), or
 * -1 with *why for a file that is not a dump at all (unreadable, empty,
 * no tscope magic): such a file is a problem of its own and never forms
 * a run that could out-vote, or be loaded instead of, the real ranks. */
static int peek_run_id(const char *path, char **id, const char **why)
{
    *id = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    tsc_file_header fh;
    if (n < 0) {
        *why = strerror(errno);
        return -1;
    }
    if (n == 0) {
        *why = "empty file";
        return -1;
    }
    if ((size_t)n < sizeof fh || memcmp(buf, TSC_FILE_MAGIC, sizeof fh.magic)) {
        *why = "no tscope dump header";
        return -1;
    }
    memcpy(&fh, buf, sizeof fh);
    size_t hdr = fh.header_size >= sizeof fh && fh.header_size < (size_t)n ? fh.header_size
                                                                           : sizeof fh;
    if ((size_t)n < hdr + sizeof(tsc_chunk_header))
        return 0;
    buf[n] = 0;
    tsc_chunk_header ch;
    memcpy(&ch, buf + hdr, sizeof ch);
    if (ch.magic != TSC_CHUNK_MAGIC || ch.type != TSC_CHUNK_META)
        return 0;
    size_t start = hdr + sizeof ch;
    size_t end = start + ch.payload_len;
    if (end > (size_t)n)
        end = (size_t)n;
    size_t p = start;
    while (p < end) {
        const char *key = buf + p;
        size_t klen = strnlen(key, end - p);
        if (p + klen + 1 >= end)
            break;
        const char *val = key + klen + 1;
        size_t vlen = strnlen(val, end - (p + klen + 1));
        if (!strcmp(key, TSC_META_RUN_ID)) {
            *id = strndup(val, vlen);
            return 0;
        }
        p += klen + 1 + vlen + 1;
    }
    return 0;
}

typedef struct run_count {
    char *id;
    size_t n;
} run_count;

static void set_err(char *err, size_t len, const char *fmt, const char *arg)
{
    if (err && len)
        snprintf(err, len, fmt, arg);
}

/* A rank's API array once lean has dropped most of its records: the kept
 * ones move to an exact-size array and the big one, its pages already
 * faulted in, receives the next rank's records. */
typedef struct api_spare {
    tsa_api *apis;
    size_t cap;
} api_spare;

static int keep_api_array(tsa_rank *r, api_spare *spare)
{
    if (r->n_apis >= r->cap_apis / 2)
        return 0; /* tsa_rank_shrink cuts the slack */
    tsa_api *exact = r->n_apis ? malloc(r->n_apis * sizeof *exact) : NULL;
    if (r->n_apis && !exact)
        return -1;
    if (r->n_apis)
        memcpy(exact, r->apis, r->n_apis * sizeof *exact);
    spare->apis = r->apis;
    spare->cap = r->cap_apis;
    r->apis = exact;
    r->cap_apis = r->n_apis;
    return 0;
}

static void free_scratch(load_ctx *keep, tsa_ivset *busy)
{
    free(keep->cache);
    free(keep->ext);
    free(keep->own);
    free(keep->launched);
    free(keep->nodes);
    free(keep->replays);
    memset(keep, 0, sizeof *keep);
    tsa_ivset_free(busy);
}

/* Capacities to reserve for a rank: the previous rank's counts (ranks of a
 * job are alike), or for the first rank the most events its file can hold
 * (one 32-byte slot each) for kernels and launches, the bulk of a dump:
 * reserved address space costs nothing until written, the rank's arrays
 * are cut to size once loaded, and it spares the first rank the
 * realloc-and-copy of growing them by doubling.  Returns 1 when *want is
 * such a guess. */
static int reserve_counts(const char *path, const tsa_rank_counts *like, tsa_rank_counts *want)
{
    static const size_t MAX_GUESS = (size_t)1 << 24; /* 16M events: 1.5 GiB of kernels */
    struct stat st;
    *want = *like;
    if (like->kernels || like->apis || stat(path, &st) || st.st_size <= 0)
        return 0;
    size_t slots = (size_t)st.st_size / TSC_SLOT_SIZE;
    want->kernels = want->apis = slots < MAX_GUESS ? slots : MAX_GUESS;
    return 1;
}

/* What one loader hands from one rank to the next. */
struct tsa_load_scratch {
    tsa_rank_counts like;  /* the previous rank's counts, as read */
    load_ctx keep;         /* per-rank tables, so their pages are faulted once */
    tsa_ivset busy;
    api_spare spare;
};

tsa_load_scratch *tsa_load_scratch_new(void)
{
    tsa_load_scratch *s = calloc(1, sizeof *s);
    if (s)
        tsa_ivset_init(&s->busy);
    return s;
}

void tsa_load_scratch_free(tsa_load_scratch *s)
{
    if (!s)
        return;
    free_scratch(&s->keep, &s->busy);
    free(s->spare.apis);
    free(s);
}

int tsa_job_load_dump(tsa_job *job, const char *path, const tsa_load_options *opt,
                      tsa_load_scratch *s)
{
    static const tsr_callbacks cb = {.on_meta = on_meta, .on_desc = on_desc,
                                     .on_event = on_event, .on_problem = on_problem};
    tsa_rank *r = tsa_job_add_rank(job);
    if (!r)
        return -1;
    r->apis = s->spare.apis; /* the rank owns it now: freed with it on any error */
    r->cap_apis = s->spare.cap;
    s->spare = (api_spare){0};
    tsa_rank_counts want;
    int guessed = reserve_counts(path, &s->like, &want);
    /* A guess that cannot be reserved (a limit on address space) only
     * leaves the arrays to grow as they are filled. */
    if (tsa_rank_reserve(r, &want) && !guessed)
        return -1;
    r->file = strdup(path);
    load_ctx *k = &s->keep;
    load_ctx c = {.job = job, .rank = r, .path = path, .cache = k->cache,
                  .cache_cap = k->cache_cap, .ext = k->ext, .cap_ext = k->cap_ext,
                  .own = k->own, .cap_own = k->cap_own,
                  .launched = k->launched, .cap_launched = k->cap_launched,
                  .nodes = k->nodes, .cap_nodes = k->cap_nodes,
                  .replays = k->replays, .cap_replays = k->cap_replays};
    if (c.cache)
        memset(c.cache, 0, c.cache_cap * sizeof *c.cache);
    tsr_stats stats;
    memset(&stats, 0, sizeof stats);
    int st_read = tsr_read_file(path, &cb, &c, &stats);
    job->dump_bytes += stats.file_size;
    tsa_rank_counts_of(r, &s->like);
    /* After running out of memory the arrays and the id tables may
     * disagree (a call's id kept, the call not): nothing to link. */
    int bad_link = c.oom ? 0 : link_rank(&c);
    c.gpu.kernels = r->n_kernels;
    r->gpu_kernels_lost = tsr_gpu_kernels_lost(&c.gpu);
    r->gpu_dropped_device = c.gpu.dropped_device;
    if (c.bad_times &&
        tsa_job_add_problem(job, path, 0, "%llu events with impossible times skipped",
                            (unsigned long long)c.bad_times))
        c.oom = 1;
    /* What was still open when the dump ended never returned. */
    r->pending = c.open;
    r->n_pending = c.n_open;
    *k = c;
    if (c.oom || bad_link)
        return -1;
    if (opt && opt->lean) {
        if (tsa_rank_finish_but_apis(r) || lean_apis(r, &s->busy) || tsa_rank_sort_apis(r) ||
            keep_api_array(r, &s->spare))
            return -1;
    } else if (tsa_rank_finish(r)) {
        return -1;
    }
    tsa_rank_shrink(r);
    r->clean_end = stats.clean_end;
    if (!r->pid)
        r->pid = stats.pid;
    if (st_read == TSR_UNREADABLE) {
        /* Nothing usable: drop the rank (the problem is listed). */
        tsa_rank_free_contents(r);
        job->n_ranks--;
        return 0;
    }
    if (!stats.clean_end && tsa_job_add_problem(job, path, stats.file_size,
                                                 "no END chunk: the process did not exit "
                                                 "cleanly (killed?), data may be cut short"))
        return -1;
    return 1;
}

int tsa_job_plan(const char *dir, const tsa_load_options *opt, tsa_job **out, char ***main,
                 size_t *n_main, char *err, size_t err_len)
{
    *out = NULL;
    *main = NULL;
    *n_main = 0;
    struct stat st;
    if (stat(dir, &st) != 0) {
        set_err(err, err_len, "%s: no such directory", dir);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        set_err(err, err_len, "%s: not a directory", dir);
        return -1;
    }
    char **paths = NULL;
    size_t n_paths = 0;
    int rc = tsr_list_dumps(dir, &paths, &n_paths);
    if (rc) {
        char msg[300];
        snprintf(msg, sizeof msg, "%%s: cannot list: %s", strerror(-rc));
        set_err(err, err_len, msg, dir);
        return -1;
    }
    if (n_paths == 0) {
        tsr_free_paths(paths, n_paths);
        set_err(err, err_len, "%s: no tscope dumps (*.tsd) found", dir);
        return -1;
    }
    /* Group by run id: the largest group (or the requested one) is loaded. */
    char **ids = calloc(n_paths, sizeof *ids);
    run_count *runs = calloc(n_paths, sizeof *runs);
    char *not_dump = calloc(n_paths, 1);
    char **keep = calloc(n_paths, sizeof *keep);
    tsa_job *job = tsa_job_new(dir);
    size_t n_runs = 0, n_keep = 0;
    int share = opt && opt->share_count > 0;
    if (!ids || !runs || !not_dump || !keep || !job)
        goto oom;
    for (size_t i = 0; i < n_paths; i++) {
        const char *why = NULL;
        if (peek_run_id(paths[i], &ids[i], &why)) {
            not_dump[i] = 1;
            if ((!share || opt->share_index == 0) && tsa_job_add_problem(job, paths[i], 0, "not a tscope dump (%s): skipped", why))
                goto oom;
            continue;
        }
        const char *id = ids[i] ? ids[i] : "";
        size_t j = 0;
        while (j < n_runs && strcmp(runs[j].id, id))
            j++;
        if (j == n_runs) {
            runs[j].id = (char *)id;
            n_runs++;
        }
        runs[j].n++;
    }
    if (share && opt->setup_problems)
        *opt->setup_problems = job->n_problems;
    if (n_runs) {
        size_t main_run = 0;
        for (size_t j = 0; j < n_runs; j++) {
            if (opt && opt->run_id) {
                if (!strcmp(runs[j].id, opt->run_id))
                    main_run = j;
            } else if (runs[j].n > runs[main_run].n) {
                main_run = j;
            }
        }
        if (!(job->run_id = strdup(runs[main_run].id)))
            goto oom;
        for (size_t j = 0; j < n_runs; j++)
            if (j != main_run && tsa_job_add_other_run(job, runs[j].id))
                goto oom;
        size_t position = 0; /* among the main run's dumps */
        for (size_t i = 0; i < n_paths; i++) {
            if (not_dump[i] || strcmp(ids[i] ? ids[i] : "", runs[main_run].id))
                continue;
            if (share && (int)(position++ % (size_t)opt->share_count) != opt->share_index)
                continue;
            keep[n_keep++] = paths[i];
            paths[i] = NULL;
        }
    }
    for (size_t i = 0; i < n_paths; i++)
        free(ids[i]);
    free(ids);
    free(runs);
    free(not_dump);
    tsr_free_paths(paths, n_paths);
    *out = job;
    *main = keep;
    *n_main = n_keep;
    return 0;
oom:
    if (ids)
        for (size_t i = 0; i < n_paths; i++)
            free(ids[i]);
    free(ids);
    free(runs);
    free(not_dump);
    free(keep);
    tsr_free_paths(paths, n_paths);
    tsa_job_free(job);
    set_err(err, err_len, "%s: out of memory while loading", dir);
    return -1;
}

int tsa_job_plan_done(const char *dir, tsa_job *job, size_t loaded, char *err, size_t err_len)
{
    if (!loaded) {
        set_err(err, err_len, "%s: no readable dump", dir);
        if (err && job->n_problems) {
            size_t l = strlen(err);
            snprintf(err + l, err_len - l, " (%s)", job->problems[0].message);
        }
        return -1;
    }
    /* Every rank went through tsa_rank_finish as it was loaded. */
    if (tsa_job_drop_duplicate_ranks(job)) {
        set_err(err, err_len, "%s: out of memory while loading", dir);
        return -1;
    }
    tsa_job_sort_ranks(job);
    return 0;
}

int tsa_job_load_ex(const char *dir, const tsa_load_options *opt, tsa_job **out,
                    char *err, size_t err_len)
{
    *out = NULL;
    tsa_keep_freed_memory((size_t)256 << 20);
    tsa_job *job = NULL;
    char **paths = NULL;
    size_t n_paths = 0, loaded = 0;
    if (tsa_job_plan(dir, opt, &job, &paths, &n_paths, err, err_len))
        return -1;
    tsa_load_scratch *s = tsa_load_scratch_new();
    int rc = s ? 0 : -1;
    for (size_t i = 0; i < n_paths && rc >= 0; i++) {
        rc = tsa_job_load_dump(job, paths[i], opt, s);
        loaded += rc > 0;
    }
    tsa_load_scratch_free(s);
    tsr_free_paths(paths, n_paths);
    if (rc < 0) {
        tsa_job_free(job);
        set_err(err, err_len, "%s: out of memory while loading", dir);
        return -1;
    }
    if (opt && opt->share_count > 0) { /* the caller merges the shares, then drops duplicates and sorts */
        *out = job;
        return 0;
    }
    if (tsa_job_plan_done(dir, job, loaded, err, err_len)) {
        tsa_job_free(job);
        return -1;
    }
    *out = job;
    return 0;
}

int tsa_job_load(const char *dir, const tsa_load_options *opt, tsa_job **out)
{
    char err[512];
    int rc = tsa_job_load_ex(dir, opt, out, err, sizeof err);
    if (rc && !(opt && opt->quiet))
        fprintf(stderr, "tscope-report: %s\n", err);
    return rc;
}
