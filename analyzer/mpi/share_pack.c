/* Flat encoding of a share of ranks (share_pack.h).  Layout: magic, then
 * the problems (file, offset, message), then the ranks: each is its raw
 * struct followed by the payload of every pointer it holds, in a fixed
 * order.  Pointers in the raw struct are never trusted by the reader. */
#include "share_pack.h"

#include <stdlib.h>
#include <string.h>

#include "core/job_build.h"
#include "core/mem_hint.h"
#include "core/rank_telemetry.h"

#define PACK_MAGIC 0x3148535453ULL /* "TSSH1" */
#define NO_STRING UINT64_MAX

static int put(tsa_pack_buf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        unsigned char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static int put_u64(tsa_pack_buf *b, uint64_t v) { return put(b, &v, sizeof v); }

static int put_str(tsa_pack_buf *b, const char *s)
{
    if (!s)
        return put_u64(b, NO_STRING);
    size_t n = strlen(s);
    return put_u64(b, n) || put(b, s, n);
}

/* Arrays are written as their element count and bytes (deferred mode:
 * the bytes are listed in b->bulk instead). */
static int put_arr(tsa_pack_buf *b, const void *p, size_t n, size_t elem)
{
    if (put_u64(b, n))
        return -1;
    if (!b->defer)
        return put(b, p, n * elem);
    if (!n)
        return 0;
    if (tsa_grow((void **)&b->bulk, b->n_bulk, &b->cap_bulk, sizeof *b->bulk))
        return -1;
    b->bulk[b->n_bulk++] = (tsa_pack_bulk){p, n * elem};
    return 0;
}

static int put_rank(tsa_pack_buf *b, const tsa_rank *r)
{
    if (put(b, r, sizeof *r) || put_str(b, r->host) || put_str(b, r->run_id) ||
        put_str(b, r->file) || put_str(b, r->device_name) || put_str(b, r->cmdline) ||
        put_arr(b, r->nccl, r->n_nccl, sizeof *r->nccl) ||
        put_arr(b, r->kernels, r->n_kernels, sizeof *r->kernels) ||
        put_arr(b, r->copies, r->n_copies, sizeof *r->copies) ||
        put_arr(b, r->syncs, r->n_syncs, sizeof *r->syncs) ||
        put_arr(b, r->gemms, r->n_gemms, sizeof *r->gemms) ||
        put_arr(b, r->apis, r->n_apis, sizeof *r->apis) ||
        put_arr(b, r->ranges, r->n_ranges, sizeof *r->ranges) ||
        put_arr(b, r->threads, r->n_threads, sizeof *r->threads) ||
        put_arr(b, r->steps, r->n_steps, sizeof *r->steps) ||
        put_arr(b, r->pending, r->n_pending, sizeof *r->pending) ||
        put_arr(b, r->mem, r->n_mem, sizeof *r->mem) || put_u64(b, r->n_strings))
        return -1;
    for (size_t i = 0; i < r->n_strings; i++)
        if (put_str(b, r->strings[i]))
            return -1;
    const struct tsa_telemetry *t = r->telemetry;
    if (put_u64(b, t != NULL))
        return -1;
    if (t && (put(b, t, sizeof *t) || put_arr(b, t->gpu, t->n_gpu, sizeof *t->gpu) ||
              put_arr(b, t->cpu, t->n_cpu, sizeof *t->cpu) ||
              put_arr(b, t->task, t->n_task, sizeof *t->task)))
        return -1;
    return 0;
}

int tsa_share_pack(const tsa_job *job, size_t first_problem, tsa_pack_buf *out)
{
    size_t np = first_problem < job->n_problems ? job->n_problems - first_problem : 0;
    if (put_u64(out, PACK_MAGIC) || put_u64(out, np))
        return -1;
    for (size_t i = first_problem; i < job->n_problems; i++) {
        const tsa_problem *p = &job->problems[i];
        if (put_str(out, p->file) || put_u64(out, p->offset) || put_str(out, p->message))
            return -1;
    }
    if (put_u64(out, job->n_ranks) || put_u64(out, job->dump_bytes) ||
        put_u64(out, job->events_read))
        return -1;
    for (size_t i = 0; i < job->n_ranks; i++)
        if (put_rank(out, &job->ranks[i]))
            return -1;
    return 0;
}

void tsa_pack_buf_free(tsa_pack_buf *b)
{
    free(b->data);
    free(b->bulk);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------- reader */

typedef struct cursor {
    const unsigned char *p;
    size_t left;
    int bad;                   /* short or malformed input, or OOM */
    tsa_pack_fetch fetch;      /* deferred arrays, NULL: inline */
    void *ctx;
} cursor;

static const void *take(cursor *c, size_t n)
{
    if (c->bad || n > c->left) {
        c->bad = 1;
        return NULL;
    }
    const void *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

static uint64_t get_u64(cursor *c)
{
    uint64_t v = 0;
    const void *p = take(c, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

/* NULL for an absent string (and on failure, with c->bad set). */
static char *get_str(cursor *c)
{
    uint64_t n = get_u64(c);
    if (c->bad || n == NO_STRING)
        return NULL;
    const char *s = take(c, (size_t)n);
    if (!s || n != (size_t)n)
        return c->bad = 1, NULL;
    char *copy = malloc((size_t)n + 1);
    if (!copy)
        return c->bad = 1, NULL;
    memcpy(copy, s, (size_t)n);
    copy[n] = 0;
    return copy;
}

/* A malloc'd copy of n elements (NULL for none); *n receives the count. */
static void *get_arr(cursor *c, size_t *n, size_t elem)
{
    uint64_t count = get_u64(c);
    *n = 0;
    if (c->bad || count == 0)
        return NULL;
    if (c->fetch) {
        /* Deferred: the count is all the buffer says; bound it by memory
         * the sender could have held. */
        if (count > SIZE_MAX / 4 / elem) {
            c->bad = 1;
            return NULL;
        }
        void *dst = malloc((size_t)count * elem);
        /* Fresh pages for every record of the share: fault them 2 MiB at a time. */
        tsa_hint_huge(dst, (size_t)count * elem);
        if (!dst || c->fetch(dst, (size_t)count * elem, c->ctx)) {
            free(dst);
            c->bad = 1;
            return NULL;
        }
        *n = (size_t)count;
        return dst;
    }
    if (count > c->left / elem) {
        c->bad = 1;
        return NULL;
    }
    const void *src = take(c, (size_t)count * elem);
    void *dst = src ? malloc((size_t)count * elem) : NULL;
    if (!dst) {
        c->bad = 1;
        return NULL;
    }
    memcpy(dst, src, (size_t)count * elem);
    *n = (size_t)count;
    return dst;
}

static void get_telemetry(cursor *c, tsa_rank *r)
{
    if (!get_u64(c) || c->bad)
        return;
    const void *raw = take(c, sizeof(struct tsa_telemetry));
    struct tsa_telemetry *t = raw ? malloc(sizeof *t) : NULL;
    if (!t) {
        c->bad = 1;
        return;
    }
    memcpy(t, raw, sizeof *t);
    t->gpu = get_arr(c, &t->n_gpu, sizeof *t->gpu);
    t->cpu = get_arr(c, &t->n_cpu, sizeof *t->cpu);
    t->task = get_arr(c, &t->n_task, sizeof *t->task);
    t->cap_gpu = t->n_gpu;
    t->cap_cpu = t->n_cpu;
    t->cap_task = t->n_task;
    r->telemetry = t;
}

/* Fills r (already appended to the job, zeroed) from the cursor. */
static void get_rank(cursor *c, tsa_rank *r)
{
    const void *raw = take(c, sizeof *r);
    if (!raw)
        return;
    tsa_rank in;
    memcpy(&in, raw, sizeof in);
    /* Plain values only; every pointer and capacity is rebuilt below. */
    r->rank = in.rank;
    r->local_rank = in.local_rank;
    r->world_size = in.world_size;
    r->pid = in.pid;
    r->restart = in.restart;
    r->first_ns = in.first_ns;
    r->last_ns = in.last_ns;
    r->clock_offset_ns = in.clock_offset_ns;
    r->dropped_events = in.dropped_events;
    r->clean_end = in.clean_end;
    r->end = in.end;
    r->dropped_write_bytes = in.dropped_write_bytes;
    r->cupti_dropped_records = in.cupti_dropped_records;
    r->mem_total_bytes = in.mem_total_bytes;
    r->mem_free_bytes = in.mem_free_bytes;
    r->mem_info_ns = in.mem_info_ns;
    r->host = get_str(c);
    r->run_id = get_str(c);
    r->file = get_str(c);
    r->device_name = get_str(c);
    r->cmdline = get_str(c);
    r->nccl = get_arr(c, &r->n_nccl, sizeof *r->nccl);
    r->kernels = get_arr(c, &r->n_kernels, sizeof *r->kernels);
    r->copies = get_arr(c, &r->n_copies, sizeof *r->copies);
    r->syncs = get_arr(c, &r->n_syncs, sizeof *r->syncs);
    r->gemms = get_arr(c, &r->n_gemms, sizeof *r->gemms);
    r->apis = get_arr(c, &r->n_apis, sizeof *r->apis);
    r->ranges = get_arr(c, &r->n_ranges, sizeof *r->ranges);
    r->threads = get_arr(c, &r->n_threads, sizeof *r->threads);
    r->steps = get_arr(c, &r->n_steps, sizeof *r->steps);
    r->pending = get_arr(c, &r->n_pending, sizeof *r->pending);
    r->mem = get_arr(c, &r->n_mem, sizeof *r->mem);
    r->cap_nccl = r->n_nccl;
    r->cap_kernels = r->n_kernels;
    r->cap_copies = r->n_copies;
    r->cap_syncs = r->n_syncs;
    r->cap_gemms = r->n_gemms;
    r->cap_apis = r->n_apis;
    r->cap_ranges = r->n_ranges;
    r->cap_threads = r->n_threads;
    r->cap_mem = r->n_mem;
    uint64_t n_strings = get_u64(c);
    /* Re-interning in order gives every string its old index back (the
     * sender's strings are distinct) and rebuilds the intern table. */
    for (uint64_t i = 0; i < n_strings && !c->bad; i++) {
        char *s = get_str(c);
        if (c->bad)
            break;
        if (tsa_rank_intern(r, s ? s : "") != i)
            c->bad = 1;
        free(s);
    }
    get_telemetry(c, r);
}

int tsa_share_unpack(const unsigned char *data, size_t len, tsa_job *job,
                     tsa_pack_fetch fetch, void *ctx)
{
    cursor c = {.p = data, .left = len, .fetch = fetch, .ctx = ctx};
    if (get_u64(&c) != PACK_MAGIC)
        return -1;
    uint64_t np = get_u64(&c);
    for (uint64_t i = 0; i < np && !c.bad; i++) {
        char *file = get_str(&c);
        uint64_t offset = get_u64(&c);
        char *msg = get_str(&c);
        if (!c.bad && tsa_job_add_problem(job, file ? file : "", offset, "%s", msg ? msg : ""))
            c.bad = 1;
        free(file);
        free(msg);
    }
    uint64_t nr = get_u64(&c);
    job->dump_bytes += get_u64(&c);
    job->events_read += get_u64(&c);
    for (uint64_t i = 0; i < nr && !c.bad; i++) {
        tsa_rank *r = tsa_job_add_rank(job);
        if (!r)
            return -1;
        get_rank(&c, r);
    }
    return c.bad || c.left ? -1 : 0;
}
