/* Flat encoding of a share of remote ranks (share_pack.h).  Layout: magic,
 * then the problems (file, offset, message), then the ranks: each is its
 * raw struct followed by the payload of the pointers a remote rank keeps, in
 * a fixed order; its NCCL calls go compact (lean_calls.h) and stay so on
 * the receiving side.  Pointers in the raw struct are never trusted by the
 * reader. */
#include "share_pack.h"

#include <stdlib.h>
#include <string.h>

#include "dup_ranks.h"
#include "job_build.h"
#include "lean_calls.h"
#include "nprof_reduce.h"
#include "rank_nprof.h"
#include "rank_telemetry.h"

#define PACK_MAGIC 0x3148535453ULL /* "TSSH1" */

/* The names process 0 reads: its threads' and its telemetry tasks'.  The
 * rest (kernel, API and range names, most of a real rank's strings) stay
 * home with the records that use them. */
static void mark_needed_names(const tsa_rank *r, uint8_t *needed)
{
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].name < r->n_strings)
            needed[r->threads[i].name] = 1;
    const struct tsa_telemetry *t = r->telemetry;
    for (size_t i = 0; t && i < t->n_task; i++)
        if (t->task[i].name < r->n_strings)
            needed[t->task[i].name] = 1;
    for (size_t i = 0; t && i < t->n_net; i++)
        if (t->net[i].port < r->n_strings)
            needed[t->net[i].port] = 1;
}

/* The stalled proxy ops that never ended (the hang report's), a few. */
static int put_open_stalls(tsa_pack_buf *b, const struct tsa_nprof *np)
{
    size_t n = 0;
    tsa_np_stall *keep = malloc(sizeof *keep * (np->n_stalls ? np->n_stalls : 1));
    if (!keep)
        return -1;
    for (size_t i = 0; i < np->n_stalls; i++)
        if (np->lean || !tsa_np_stall_ended(np, &np->stalls[i]))
            keep[n++] = np->stalls[i];
    int rc = tsa_put_arr(b, keep, n, sizeof *keep);
    free(keep);
    return rc;
}

/* The plugin's records travel reduced to what the job-level passes read
 * of them (nprof_lean.h), made here while the rank is whole: they would
 * otherwise grow with its collectives.  Its communicators go along (the
 * summary reads their versions), and the counters. */
static int put_nprof(tsa_pack_buf *b, const tsa_rank *r)
{
    const struct tsa_nprof *np = r->nprof;
    if (tsa_put_u64(b, np != NULL))
        return -1;
    if (!np)
        return 0;
    if (tsa_put_u64(b, np->orphan_waits) || tsa_put_u64(b, np->lost) ||
        tsa_put_u64(b, np->pxn_ops) || tsa_put_arr(b, np->comms, np->n_comms, sizeof *np->comms))
        return -1;
    if (put_open_stalls(b, np))
        return -1;
    if (np->lean)
        return tsa_np_lean_put(b, np->lean);
    tsa_np_lean l;
    int rc = tsa_np_lean_make(r, TSA_NPL_ALL, &l) ? -1 : tsa_np_lean_put(b, &l);
    tsa_np_lean_free(&l);
    return rc;
}

/* The calls compact (lean_calls.h), as the receiver keeps them. */
static int put_calls(tsa_pack_buf *b, const tsa_rank *r)
{
    if (r->lean_calls)
        return tsa_lean_calls_put(b, r->lean_calls);
    tsa_lean_calls *lc = tsa_lean_calls_encode(r->nccl, r->n_nccl);
    int rc = lc ? tsa_lean_calls_put(b, lc) : -1;
    tsa_lean_calls_free(lc);
    return rc;
}

static int put_rank(tsa_pack_buf *b, const tsa_rank *r, uint32_t home, size_t index)
{
    tsa_rank there = *r;
    there.remote = 1;
    there.remote_home = home;
    there.remote_index = (uint32_t)index;
    there.remote_records = tsa_rank_records(r) - r->n_nccl; /* all but the NCCL calls */
    there.remote_kernels = r->n_kernels;
    if (tsa_put(b, &there, sizeof there) || tsa_put_str(b, r->host) ||
        tsa_put_str(b, r->run_id) || tsa_put_str(b, r->file) ||
        tsa_put_str(b, r->device_name) || tsa_put_str(b, r->cmdline) ||
        put_calls(b, r) || tsa_put_arr(b, r->threads, r->n_threads, sizeof *r->threads) ||
        tsa_put_arr(b, r->pending, r->n_pending, sizeof *r->pending) ||
        tsa_put_arr(b, r->mem, r->n_mem, sizeof *r->mem) || tsa_put_u64(b, r->n_strings))
        return -1;
    uint8_t *needed = calloc(r->n_strings + 1, 1);
    if (!needed)
        return -1;
    mark_needed_names(r, needed);
    for (size_t i = 0; i < r->n_strings; i++)
        if (tsa_put_str(b, needed[i] ? r->strings[i] : NULL)) {
            free(needed);
            return -1;
        }
    free(needed);
    const struct tsa_telemetry *t = r->telemetry;
    if (tsa_put_u64(b, t != NULL))
        return -1;
#define PUT_COUNT_SERIES(field, kind, slot) \
    tsa_put_arr(b, t->field, t->n_##field, sizeof *t->field) ||
    if (t && (tsa_put(b, t, sizeof *t) || tsa_put_arr(b, t->gpu, t->n_gpu, sizeof *t->gpu) ||
              tsa_put_arr(b, t->cpu, t->n_cpu, sizeof *t->cpu) ||
              tsa_put_arr(b, t->task, t->n_task, sizeof *t->task) ||
              TSA_COUNT_SERIES(PUT_COUNT_SERIES) tsa_put_arr(b, t->net, t->n_net, sizeof *t->net)))
        return -1;
#undef PUT_COUNT_SERIES
    return put_nprof(b, r);
}

int tsa_share_pack(const tsa_job *job, size_t first_problem, uint32_t home,
                   tsa_pack_buf *out)
{
    size_t np = first_problem < job->n_problems ? job->n_problems - first_problem : 0;
    if (tsa_put_u64(out, PACK_MAGIC) || tsa_put_u64(out, np))
        return -1;
    for (size_t i = first_problem; i < job->n_problems; i++) {
        const tsa_problem *p = &job->problems[i];
        if (tsa_put_str(out, p->file) || tsa_put_u64(out, p->offset) || tsa_put_str(out, p->message))
            return -1;
    }
    if (tsa_put_u64(out, job->n_ranks) || tsa_put_u64(out, job->dump_bytes) ||
        tsa_put_u64(out, job->events_read))
        return -1;
    for (size_t i = 0; i < job->n_ranks; i++)
        if (put_rank(out, &job->ranks[i], home, i))
            return -1;
    return 0;
}

/* ------------------------------------------------------------- reader */

static void get_telemetry(tsa_cursor *c, tsa_rank *r)
{
    if (!tsa_get_u64(c) || c->bad)
        return;
    const void *raw = tsa_take(c, sizeof(struct tsa_telemetry));
    struct tsa_telemetry *t = raw ? malloc(sizeof *t) : NULL;
    if (!t) {
        c->bad = 1;
        return;
    }
    memcpy(t, raw, sizeof *t);
    t->gpu = tsa_get_arr(c, &t->n_gpu, sizeof *t->gpu);
    t->cpu = tsa_get_arr(c, &t->n_cpu, sizeof *t->cpu);
    t->task = tsa_get_arr(c, &t->n_task, sizeof *t->task);
    /* every pointer of the struct replaced: the bytes above held the
     * sender's addresses */
#define GET_COUNT_SERIES(field, kind, slot)                      \
    t->field = tsa_get_arr(c, &t->n_##field, sizeof *t->field); \
    t->cap_##field = t->n_##field;
    TSA_COUNT_SERIES(GET_COUNT_SERIES)
#undef GET_COUNT_SERIES
    t->net = tsa_get_arr(c, &t->n_net, sizeof *t->net);
    t->cap_gpu = t->n_gpu;
    t->cap_cpu = t->n_cpu;
    t->cap_task = t->n_task;
    t->cap_net = t->n_net;
    r->telemetry = t;
}

static void get_nprof(tsa_cursor *c, tsa_rank *r)
{
    if (!tsa_get_u64(c) || c->bad)
        return;
    struct tsa_nprof *np = calloc(1, sizeof *np);
    if (!np) {
        c->bad = 1;
        return;
    }
    r->nprof = np; /* freed with the rank, whatever follows */
    np->orphan_waits = tsa_get_u64(c);
    np->lost = tsa_get_u64(c);
    np->pxn_ops = tsa_get_u64(c);
    np->comms = tsa_get_arr(c, &np->n_comms, sizeof *np->comms);
    np->cap_comms = np->n_comms;
    np->stalls = tsa_get_arr(c, &np->n_stalls, sizeof *np->stalls);
    np->cap_stalls = np->n_stalls;
    if (c->bad || !(np->lean = malloc(sizeof *np->lean))) {
        c->bad = 1;
        return;
    }
    tsa_np_lean_get(c, np->lean);
}

/* Fills r (already appended to the job, zeroed) from the cursor; own:
 * tsa_share_unpack_own. */
static void get_rank(tsa_cursor *c, tsa_rank *r, int own)
{
    const void *raw = tsa_take(c, sizeof *r);
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
    r->self_cost = in.self_cost;
    r->compute_capability = in.compute_capability;
    r->dropped_write_bytes = in.dropped_write_bytes;
    r->cupti_dropped_records = in.cupti_dropped_records;
    r->gpu_kernels_lost = in.gpu_kernels_lost;
    r->gpu_dropped_device = in.gpu_dropped_device;
    r->mem_total_bytes = in.mem_total_bytes;
    r->mem_free_bytes = in.mem_free_bytes;
    r->mem_info_ns = in.mem_info_ns;
    r->host = tsa_get_str(c);
    r->run_id = tsa_get_str(c);
    r->file = tsa_get_str(c);
    r->device_name = tsa_get_str(c);
    r->cmdline = tsa_get_str(c);
    r->remote = 1;
    r->remote_home = in.remote_home;
    r->remote_index = in.remote_index;
    r->remote_records = in.remote_records;
    r->remote_kernels = in.remote_kernels;
    r->host_records = in.host_records;  /* its host spans stay with its records */
    r->launches = in.launches;
    r->lean_calls = tsa_lean_calls_get(c, own);
    r->n_nccl = r->lean_calls ? r->lean_calls->n : 0;
    r->threads = tsa_get_arr(c, &r->n_threads, sizeof *r->threads);
    r->pending = tsa_get_arr(c, &r->n_pending, sizeof *r->pending);
    r->mem = tsa_get_arr(c, &r->n_mem, sizeof *r->mem);
    r->cap_threads = r->n_threads;
    r->cap_mem = r->n_mem;
    /* Indices kept, names left home NULL (tsa_rank_string reads ""); no
     * intern table: nothing is added to a remote rank. */
    uint64_t n_strings = tsa_get_u64(c);
    if (c->bad || n_strings > c->left / sizeof(uint64_t)) {
        c->bad = 1;
        return;
    }
    r->strings = calloc((size_t)n_strings + 1, sizeof *r->strings);
    if (!r->strings) {
        c->bad = 1;
        return;
    }
    for (uint64_t i = 0; i < n_strings && !c->bad; i++, r->n_strings++)
        r->strings[i] = tsa_get_str(c);
    r->cap_strings = r->n_strings;
    get_telemetry(c, r);
    get_nprof(c, r);
}

static int unpack(const unsigned char *data, size_t len, tsa_job *job, int own)
{
    tsa_cursor c = {.p = data, .left = len};
    if (tsa_get_u64(&c) != PACK_MAGIC)
        return -1;
    uint64_t np = tsa_get_u64(&c);
    for (uint64_t i = 0; i < np && !c.bad; i++) {
        char *file = tsa_get_str(&c);
        uint64_t offset = tsa_get_u64(&c);
        char *msg = tsa_get_str(&c);
        if (!c.bad && tsa_job_add_problem(job, file ? file : "", offset, "%s", msg ? msg : ""))
            c.bad = 1;
        free(file);
        free(msg);
    }
    uint64_t nr = tsa_get_u64(&c);
    job->dump_bytes += tsa_get_u64(&c);
    job->events_read += tsa_get_u64(&c);
    for (uint64_t i = 0; i < nr && !c.bad; i++) {
        tsa_rank *r = tsa_job_add_rank(job);
        if (!r)
            return -1;
        get_rank(&c, r, own);
    }
    return c.bad || c.left ? -1 : 0;
}

int tsa_share_unpack(const unsigned char *data, size_t len, tsa_job *job)
{
    return unpack(data, len, job, 0);
}

int tsa_share_unpack_own(const unsigned char *data, size_t len, tsa_job *job)
{
    return unpack(data, len, job, 1);
}
