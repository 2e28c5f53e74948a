/* Kineto events -> one tsa_rank.  Events arrive in file order; records are
 * appended as they come, and the links that need the whole file (kernel to
 * launching API by correlation id, NCCL kernel to the collective's CPU op)
 * are made once parsing ends. */
#include "kineto/kineto_internal.h"
#include "kineto_loop.h"
#include "kineto_host.h"
#include "kineto_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_build.h"
#include "memory_timeline.h"
#include "model/memory.h"
#include "tsc_format.h"
#include "util/vec.h"
#include "util/hash.h"

/* The metadata of a collective as the CPU op that issued it recorded it
 * (record_param_comms, nccl:all_reduce, ...). */
typedef struct comm_hint {
    int64_t start_ns, end_ns;
    uint32_t tid;
    int op;
    int dtype;
    uint64_t count, bytes;
    int has_size;           /* element count and dtype were both given */
    uint32_t group_size;
    int64_t seq;
    int has_seq;
    int pg;                 /* index into builder.pgs, -1 none */
    int32_t peer;           /* send/recv: the other end's global rank, -1 none */
    int layer_op;           /* a c10d:: or symm_mem:: op (no sizes of its own) */
    int backend_op;         /* the backend's own op: 1 "nccl:...", 2 "gloo:..."
                             * (a CPU backend: its times are the collective's) */
} comm_hint;

typedef struct pg_info {
    char name[96];
    char *ranks;            /* "Process Group Ranks" text, first seen */
} pg_info;

typedef struct builder {
    tsa_rank *r;
    uint32_t *slots;        /* string intern table: index+1, 0 empty */
    size_t n_slots;
    /* Per interned string: its strlen (a lookup compares lengths without
     * walking the stored string) and, for kernel names, the category plus
     * one (0 = not computed yet): a trace repeats a few hundred kernel
     * names over and over, and categorizing a name cost more than parsing
     * its event. */
    uint32_t *str_len;
    uint8_t *str_cat;
    size_t cap_str_len, cap_str_cat, n_str_cat;
    comm_hint *hints;
    size_t n_hints, cap_hints;
    /* While linking: the latest end of hints[0..i], so that a search back
     * from a launch stops where no earlier hint can still contain it (a
     * launch looked at up to 256 hints that had all ended). */
    int64_t *hint_end_max;
    pg_info *pgs;
    size_t n_pgs, cap_pgs;
    /* NCCL metadata that recent PyTorch also puts on the NCCL kernel event,
     * keyed by correlation id: used when no CPU op can be linked (a trace
     * recorded with CUDA activities only). */
    comm_hint *khints;
    uint32_t *khint_corr;
    size_t n_khints, cap_khints, cap_khint_corr;
    /* Last caching-allocator total written per CUDA device (+1, 0 none). */
    uint64_t mem_last[KINETO_MEM_DEVICES];
    /* The last runtime API name and its sync_kind: a trace repeats a few
     * names (cudaLaunchKernel) and sync_kind runs five strstr. */
    char api_name[64];
    size_t api_name_len;    /* 0: none yet */
    int api_kind;
    int failed;
    kineto_host host;       /* host activity spans (kineto_host.c) */
    kineto_loop loop;       /* CPU-side calls, for iterations (kineto_loop.c) */
} builder;

/* ------------------------------------------------------------ strings */

/* Hash of the intern table only (slot positions; string indices do not
 * depend on it): eight bytes per step, where FNV-1a's byte per step was a
 * tenth of the parse on traces of long kernel names.  comm_id stays FNV-1a. */
static uint64_t name_hash(const char *s, size_t len)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    uint64_t h = len * k;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    memcpy(&w, s + i, len - i);
    h = (h ^ w) * k;
    return h ^ (h >> 32);
}

static int intern_grow(builder *b)
{
    size_t n = b->n_slots ? b->n_slots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < b->r->n_strings; i++) {
        const char *s = b->r->strings[i];
        size_t h = (size_t)name_hash(s, b->str_len[i]) & (n - 1);
        while (slots[h])
            h = (h + 1) & (n - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(b->slots);
    b->slots = slots;
    b->n_slots = n;
    return 0;
}

/* Index of s in the rank's string table, added when new; -1 out of memory. */
static int64_t intern(builder *b, const char *s, size_t len)
{
    tsa_rank *r = b->r;
    if ((r->n_strings + 1) * 2 > b->n_slots && intern_grow(b))
        return -1;
    size_t h = (size_t)name_hash(s, len) & (b->n_slots - 1);
    while (b->slots[h]) {
        uint32_t i = b->slots[h] - 1;
        if (b->str_len[i] == len && !memcmp(r->strings[i], s, len))
            return i;
        h = (h + 1) & (b->n_slots - 1);
    }
    char *copy = strndup(s, len);
    /* strndup stops at an embedded NUL: the stored length is the copy's. */
    size_t n = r->n_strings;
    if (!copy || TSA_VEC_PUSH(b->str_len, n, b->cap_str_len, (uint32_t)strlen(copy)) ||
        TSA_VEC_PUSH(r->strings, r->n_strings, b->r->cap_strings, copy)) {
        free(copy);
        return -1;
    }
    b->slots[h] = (uint32_t)r->n_strings;
    return (int64_t)r->n_strings - 1;
}

static int64_t intern_text(builder *b, const kineto_text *t)
{
    return t->s ? intern(b, t->s, t->len) : intern(b, "", 0);
}

/* ------------------------------------------------------------- events */

/* Kineto names threads "thread <tid> (<comm>)"; the phase pass looks for
 * the comm name (pt_autograd_0), so keep only that part. */
static void thread_comm(const kineto_text *t, const char **s, size_t *len)
{
    *s = t->s;
    *len = t->len;
    if (t->len < 10 || strncmp(t->s, "thread ", 7) || t->s[t->len - 1] != ')')
        return;
    const char *p = t->s + 7;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == t->s + 7 || strncmp(p, " (", 2))
        return;
    *s = p + 2;
    *len = (size_t)(t->s + t->len - 1 - *s);
}

static int add_thread(builder *b, const kineto_event *ev)
{
    if (!ev->has_tid || !ev->arg_name.len)
        return 0;
    const char *comm;
    size_t comm_len;
    thread_comm(&ev->arg_name, &comm, &comm_len);
    int64_t name = intern(b, comm, comm_len);
    if (name < 0)
        return -1;
    tsa_rank *r = b->r;
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].tid == (uint32_t)ev->tid) {
            r->threads[i].name = (uint32_t)name;
            return 0;
        }
    tsa_thread t = {(uint32_t)ev->tid, (uint32_t)name};
    return TSA_VEC_PUSH(r->threads, r->n_threads, b->r->cap_threads, t);
}

/* tsa_kernel_category of interned string i, computed once per name. */
static uint8_t kernel_category(builder *b, uint32_t i)
{
    if (tsa_vec_reserve((void **)&b->str_cat, &b->cap_str_cat, i, 1))
        return (uint8_t)tsa_kernel_category(b->r->strings[i]);
    memset(b->str_cat + b->n_str_cat, 0, b->cap_str_cat - b->n_str_cat);
    b->n_str_cat = b->cap_str_cat;   /* zeroed so far */
    if (!b->str_cat[i])
        b->str_cat[i] = (uint8_t)(tsa_kernel_category(b->r->strings[i]) + 1);
    return (uint8_t)(b->str_cat[i] - 1);
}

static int add_kernel(builder *b, const kineto_event *ev)
{
    int64_t name = intern_text(b, &ev->name);
    if (name < 0)
        return -1;
    tsa_kernel k;
    memset(&k, 0, sizeof k);
    k.start_ns = ev->ts_ns;
    k.end_ns = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    k.name = (uint32_t)name;
    k.stream = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
    k.device = (uint32_t)(ev->has_device ? ev->device : ev->pid);
    k.correlation = (uint32_t)ev->correlation;
    memcpy(k.grid, ev->grid, sizeof k.grid);
    memcpy(k.block, ev->block, sizeof k.block);
    k.category = kernel_category(b, (uint32_t)name);
    k.phase = TSA_PHASE_UNKNOWN;
    k.nccl = TSA_NONE;
    k.gemm = TSA_NONE;
    return TSA_VEC_PUSH(b->r->kernels, b->r->n_kernels, b->r->cap_kernels, k);
}

static int add_copy(builder *b, const kineto_event *ev, int memset_)
{
    const char *n = ev->name.s ? ev->name.s : "";
    tsa_copy c;
    memset(&c, 0, sizeof c);
    c.start_ns = ev->ts_ns;
    c.end_ns = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    c.bytes = ev->has_bytes && ev->bytes > 0 ? (uint64_t)ev->bytes : 0;
    c.bytes_unknown = !ev->has_bytes;
    c.stream = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
    c.device = (uint32_t)(ev->has_device ? ev->device : ev->pid);
    c.correlation = (uint32_t)ev->correlation;
    if (memset_ || strstr(n, "Memset"))
        c.dir = TSA_COPY_MEMSET;
    else if (strstr(n, "HtoD"))
        c.dir = TSA_COPY_H2D;
    else if (strstr(n, "DtoH"))
        c.dir = TSA_COPY_D2H;
    else if (strstr(n, "DtoD"))
        c.dir = TSA_COPY_D2D;
    else if (strstr(n, "PtoP"))
        c.dir = TSA_COPY_P2P;
    else if (strstr(n, "HtoH"))
        c.dir = TSA_COPY_H2H;
    else
        c.dir = TSA_COPY_OTHER;
    c.pinned = strstr(n, "Pinned") != NULL;
    c.pageable = strstr(n, "Pageable") != NULL; /* "Memcpy HtoD (Pageable -> Device)" */
    return TSA_VEC_PUSH(b->r->copies, b->r->n_copies, b->r->cap_copies, c);
}

static int sync_kind(const char *n)
{
    if (strstr(n, "StreamWaitEvent"))
        return TSA_SYNC_STREAM_WAIT_EVENT;
    if (strstr(n, "StreamSynchronize"))
        return TSA_SYNC_STREAM;
    if (strstr(n, "EventSynchronize"))
        return TSA_SYNC_EVENT;
    if (strstr(n, "DeviceSynchronize"))
        return TSA_SYNC_DEVICE;
    if (strstr(n, "CtxSynchronize"))
        return TSA_SYNC_CONTEXT;
    return -1;
}

static int cached_sync_kind(builder *b, const kineto_text *name)
{
    const char *n = name->s ? name->s : "";
    size_t len = name->s ? name->len : 0;
    if (b->api_name_len == len + 1 && !memcmp(b->api_name, n, len))
        return b->api_kind;
    b->api_kind = sync_kind(n);
    if (len < sizeof b->api_name) {
        memcpy(b->api_name, n, len);
        b->api_name_len = len + 1;
    } else
        b->api_name_len = 0;
    return b->api_kind;
}

static int add_api(builder *b, const kineto_event *ev)
{
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    int kind = cached_sync_kind(b, &ev->name);
    if (kind >= 0) {
        tsa_sync s = {ev->ts_ns, end, (uint32_t)ev->tid,
                      (uint32_t)(ev->has_stream ? ev->stream : 0), (uint8_t)kind};
        return TSA_VEC_PUSH(b->r->syncs, b->r->n_syncs, b->r->cap_syncs, s);
    }
    if (!ev->has_correlation)
        return 0;   /* cannot launch anything tscope could link */
    int64_t name = intern_text(b, &ev->name);
    if (name < 0)
        return -1;
    tsa_api a = {ev->ts_ns, end, (uint32_t)ev->tid, (uint32_t)ev->correlation, (uint32_t)name};
    return TSA_VEC_PUSH(b->r->apis, b->r->n_apis, b->r->cap_apis, a);
}

static int add_range(builder *b, const kineto_event *ev)
{
    int64_t name = intern_text(b, &ev->name);
    if (name < 0)
        return -1;
    tsa_range g = {ev->ts_ns, ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0),
                   (uint32_t)ev->tid, (uint32_t)name};
    return TSA_VEC_PUSH(b->r->ranges, b->r->n_ranges, b->r->cap_ranges, g);
}

static int add_call(builder *b, const kineto_event *ev)
{
    int64_t name = intern_text(b, &ev->name);
    if (name < 0)
        return -1;
    return kineto_loop_add(&b->loop, ev->ts_ns, ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0),
                           (uint32_t)ev->tid, (uint32_t)name);
}

static int pg_index(builder *b, const kineto_event *ev)
{
    if (!ev->pg_name[0])
        return -1;
    for (size_t i = 0; i < b->n_pgs; i++)
        if (!strcmp(b->pgs[i].name, ev->pg_name)) {
            if (!b->pgs[i].ranks && ev->pg_ranks.len)
                b->pgs[i].ranks = strdup(ev->pg_ranks.s);
            return (int)i;
        }
    pg_info pg;
    memset(&pg, 0, sizeof pg);
    snprintf(pg.name, sizeof pg.name, "%s", ev->pg_name);
    pg.ranks = ev->pg_ranks.len ? strdup(ev->pg_ranks.s) : NULL;
    if (TSA_VEC_PUSH(b->pgs, b->n_pgs, b->cap_pgs, pg)) {
        free(pg.ranks);
        return -2;
    }
    return (int)b->n_pgs - 1;
}

/* Older PyTorch gives a collective's size only as its CPU op's first input
 * tensor (nccl:all_reduce: Input Dims [[394241]], Input type ["float"]). */
static void size_from_input(const kineto_event *ev, comm_hint *h)
{
    const char *t = ev->in_type;
    if (!strncmp(t, "c10::", 5))
        t += 5;
    unsigned size;
    int dt = kineto_dtype_from_torch(t, &size);
    if (!size)
        return;
    uint64_t n = (uint64_t)ev->in_dims_elems;
    /* NCCL counts a reduce-scatter by its output, a shard of the input */
    if (h->op == TSC_NCCL_REDUCESCATTER && h->group_size > 1)
        n /= h->group_size;
    h->dtype = dt;
    h->count = n;
    h->bytes = n * size;
    h->has_size = 1;
}

static int make_hint(builder *b, const kineto_event *ev, comm_hint *out)
{
    comm_hint h;
    memset(&h, 0, sizeof h);
    h.start_ns = ev->ts_ns;
    h.end_ns = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    h.tid = (uint32_t)ev->tid;
    h.op = kineto_nccl_op_from_collective(ev->coll_name);
    unsigned size;
    h.dtype = kineto_dtype_from_torch(ev->dtype, &size);
    int64_t nelems = h.op == TSC_NCCL_REDUCESCATTER && ev->has_out_nelems ? ev->out_nelems
                     : ev->has_in_nelems                                   ? ev->in_nelems
                                                                           : 0;
    h.count = nelems > 0 ? (uint64_t)nelems : 0;
    h.bytes = h.count * size;
    h.has_size = (ev->has_in_nelems || ev->has_out_nelems) && size > 0;
    h.group_size = ev->has_group_size && ev->group_size > 0 ? (uint32_t)ev->group_size : 0;
    if (!h.has_size && ev->has_in_dims)
        size_from_input(ev, &h);
    h.seq = ev->seq;
    h.has_seq = ev->has_seq;
    h.peer = ev->has_p2p_peer && ev->p2p_peer >= 0 && ev->p2p_peer <= INT32_MAX
                 ? (int32_t)ev->p2p_peer : -1;
    h.pg = pg_index(b, ev);
    if (h.pg == -2)
        return -1;
    *out = h;
    return 0;
}

static int add_hint(builder *b, const kineto_event *ev)
{
    comm_hint h;
    if (make_hint(b, ev, &h))
        return -1;
    return TSA_VEC_PUSH(b->hints, b->n_hints, b->cap_hints, h);
}

/* Older PyTorch records no "Collective name" argument, but names the CPU op
 * after the collective ("nccl:all_to_all"): that name is the op of the NCCL
 * kernels it launches (SendRecv kernels carry all-to-all and send/recv). */
static int add_named_hint(builder *b, const kineto_event *ev)
{
    /* c10d:: and symm_mem:: ops: their kernels are collectives, of the op
     * their name says (sizes only from record_param_comms or kernel args) */
    if (ev->name.s && strcmp(ev->name.s, "record_param_comms") &&
        kineto_is_comm_cpu_op(ev->name.s)) {
        comm_hint h;
        if (make_hint(b, ev, &h))
            return -1;
        h.op = kineto_comm_op_from_words(strstr(ev->name.s, "::") + 2);
        h.layer_op = 1;
        return TSA_VEC_PUSH(b->hints, b->n_hints, b->cap_hints, h);
    }
    if (!ev->name.s || (strncmp(ev->name.s, "nccl:", 5) && strncmp(ev->name.s, "gloo:", 5)) ||
        !kineto_nccl_op_from_collective(ev->name.s + 5))
        return 0;
    kineto_event named = *ev;
    snprintf(named.coll_name, sizeof named.coll_name, "%s", ev->name.s + 5);
    comm_hint h;
    if (make_hint(b, &named, &h))
        return -1;
    h.backend_op = strncmp(ev->name.s, "gloo:", 5) ? 1 : 2;
    return TSA_VEC_PUSH(b->hints, b->n_hints, b->cap_hints, h);
}

static int add_kernel_hint(builder *b, const kineto_event *ev)
{
    comm_hint h;
    if (!ev->has_correlation || make_hint(b, ev, &h))
        return ev->has_correlation ? -1 : 0;
    if (TSA_VEC_PUSH(b->khints, b->n_khints, b->cap_khints, h))
        return -1;
    size_t n = b->n_khints - 1;
    return TSA_VEC_PUSH(b->khint_corr, n, b->cap_khint_corr, (uint32_t)ev->correlation);
}

static const comm_hint *find_kernel_hint(const builder *b, uint32_t corr)
{
    for (size_t i = 0; i < b->n_khints; i++)   /* few: only NCCL kernels */
        if (b->khint_corr[i] == corr)
            return &b->khints[i];
    return NULL;
}

/* ev->cat is a NUL-terminated char[32]: comparing sizeof the literal bytes
 * (its NUL included) is an exact string test that the compiler inlines,
 * where strcmp was a call per category per event. */
#define CAT_IS(cat, lit) (sizeof(lit) <= sizeof((kineto_event *)0)->cat && \
                          !memcmp((cat), (lit), sizeof(lit)))

/* A [memory] event of a CUDA device (Device Type 1): the caching
 * allocator's reserved total after the operation becomes the size of one
 * pool per device (TSA_MEM_POOL), so the memory pass reads the same
 * reserved timeline as from a dump.  Tensor allocations inside the cache
 * (Bytes) cost no device call and are not kept; only changes of the total
 * are (a trace repeats it on every allocation). */
static int add_memory(builder *b, const kineto_event *ev)
{
    if (!ev->has_mem_total_reserved || !ev->has_mem_device_type || ev->mem_device_type != 1 ||
        ev->mem_total_reserved < 0 || ev->mem_device_id < 0 || ev->mem_device_id > UINT32_MAX)
        return 0;
    uint64_t total = (uint64_t)ev->mem_total_reserved;
    if (ev->mem_device_id < KINETO_MEM_DEVICES) {
        uint64_t *last = &b->mem_last[ev->mem_device_id];
        if (*last == total + 1)
            return 0;
        *last = total + 1;
    }
    tsa_mem_event e = {.t_ns = ev->ts_ns, .bytes = total, .pool = (uint64_t)ev->mem_device_id + 1,
                       .device = (uint32_t)ev->mem_device_id, .op = TSA_MEM_POOL,
                       .source = TSA_MEM_SRC_ALLOCATOR_TOTAL};
    return tsa_rank_add_mem(b->r, &e);
}

static int is_cpu_cat(const char *cat)
{
    return CAT_IS(cat, "cpu_op") || CAT_IS(cat, "user_annotation") ||
           CAT_IS(cat, "Operator") || CAT_IS(cat, "python_function") || CAT_IS(cat, "");
}

static int on_event(void *ctx, const kineto_event *ev)
{
    builder *b = ctx;
    const char *cat = ev->cat;
    int rc = 0;
    if (ev->ph == 'M') {
        if (ev->name.s && !strcmp(ev->name.s, "thread_name"))
            rc = add_thread(b, ev);
    } else if (ev->ph == 'i' && ev->has_ts && ev->name.s && !strcmp(ev->name.s, "[memory]")) {
        rc = add_memory(b, ev);
    } else if (ev->ph == 'X' && ev->has_ts) {
        if (CAT_IS(cat, "kernel") || CAT_IS(cat, "Kernel")) {
            rc = add_kernel(b, ev);
            /* PyTorch writes a collective's metadata on its kernel: that is
             * communication whatever the kernel's name (an expert-parallel
             * library's all-to-all names no NCCL) */
            if (!rc && ev->coll_name[0]) {
                b->r->kernels[b->r->n_kernels - 1].category = TSA_KCAT_COMM;
                rc = add_kernel_hint(b, ev);
            }
        }
        else if (CAT_IS(cat, "gpu_memcpy") || CAT_IS(cat, "Memcpy"))
            rc = add_copy(b, ev, 0);
        else if (CAT_IS(cat, "gpu_memset") || CAT_IS(cat, "Memset"))
            rc = add_copy(b, ev, 1);
        else if (CAT_IS(cat, "cuda_runtime") || CAT_IS(cat, "cuda_driver") ||
                 CAT_IS(cat, "Runtime") || CAT_IS(cat, "Driver")) {
            rc = add_api(b, ev);
            if (!rc)
                rc = kineto_host_api_event(b->r, &b->host, ev);
        } else if (is_cpu_cat(cat)) {
            rc = add_call(b, ev);
            /* a bare-array trace of a PyTorch built without Kineto has no
             * categories: its events are all CPU operators */
            if (!rc && !CAT_IS(cat, "python_function")) {
                if (!b->r->pid && ev->has_pid && ev->pid > 0 && ev->pid <= UINT32_MAX)
                    b->r->pid = (uint32_t)ev->pid;
                rc = kineto_host_cpu_event(b->r, &b->host, ev, CAT_IS(cat, "user_annotation"));
                if (!rc && ev->name.s && kineto_is_step_marker_op(ev->name.s))
                    rc = add_range(b, ev);
            }
            else if (!rc)
                rc = kineto_host_python_event(b->r, &b->host, ev);
            if (rc)
                goto out;
            if (ev->coll_name[0])
                rc = add_hint(b, ev);
            else
                rc = add_named_hint(b, ev);
            if (!rc && !CAT_IS(cat, "python_function") &&
                ((ev->name.s && !strncmp(ev->name.s, "ProfilerStep#", 13)) ||
                 CAT_IS(cat, "user_annotation")))
                rc = add_range(b, ev);
        }
    }
out:
    if (rc)
        b->failed = 1;
    return rc;
}

/* ------------------------------------------------------------ linking */

#define CMP_START(type)                                                     \
    static int cmp_##type(const void *pa, const void *pb)                   \
    {                                                                       \
        const type *a = pa, *b = pb;                                        \
        if (a->start_ns != b->start_ns)                                     \
            return a->start_ns < b->start_ns ? -1 : 1;                      \
        return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);           \
    }
CMP_START(tsa_kernel)
CMP_START(tsa_copy)
CMP_START(tsa_sync)
CMP_START(tsa_api)
CMP_START(tsa_range)
CMP_START(comm_hint)

static int cmp_nccl(const void *pa, const void *pb)
{
    const tsa_nccl_op *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->gpu_start_ns > b->gpu_start_ns) - (a->gpu_start_ns < b->gpu_start_ns);
}

/* qsort, except that empty arrays (NULL) are fine, and arrays already in
 * order are left alone.  Kineto writes each activity type mostly in time
 * order; glibc's qsort is a merge sort that first allocates a copy of the
 * whole array (the peak of the load: 80 bytes per kernel), and on sorted
 * input that merge sort, being stable, would not move anything. */
static void sort_(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2)
        return;
    const char *p = base;
    size_t i = 1;
    while (i < n && cmp(p + (i - 1) * size, p + i * size) <= 0)
        i++;
    if (i < n)
        qsort(base, n, size, cmp);
}

typedef struct corr_entry {
    uint32_t correlation;
    uint32_t api;
} corr_entry;

static int cmp_corr(const void *pa, const void *pb)
{
    const corr_entry *a = pa, *b = pb;
    return (a->correlation > b->correlation) - (a->correlation < b->correlation);
}

/* Which API record launched correlation id c: the first of the APIs (in
 * their start order) with that id.  When the APIs are already in
 * correlation order (Kineto numbers launches as they happen, so usually
 * they are) the search runs on them directly; else on a table of
 * (id, index) pairs sorted by id.  The table was 8 bytes per API at the
 * peak of the load; most traces no longer need it. */
typedef struct corr_lookup {
    const tsa_api *apis;
    size_t n;
    corr_entry *table;      /* NULL: apis are in correlation order */
    size_t next;            /* after the last one found: kernels come in launch order */
} corr_lookup;

static int corr_lookup_init(corr_lookup *l, const tsa_rank *r)
{
    l->apis = r->apis;
    l->n = r->n_apis;
    l->table = NULL;
    l->next = 0;
    size_t i = 1;
    while (i < l->n && r->apis[i - 1].correlation <= r->apis[i].correlation)
        i++;
    if (i >= l->n)
        return 0;
    if (!(l->table = malloc(l->n * sizeof *l->table)))
        return -1;
    for (i = 0; i < l->n; i++)
        l->table[i] = (corr_entry){r->apis[i].correlation, (uint32_t)i};
    /* glibc's qsort is a stable merge sort: equal ids keep start order */
    qsort(l->table, l->n, sizeof *l->table, cmp_corr);
    return 0;
}

static uint32_t corr_key(const corr_lookup *l, size_t i)
{
    return l->table ? l->table[i].correlation : l->apis[i].correlation;
}

/* Index of the API, or -1 (c == 0: no correlation). */
static int64_t api_of_corr(corr_lookup *l, uint32_t c)
{
    if (!c)
        return -1;
    size_t lo = l->next;
    /* The one after the last found is the usual answer; else bisect. */
    if (!(lo < l->n && corr_key(l, lo) == c && (lo == 0 || corr_key(l, lo - 1) < c))) {
        size_t hi = l->n;
        lo = 0;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (corr_key(l, mid) < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == l->n || corr_key(l, lo) != c)
            return -1;
    }
    l->next = lo + 1;
    return l->table ? (int64_t)l->table[lo].api : (int64_t)lo;
}

/* The collective CPU op on thread tid that contains time t: the innermost
 * one, preferring one that carries a sequence number. */
/* Index of the first hint that starts after t (hints sorted by start). */
static size_t first_hint_after(const builder *b, int64_t t)
{
    size_t lo = 0, hi = b->n_hints;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->hints[mid].start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const comm_hint *find_hint(const builder *b, uint32_t tid, int64_t t)
{
    size_t lo = first_hint_after(b, t);
    const comm_hint *best = NULL;
    for (size_t i = lo, looked = 0; i > 0 && looked < 256; i--, looked++) {
        if (b->hint_end_max[i - 1] < t)
            break;   /* these and all before them ended before t */
        const comm_hint *h = &b->hints[i - 1];
        if (h->tid != tid || h->end_ns < t)
            continue;
        if (!best || (h->has_seq && !best->has_seq) ||
            (h->has_seq == best->has_seq && h->end_ns - h->start_ns < best->end_ns - best->start_ns))
            best = h;
    }
    return best;
}

/* The enclosing ops of one launch carry different parts: the innermost
 * names the collective (nccl:all_reduce), record_param_comms around it the
 * element counts, dtype and group (PyTorch 2.x).  One hint from both. */
static const comm_hint *find_sized_hint(const builder *b, uint32_t tid, int64_t t,
                                        comm_hint *merged)
{
    const comm_hint *inner = find_hint(b, tid, t);
    /* an inner op sized from its own input still lacks the group */
    if (!inner || (inner->has_size && inner->group_size && inner->pg >= 0))
        return inner;
    for (size_t i = first_hint_after(b, t), looked = 0; i > 0 && looked < 256; i--, looked++) {
        if (b->hint_end_max[i - 1] < t)
            break;
        const comm_hint *h = &b->hints[i - 1];
        if (h == inner || h->tid != tid || h->end_ns < t || !h->has_size)
            continue;
        *merged = *inner;
        if (!inner->has_size) {
            merged->dtype = h->dtype;
            merged->count = h->count;
            merged->bytes = h->bytes;
            merged->has_size = 1;
        }
        if (!merged->group_size)
            merged->group_size = h->group_size;
        if (merged->pg < 0)
            merged->pg = h->pg;
        if (!merged->op)
            merged->op = h->op;
        return merged;
    }
    return inner;
}

/* This rank's position in a "[0, 4, 8]" list, or -1. */
static int position_in_list(const char *list, int64_t rank)
{
    if (!list || rank < 0)
        return -1;
    int pos = 0;
    const char *p = list;
    while (*p) {
        while (*p && !(*p >= '0' && *p <= '9'))
            p++;
        if (!*p)
            break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (v == rank)
            return pos;
        pos++;
        p = end;
    }
    return -1;
}

typedef struct seq_counter {
    uint64_t comm_id;
    uint64_t next;
} seq_counter;

static int build_nccl(builder *b)
{
    tsa_rank *r = b->r;
    size_t n_api = r->n_apis;
    corr_lookup corr;
    if (b->n_hints && !(b->hint_end_max = malloc(b->n_hints * sizeof *b->hint_end_max)))
        return -1;
    for (size_t i = 0; i < b->n_hints; i++)
        b->hint_end_max[i] = i && b->hint_end_max[i - 1] > b->hints[i].end_ns
                                 ? b->hint_end_max[i - 1] : b->hints[i].end_ns;
    if (corr_lookup_init(&corr, r))
        return -1;

    /* Only APIs that launched recorded GPU work stay, as in tscope dumps;
     * one bit each says which. */
    uint64_t *used = calloc(n_api / 64 + 1, sizeof *used);
    if (!used) {
        free(corr.table);
        return -1;
    }
#define MARK_USED(i) (used[(i) / 64] |= UINT64_C(1) << ((i) % 64))
    for (size_t i = 0; i < r->n_kernels; i++) {
        tsa_kernel *k = &r->kernels[i];
        int64_t a = api_of_corr(&corr, k->correlation);
        if (a >= 0) {
            k->launch_tid = r->apis[a].tid;
            MARK_USED((size_t)a);
            /* launched inside a communication op (record_param_comms,
             * c10d::, symm_mem::, nccl:): a collective, whatever its name */
            if (k->category != TSA_KCAT_COMM && find_hint(b, r->apis[a].tid, r->apis[a].start_ns))
                k->category = TSA_KCAT_COMM;
        }
    }
    for (size_t i = 0; i < r->n_copies; i++) {
        int64_t a = api_of_corr(&corr, r->copies[i].correlation);
        if (a >= 0)
            MARK_USED((size_t)a);
    }
#undef MARK_USED

    seq_counter *counters = NULL;
    size_t n_counters = 0, cap_counters = 0;
    int rc = 0;
    for (size_t i = 0; i < r->n_kernels && !rc; i++) {
        tsa_kernel *k = &r->kernels[i];
        if (k->category != TSA_KCAT_COMM)
            continue;
        tsa_nccl_op op;
        comm_hint merged;
        memset(&op, 0, sizeof op);
        op.gpu_start_ns = k->start_ns;
        op.gpu_end_ns = k->end_ns;
        op.start_ns = k->start_ns;
        op.end_ns = k->end_ns;
        op.stream = k->stream;
        op.peer = TSC_NO_PEER;
        op.redop = TSC_REDOP_NONE;
        op.dtype = TSC_DT_NONE;
        op.kernel = (int32_t)i;
        op.op = (uint8_t)kineto_nccl_op_from_kernel(r->strings[k->name]);
        if (!op.op)
            op.op = (uint8_t)kineto_comm_op_from_words(r->strings[k->name]);
        int64_t launch = api_of_corr(&corr, k->correlation);
        const comm_hint *h = NULL;
        if (launch >= 0) {
            const tsa_api *a = &r->apis[launch];
            op.start_ns = a->start_ns;
            op.end_ns = a->end_ns;
            op.tid = a->tid;
            h = find_sized_hint(b, a->tid, a->start_ns, &merged);
        }
        int from_kernel = 0;
        if (!h && k->correlation && (h = find_kernel_hint(b, k->correlation)))
            from_kernel = 1;
        char key[128];
        if (h) {
            if (!from_kernel) {   /* the kernel's copy has the kernel's times */
                op.start_ns = h->start_ns;
                op.end_ns = h->end_ns;
            }
            if (h->op)
                op.op = (uint8_t)h->op;
            op.dtype = (uint8_t)h->dtype;
            if (!h->has_size)
                op.flags |= TSA_NCCL_F_BYTES_UNKNOWN;
            op.count = h->count;
            op.bytes = h->bytes;
            op.comm_size = h->group_size;
            const pg_info *pg = h->pg >= 0 ? &b->pgs[h->pg] : NULL;
            int pos = pg ? position_in_list(pg->ranks, r->rank) : -1;
            if (pos >= 0)
                op.comm_rank = (uint32_t)pos;
            /* NCCL names the peer by its rank in the communicator */
            int p2p = op.op == TSC_NCCL_SEND || op.op == TSC_NCCL_RECV;
            if (h->peer >= 0 && p2p)
                op.peer = pg && pg->ranks ? position_in_list(pg->ranks, h->peer) : h->peer;
            else if (p2p && h->group_size == 2 && (pos == 0 || pos == 1))
                op.peer = 1 - pos;   /* a two-rank communicator: the other member */
            else if (r->rank >= 0 && (!op.comm_size || op.comm_size == (uint32_t)r->world_size))
                op.comm_rank = (uint32_t)r->rank;
            snprintf(key, sizeof key, "pg:%s", pg ? pg->name : "default");
        } else {
            /* No CPU op to say which communicator: the stream stands in, as
             * PyTorch gives each communicator its own NCCL stream. */
            op.flags |= TSA_NCCL_F_BYTES_UNKNOWN;
            snprintf(key, sizeof key, "stream:%u", k->stream);
            if (r->rank >= 0)
                op.comm_rank = (uint32_t)r->rank;
        }
        if (!op.comm_size && r->world_size > 0)
            op.comm_size = (uint32_t)r->world_size;
        op.comm_id = tsa_name_hash(key, strlen(key));
        size_t c = 0;
        while (c < n_counters && counters[c].comm_id != op.comm_id)
            c++;
        if (c == n_counters) {
            seq_counter sc = {op.comm_id, 0};
            if (TSA_VEC_PUSH(counters, n_counters, cap_counters, sc)) {
                rc = -1;
                break;
            }
        }
        /* PyTorch's own sequence number when the trace has it, else the
         * call's position on its communicator (the same on every rank). */
        op.seq = h && h->has_seq && h->seq >= 0 ? (uint64_t)h->seq : counters[c].next;
        counters[c].next = op.seq + 1;
        k->nccl = (int32_t)r->n_nccl;
        if (TSA_VEC_PUSH(r->nccl, r->n_nccl, b->r->cap_nccl, op))
            rc = -1;
    }
    /* No communication kernel (a CPU-only job over gloo, or a trace without
     * GPU records): the backend's CPU ops are the collectives, timed on the
     * host as in a host-only dump. */
    int comm_kernels = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        comm_kernels |= r->kernels[i].category == TSA_KCAT_COMM;
    for (size_t i = 0; i < b->n_hints && !rc && !comm_kernels; i++) {
        const comm_hint *h = &b->hints[i];
        if (h->backend_op != 2 || !h->op)
            continue;   /* NCCL's CPU op only enqueues: its time is no collective's */
        tsa_nccl_op op;
        memset(&op, 0, sizeof op);
        op.start_ns = op.gpu_start_ns = h->start_ns;
        op.end_ns = op.gpu_end_ns = h->end_ns;
        op.tid = h->tid;
        op.op = (uint8_t)h->op;
        op.dtype = (uint8_t)h->dtype;
        op.count = h->count;
        op.bytes = h->bytes;
        op.flags = TSA_NCCL_F_CPU_BACKEND | (h->has_size ? 0 : TSA_NCCL_F_BYTES_UNKNOWN);
        op.peer = TSC_NO_PEER;
        op.redop = TSC_REDOP_NONE;
        op.kernel = TSA_NONE;
        op.comm_size = h->group_size ? h->group_size : (uint32_t)(r->world_size > 0 ? r->world_size : 0);
        op.comm_rank = r->rank >= 0 ? (uint32_t)r->rank : 0;
        op.comm_id = tsa_name_hash("host", 4);
        op.seq = h->has_seq && h->seq >= 0 ? (uint64_t)h->seq : r->n_nccl;
        if (TSA_VEC_PUSH(r->nccl, r->n_nccl, b->r->cap_nccl, op))
            rc = -1;
    }
    free(counters);
    free(corr.table);

    if (!rc) {
        size_t keep = 0;
        for (size_t i = 0; i < n_api; i++)
            if (used[i / 64] >> (i % 64) & 1)
                r->apis[keep++] = r->apis[i];
        r->n_apis = keep;
        /* Host order for the ops; then re-point kernels at them. */
        sort_(r->nccl, r->n_nccl, sizeof *r->nccl, cmp_nccl);
        for (size_t i = 0; i < r->n_nccl; i++)
            if (r->nccl[i].kernel >= 0)
                r->kernels[r->nccl[i].kernel].nccl = (int32_t)i;
    }
    free(used);
    return rc;
}

static void shift_times(tsa_rank *r, int64_t d)
{
#define SHIFT(arr, n)                       \
    for (size_t i = 0; i < (n); i++) {      \
        (arr)[i].start_ns += d;             \
        (arr)[i].end_ns += d;               \
    }
    SHIFT(r->kernels, r->n_kernels)
    SHIFT(r->copies, r->n_copies)
    SHIFT(r->syncs, r->n_syncs)
    SHIFT(r->apis, r->n_apis)
    SHIFT(r->ranges, r->n_ranges)
#undef SHIFT
    for (size_t i = 0; i < r->n_mem; i++)
        r->mem[i].t_ns += d;
}

static void extent(tsa_rank *r)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
#define EXT(arr, n)                          \
    for (size_t i = 0; i < (n); i++) {       \
        if ((arr)[i].start_ns < lo)          \
            lo = (arr)[i].start_ns;          \
        if ((arr)[i].end_ns > hi)            \
            hi = (arr)[i].end_ns;            \
    }
    EXT(r->kernels, r->n_kernels)
    EXT(r->copies, r->n_copies)
    EXT(r->syncs, r->n_syncs)
    EXT(r->apis, r->n_apis)
    EXT(r->ranges, r->n_ranges)
    EXT(r->nccl, r->n_nccl)
    EXT(r->host_spans, r->n_host_spans)
#undef EXT
    r->first_ns = lo == INT64_MAX ? 0 : lo;
    r->last_ns = hi == INT64_MIN ? 0 : hi;
}

static int finish(builder *b, const kineto_header *hdr)
{
    tsa_rank *r = b->r;
    r->rank = hdr->has_rank ? (int32_t)hdr->rank : -1;
    r->local_rank = -1;
    r->world_size = hdr->has_world_size ? (int32_t)hdr->world_size : 0;
    if (hdr->device_name[0] && !(r->device_name = strdup(hdr->device_name)))
        return -1;
    r->mem_total_bytes = hdr->device_mem_bytes;
    if (hdr->cc_major > 0 && hdr->cc_minor < 10)
        r->compute_capability = (uint16_t)(hdr->cc_major * 10 + hdr->cc_minor);
    if (hdr->has_base)
        shift_times(r, hdr->base_ns);
    sort_(r->kernels, r->n_kernels, sizeof *r->kernels, cmp_tsa_kernel);
    sort_(r->copies, r->n_copies, sizeof *r->copies, cmp_tsa_copy);
    sort_(r->syncs, r->n_syncs, sizeof *r->syncs, cmp_tsa_sync);
    sort_(r->apis, r->n_apis, sizeof *r->apis, cmp_tsa_api);
    sort_(r->ranges, r->n_ranges, sizeof *r->ranges, cmp_tsa_range);
    if (hdr->has_base)
        for (size_t i = 0; i < b->n_hints; i++) {
            b->hints[i].start_ns += hdr->base_ns;
            b->hints[i].end_ns += hdr->base_ns;
        }
    sort_(b->hints, b->n_hints, sizeof *b->hints, cmp_comm_hint);
    kineto_host_finish(r, hdr->has_base ? hdr->base_ns : 0);
    if (kineto_loop_finish(&b->loop, r, hdr->has_base ? hdr->base_ns : 0))
        return -1;
    if (build_nccl(b))
        return -1;
    extent(r);
    return 0;
}

/* ------------------------------------------------------------- public */

int tsa_kineto_load_file(const char *path, tsa_rank *rank, tsa_kineto_stats *stats,
                         char *err, size_t errlen)
{
    memset(rank, 0, sizeof *rank);
    rank->rank = -1;
    builder b;
    memset(&b, 0, sizeof b);
    b.r = rank;
    kineto_header hdr;
    int rc = kineto_parse_file(path, on_event, &b, &hdr, stats, err, errlen);
    /* Link what was read even after a parse error: a trace cut short still
     * describes the steps before the cut. */
    if (finish(&b, &hdr) && !rc) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    if (!(rank->file = strdup(path)) && !rc) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    rank->clean_end = rc == 0;
    free(b.slots);
    free(b.str_len);
    free(b.str_cat);
    free(b.hints);
    free(b.hint_end_max);
    for (size_t i = 0; i < b.n_pgs; i++)
        free(b.pgs[i].ranks);
    free(b.pgs);
    free(b.khints);
    free(b.khint_corr);
    free(b.loop.calls);
    return rc;
}
