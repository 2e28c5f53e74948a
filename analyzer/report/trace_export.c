/* Chrome trace / Perfetto JSON writer.  Records are written window by
 * window (a window is one step of one rank, or a slice of its extent when
 * it has no steps), so a size cap can close a part between windows and
 * each part is a complete, valid trace with every process and track named. */
#include "trace_export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_instances.h"
#include "whatif/whatif.h"
#include "out_stream.h"
#include "tsc_format.h"
#include "util/vec.h"
#include "views_names.h"

#define SLICES_WITHOUT_STEPS 16

void tsa_trace_default_options(tsa_trace_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->step_first = opt->step_last = -1;
    opt->gzip = -1;
}

int64_t tsa_trace_pid(const tsa_rank *r, size_t index)
{
    return r->rank >= 0 ? r->rank : 100000 + (int64_t)index;
}

static int64_t gpu_tid(uint32_t device, uint32_t stream)
{
    return TSA_TRACE_TID_GPU_BASE + (int64_t)(device % 1000) * 1000000 + stream % 1000000;
}

char *tsa_trace_part_path(const char *path, size_t k)
{
    if (k <= 1)
        return strdup(path);
    size_t n = strlen(path);
    const char *ext = "";
    if (n > 8 && !strcmp(path + n - 8, ".json.gz"))
        ext = ".json.gz";
    else if (n > 5 && !strcmp(path + n - 5, ".json"))
        ext = ".json";
    else if (n > 3 && !strcmp(path + n - 3, ".gz"))
        ext = ".gz";
    char *p;
    if (asprintf(&p, "%.*s.part%zu%s", (int)(n - strlen(ext)), path, k, ext) < 0)
        return NULL;
    return p;
}

/* ------------------------------------------------------------ writer */

typedef struct exporter {
    const tsa_job *job;
    const tsa_trace_options *opt;
    tsa_coll_instances coll;
    int64_t origin;           /* aligned ns that becomes ts 0 */
    tsa_out out;
    int first_event;
    const char *path;
    size_t part;
    char **files;
    size_t n_files, cap_files;
    uint64_t flow_id;
    /* per rank, launch API by correlation id */
    uint32_t **corr_api;      /* [rank] sorted array of api indices by correlation */
} exporter;

/* ns on the job clock -> microseconds text with ns precision. */
static void fmt_us(char *buf, size_t cap, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
    snprintf(buf, cap, "%s%" PRIu64 ".%03" PRIu64, sign, a / 1000, a % 1000);
}

static void begin_event(exporter *x)
{
    tsa_out_puts(&x->out, x->first_event ? "\n" : ",\n");
    x->first_event = 0;
}

/* {"ph":"X",...,"args":{   -- the caller writes args then close_x */
static void open_x(exporter *x, int64_t pid, int64_t tid, int64_t start, int64_t end,
                   const char *name, const char *cat)
{
    char ts[40], dur[40];
    fmt_us(ts, sizeof ts, start - x->origin);
    fmt_us(dur, sizeof dur, end > start ? end - start : 0);
    begin_event(x);
    tsa_out_printf(&x->out, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
                            ",\"ts\":%s,\"dur\":%s,\"cat\":\"%s\",\"name\":",
                   pid, tid, ts, dur, cat);
    tsa_out_json_string(&x->out, name);
    tsa_out_puts(&x->out, ",\"args\":{");
}

static void close_x(exporter *x)
{
    tsa_out_puts(&x->out, "}}");
}

static void meta(exporter *x, int64_t pid, int64_t tid, const char *what, const char *name,
                 long sort)
{
    begin_event(x);
    tsa_out_printf(&x->out, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
                            ",\"name\":\"%s\",\"args\":{\"name\":",
                   pid, tid, what);
    tsa_out_json_string(&x->out, name);
    tsa_out_puts(&x->out, "}}");
    begin_event(x);
    tsa_out_printf(&x->out, "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
                            ",\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%ld}}",
                   pid, tid, !strcmp(what, "process_name") ? "process" : "thread", sort);
}

/* The pipeline what-if's critical path of each analysed step: one flow
 * (cat "critical_path") from each operation to the next, across ranks;
 * from the end of an operation, or from its start where the next one
 * waited for that (a collective's last arrival, a send meeting its
 * receive). */
static void critical_path_flows(exporter *x)
{
    const tsa_pipe_result *p = x->opt->pipe;
    if (!p || !p->pipeline || !p->hop_first)
        return;
    for (size_t s = 0; s < p->steps; s++) {
        long num = (long)p->step_number[s];
        if (x->opt->step_first >= 0 && (num < x->opt->step_first || num > x->opt->step_last))
            continue;
        for (size_t i = p->hop_first[s]; i + 1 < p->hop_first[s + 1]; i++) {
            const tsa_pipe_hop *a = &p->hops[i], *b = &p->hops[i + 1];
            int64_t pa = a->rank, pb = b->rank;
            int64_t ta = a->lane & 0x80000000u ? gpu_tid(0, a->lane & 0x7fffffffu) : a->lane;
            int64_t tb = b->lane & 0x80000000u ? gpu_tid(0, b->lane & 0x7fffffffu) : b->lane;
            char from[40], to[40];
            fmt_us(from, sizeof from, (a->via_start ? a->start_ns : a->end_ns) - x->origin);
            fmt_us(to, sizeof to, b->start_ns - x->origin);
            uint64_t id = ++x->flow_id;
            begin_event(x);
            tsa_out_printf(&x->out, "{\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":%" PRId64
                                    ",\"tid\":%" PRId64 ",\"ts\":%s,\"cat\":\"critical_path\","
                                    "\"name\":\"critical path\"}", id, pa, ta, from);
            begin_event(x);
            tsa_out_printf(&x->out, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
                                    ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%s,"
                                    "\"cat\":\"critical_path\",\"name\":\"critical path\"}",
                           id, pb, tb, to);
        }
    }
}

static void flow(exporter *x, int64_t pid, int64_t from_tid, int64_t from_ns, int64_t to_tid,
                 int64_t to_ns)
{
    char a[40], b[40];
    fmt_us(a, sizeof a, from_ns - x->origin);
    fmt_us(b, sizeof b, to_ns - x->origin);
    uint64_t id = ++x->flow_id;
    begin_event(x);
    tsa_out_printf(&x->out, "{\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":%" PRId64 ",\"tid\":%" PRId64
                            ",\"ts\":%s,\"cat\":\"launch\",\"name\":\"launch\"}",
                   id, pid, from_tid, a);
    begin_event(x);
    tsa_out_printf(&x->out, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64 ",\"pid\":%" PRId64
                            ",\"tid\":%" PRId64 ",\"ts\":%s,\"cat\":\"launch\",\"name\":\"launch\"}",
                   id, pid, to_tid, b);
}

/* ---------------------------------------------------------- metadata */

typedef struct track {
    int64_t tid;
    const char *name;   /* NULL: make one from tid */
    uint32_t device, stream;
    int gpu;
} track;

static int add_track(track **t, size_t *n, size_t *cap, track v)
{
    for (size_t i = 0; i < *n; i++)
        if ((*t)[i].tid == v.tid) {
            if (!(*t)[i].name && v.name)
                (*t)[i].name = v.name;
            return 0;
        }
    return TSA_VEC_PUSH(*t, *n, *cap, v);
}

static int has_phases(const tsa_rank *r)
{
    for (size_t i = 0; i < r->n_kernels; i++)
        if (r->kernels[i].phase != TSA_PHASE_UNKNOWN)
            return 1;
    for (size_t i = 0; i < r->n_steps; i++)
        if (r->steps[i].phase_ns[TSA_PHASE_DATA] > 0)
            return 1;
    return 0;
}

static int rank_metadata(exporter *x, const tsa_rank *r, size_t index)
{
    int64_t pid = tsa_trace_pid(r, index);
    char name[512];
    snprintf(name, sizeof name, "rank %d (%s)", r->rank, r->host ? r->host : "?");
    meta(x, pid, 0, "process_name", name, r->rank >= 0 ? r->rank : (long)index);
    track *t = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < r->n_threads && !rc; i++)
        rc = add_track(&t, &n, &cap, (track){r->threads[i].tid,
                                             r->threads[i].name < r->n_strings
                                                 ? r->strings[r->threads[i].name]
                                                 : NULL, 0, 0, 0});
#define HOST_TIDS(arr, cnt)                                                    \
    for (size_t i = 0; i < (cnt) && !rc; i++)                                  \
        if ((arr)[i].tid)                                                      \
            rc = add_track(&t, &n, &cap, (track){(arr)[i].tid, NULL, 0, 0, 0});
    HOST_TIDS(r->apis, r->n_apis)
    HOST_TIDS(r->syncs, r->n_syncs)
    HOST_TIDS(r->nccl, r->n_nccl)
    HOST_TIDS(r->gemms, r->n_gemms)
    HOST_TIDS(r->ranges, r->n_ranges)
#undef HOST_TIDS
    for (size_t i = 0; i < r->n_kernels && !rc; i++)
        rc = add_track(&t, &n, &cap, (track){gpu_tid(r->kernels[i].device, r->kernels[i].stream),
                                             NULL, r->kernels[i].device, r->kernels[i].stream, 1});
    for (size_t i = 0; i < r->n_copies && !rc; i++)
        rc = add_track(&t, &n, &cap, (track){gpu_tid(r->copies[i].device, r->copies[i].stream),
                                             NULL, r->copies[i].device, r->copies[i].stream, 1});
    for (size_t i = 0; i < n && !rc; i++) {
        char tn[300];
        if (t[i].gpu)
            snprintf(tn, sizeof tn, "GPU %u stream %u", t[i].device, t[i].stream);
        else if (t[i].name)
            snprintf(tn, sizeof tn, "%s (%" PRId64 ")", t[i].name, t[i].tid);
        else
            snprintf(tn, sizeof tn, "thread %" PRId64, t[i].tid);
        meta(x, pid, t[i].tid, "thread_name", tn, t[i].gpu ? 1000 + (long)i : 10 + (long)i);
    }
    free(t);
    if (r->n_steps)
        meta(x, pid, TSA_TRACE_TID_STEPS, "thread_name", "steps", 0);
    if (has_phases(r))
        meta(x, pid, TSA_TRACE_TID_PHASES, "thread_name", "phases", 1);
    if (r->n_nccl)
        meta(x, pid, TSA_TRACE_TID_COMM, "thread_name", "comm", 2);
    return rc;
}

static int open_part(exporter *x)
{
    x->part++;
    char *p = tsa_trace_part_path(x->path, x->part);
    if (!p || tsa_out_open(&x->out, p, x->opt->gzip)) {
        free(p);
        return -1;
    }
    if (TSA_VEC_PUSH(x->files, x->n_files, x->cap_files, p)) {
        free(p);
        tsa_out_close(&x->out);
        return -1;
    }
    x->first_event = 1;
    /* The origin goes in as a string: as a JSON number it would not
     * survive a double. */
    tsa_out_printf(&x->out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"tscope\","
                            "\"origin_ns\":\"%" PRId64 "\",\"part\":%zu,\"run_id\":",
                   x->origin, x->part);
    tsa_out_json_string(&x->out, x->job->run_id ? x->job->run_id : "");
    tsa_out_puts(&x->out, "},\"traceEvents\":[");
    for (size_t i = 0; i < x->job->n_ranks; i++)
        if (rank_metadata(x, &x->job->ranks[i], i))
            return -1;
    return 0;
}

static int close_part(exporter *x)
{
    tsa_out_puts(&x->out, "\n]}\n");
    return tsa_out_close(&x->out);
}

/* ----------------------------------------------------------- records */

/* Per-record-kind positions: windows advance in time, so each array is
 * walked once per rank, not once per window. */
typedef struct cursor {
    size_t kernel, copy, api, sync, nccl, gemm, range, step, phase_kernel;
} cursor;

static const tsa_api *launch_api(const exporter *x, size_t ri, uint32_t corr)
{
    const tsa_rank *r = &x->job->ranks[ri];
    const uint32_t *idx = x->corr_api[ri];
    size_t lo = 0, hi = r->n_apis;
    if (!idx || !corr)
        return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->apis[idx[mid]].correlation < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_apis && r->apis[idx[lo]].correlation == corr ? &r->apis[idx[lo]] : NULL;
}

static void nccl_args(exporter *x, const tsa_rank *r, const tsa_nccl_op *op)
{
    int64_t wait, transfer;
    tsa_coll_instances_split(&x->coll, r, op, &wait, &transfer);
    char w[40], t[40];
    fmt_us(w, sizeof w, wait);
    fmt_us(t, sizeof t, transfer);
    tsa_out_printf(&x->out, "\"op\":\"%s\",\"bytes\":%" PRIu64 ",\"count\":%" PRIu64
                            ",\"comm\":\"0x%016" PRIx64 "\",\"seq\":%" PRIu64
                            ",\"comm_rank\":%u,\"comm_size\":%u,\"peer\":%d"
                            ",\"wait_us\":%s,\"transfer_us\":%s",
                   tsa_views_nccl_op_name(op->op), op->bytes, op->count, op->comm_id, op->seq,
                   op->comm_rank, op->comm_size, op->peer, w, t);
}

static const char *str_at(const tsa_rank *r, uint32_t i)
{
    return i < r->n_strings && r->strings[i] ? r->strings[i] : "?";
}

/* Records of rank ri that start in [t0, t1) (own clock). */
static void emit_window(exporter *x, size_t ri, cursor *c, int64_t t0, int64_t t1)
{
    const tsa_rank *r = &x->job->ranks[ri];
    const int64_t off = r->clock_offset_ns, pid = tsa_trace_pid(r, ri);
#define SKIP_BEFORE(arr, n, cur)                                   \
    while ((cur) < (n) && (arr)[cur].start_ns < t0)                \
        (cur)++;
    SKIP_BEFORE(r->kernels, r->n_kernels, c->kernel)
    SKIP_BEFORE(r->copies, r->n_copies, c->copy)
    SKIP_BEFORE(r->apis, r->n_apis, c->api)
    SKIP_BEFORE(r->syncs, r->n_syncs, c->sync)
    SKIP_BEFORE(r->nccl, r->n_nccl, c->nccl)
    SKIP_BEFORE(r->gemms, r->n_gemms, c->gemm)
    SKIP_BEFORE(r->ranges, r->n_ranges, c->range)
#undef SKIP_BEFORE
    for (; c->kernel < r->n_kernels && r->kernels[c->kernel].start_ns < t1; c->kernel++) {
        const tsa_kernel *k = &r->kernels[c->kernel];
        int64_t tid = gpu_tid(k->device, k->stream);
        open_x(x, pid, tid, k->start_ns + off, k->end_ns + off, str_at(r, k->name), "kernel");
        tsa_out_printf(&x->out, "\"category\":\"%s\",\"phase\":\"%s\",\"correlation\":%u,"
                                "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]",
                       tsa_views_kcat_name(k->category), tsa_views_phase_name(k->phase),
                       k->correlation, k->grid[0], k->grid[1], k->grid[2], k->block[0],
                       k->block[1], k->block[2]);
        if (k->nccl >= 0 && (size_t)k->nccl < r->n_nccl) {
            tsa_out_puts(&x->out, ",");
            nccl_args(x, r, &r->nccl[k->nccl]);
        }
        close_x(x);
        const tsa_api *a = launch_api(x, ri, k->correlation);
        if (a)
            flow(x, pid, a->tid, a->start_ns + off, tid, k->start_ns + off);
        if (k->nccl >= 0 && (size_t)k->nccl < r->n_nccl) {
            const tsa_nccl_op *op = &r->nccl[k->nccl];
            if (op->tid && (!a || a->start_ns != op->start_ns))
                flow(x, pid, op->tid, op->start_ns + off, tid, k->start_ns + off);
        }
    }
    for (; c->copy < r->n_copies && r->copies[c->copy].start_ns < t1; c->copy++) {
        const tsa_copy *cp = &r->copies[c->copy];
        int64_t tid = gpu_tid(cp->device, cp->stream);
        open_x(x, pid, tid, cp->start_ns + off, cp->end_ns + off, tsa_views_copy_name(cp->dir),
               "copy");
        tsa_out_printf(&x->out, "\"bytes\":%" PRIu64 ",\"pinned\":%u,\"correlation\":%u",
                       cp->bytes, cp->pinned, cp->correlation);
        close_x(x);
        const tsa_api *a = launch_api(x, ri, cp->correlation);
        if (a)
            flow(x, pid, a->tid, a->start_ns + off, tid, cp->start_ns + off);
    }
    for (; c->api < r->n_apis && r->apis[c->api].start_ns < t1; c->api++) {
        const tsa_api *a = &r->apis[c->api];
        open_x(x, pid, a->tid, a->start_ns + off, a->end_ns + off, str_at(r, a->name), "cuda_api");
        tsa_out_printf(&x->out, "\"correlation\":%u", a->correlation);
        close_x(x);
    }
    for (; c->sync < r->n_syncs && r->syncs[c->sync].start_ns < t1; c->sync++) {
        const tsa_sync *s = &r->syncs[c->sync];
        open_x(x, pid, s->tid, s->start_ns + off, s->end_ns + off, tsa_views_sync_name(s->kind),
               "sync");
        tsa_out_printf(&x->out, "\"stream\":%u", s->stream);
        close_x(x);
    }
    for (; c->nccl < r->n_nccl && r->nccl[c->nccl].start_ns < t1; c->nccl++) {
        const tsa_nccl_op *op = &r->nccl[c->nccl];
        char name[48];
        snprintf(name, sizeof name, "nccl%s", tsa_views_nccl_op_name(op->op));
        open_x(x, pid, op->tid, op->start_ns + off, op->end_ns + off, name, "nccl");
        nccl_args(x, r, op);
        close_x(x);
        if (op->kernel >= 0) {   /* the collective on the "comm" track, GPU time */
            open_x(x, pid, TSA_TRACE_TID_COMM, op->gpu_start_ns + off, op->gpu_end_ns + off,
                   tsa_views_nccl_op_name(op->op), "comm");
            nccl_args(x, r, op);
            close_x(x);
        }
    }
    for (; c->gemm < r->n_gemms && r->gemms[c->gemm].start_ns < t1; c->gemm++) {
        const tsa_gemm *g = &r->gemms[c->gemm];
        char name[96];
        snprintf(name, sizeof name, "gemm %" PRIu64 "x%" PRIu64 "x%" PRIu64, g->m, g->n, g->k);
        open_x(x, pid, g->tid, g->start_ns + off, g->end_ns + off, name, "gemm");
        tsa_out_printf(&x->out, "\"m\":%" PRIu64 ",\"n\":%" PRIu64 ",\"k\":%" PRIu64
                                ",\"batch\":%" PRIu64 ",\"flops\":%.0f",
                       g->m, g->n, g->k, g->batch, g->flops);
        close_x(x);
    }
    for (; c->range < r->n_ranges && r->ranges[c->range].start_ns < t1; c->range++) {
        const tsa_range *g = &r->ranges[c->range];
        open_x(x, pid, g->tid, g->start_ns + off, g->end_ns + off, str_at(r, g->name), "range");
        close_x(x);
    }
}

/* The steps in [t0, t1) and the phase runs of their kernels. */
static void emit_steps_and_phases(exporter *x, size_t ri, cursor *c, int64_t t0, int64_t t1)
{
    const tsa_rank *r = &x->job->ranks[ri];
    const int64_t off = r->clock_offset_ns, pid = tsa_trace_pid(r, ri);
    while (c->step < r->n_steps && r->steps[c->step].start_ns < t0)
        c->step++;
    for (; c->step < r->n_steps && r->steps[c->step].start_ns < t1; c->step++) {
        size_t s = c->step;
        const tsa_step *st = &r->steps[s];
        char name[48];
        snprintf(name, sizeof name, "step %zu", s);
        open_x(x, pid, TSA_TRACE_TID_STEPS, st->start_ns + off, st->end_ns + off, name, "step");
        char a[40], b[40];
        fmt_us(a, sizeof a, st->compute_ns);
        fmt_us(b, sizeof b, st->comm_ns);
        tsa_out_printf(&x->out, "\"index\":%zu,\"warmup\":%d,\"compute_us\":%s,\"comm_us\":%s",
                       s, st->warmup, a, b);
        for (int p = 0; p < TSA_PHASE_COUNT; p++)
            if (st->phase_ns[p]) {
                fmt_us(a, sizeof a, st->phase_ns[p]);
                tsa_out_printf(&x->out, ",\"%s_us\":%s", tsa_views_phase_name((unsigned)p), a);
            }
        close_x(x);
        /* The data stall opens the step (GPU idle until its first kernel or
         * copy), so it goes first on the phase track. */
        int64_t data = st->phase_ns[TSA_PHASE_DATA];
        if (data > 0 && data <= st->end_ns - st->start_ns) {
            open_x(x, pid, TSA_TRACE_TID_PHASES, st->start_ns + off, st->start_ns + data + off,
                   "data", "phase");
            close_x(x);
        }
    }
    /* Phase runs: consecutive non-communication kernels of one phase make
     * one slice; a slice ends where the next begins, so none overlap. */
    size_t i = c->phase_kernel;
    while (i < r->n_kernels && r->kernels[i].start_ns < t0)
        i++;
    int cur = -1;
    int64_t run_start = 0, run_end = 0;
    for (;; i++) {
        const tsa_kernel *k = i < r->n_kernels && r->kernels[i].start_ns < t1 ? &r->kernels[i] : NULL;
        if (k && (k->category == TSA_KCAT_COMM || k->phase == TSA_PHASE_UNKNOWN))
            continue;
        if (!k || k->phase != cur) {
            if (cur >= 0) {
                int64_t end = k && k->start_ns < run_end ? k->start_ns : run_end;
                open_x(x, pid, TSA_TRACE_TID_PHASES, run_start + off, end + off,
                       tsa_views_phase_name((unsigned)cur), "phase");
                close_x(x);
            }
            if (!k) {
                c->phase_kernel = i;
                break;
            }
            cur = k->phase;
            run_start = k->start_ns;
            run_end = k->end_ns;
        } else if (k->end_ns > run_end)
            run_end = k->end_ns;
    }
}

/* Window boundaries of one rank on its own clock. */
static int rank_windows(const exporter *x, const tsa_rank *r, int64_t **bounds, size_t *n)
{
    *bounds = NULL;
    *n = 0;
    const tsa_trace_options *o = x->opt;
    size_t cap = 0;
    int64_t *b = NULL;
    size_t k = 0;
    if (o->step_first >= 0) {
        if (!r->n_steps || (size_t)o->step_first >= r->n_steps)
            return 0;   /* nothing of this rank is in the window */
        size_t last = o->step_last < 0 || (size_t)o->step_last >= r->n_steps ? r->n_steps - 1
                                                                            : (size_t)o->step_last;
        for (size_t s = (size_t)o->step_first; s <= last; s++)
            if (TSA_VEC_PUSH(b, k, cap, r->steps[s].start_ns))
                goto oom;
        if (TSA_VEC_PUSH(b, k, cap, r->steps[last].end_ns))
            goto oom;
    } else if (r->n_steps) {
        if (TSA_VEC_PUSH(b, k, cap, INT64_MIN))
            goto oom;
        for (size_t s = 0; s < r->n_steps; s++)
            if (r->steps[s].start_ns > b[k - 1] && TSA_VEC_PUSH(b, k, cap, r->steps[s].start_ns))
                goto oom;
        if (TSA_VEC_PUSH(b, k, cap, INT64_MAX))
            goto oom;
    } else {
        int64_t span = r->last_ns - r->first_ns;
        if (TSA_VEC_PUSH(b, k, cap, INT64_MIN))
            goto oom;
        for (int s = 1; s < SLICES_WITHOUT_STEPS && span > SLICES_WITHOUT_STEPS; s++)
            if (TSA_VEC_PUSH(b, k, cap, r->first_ns + span / SLICES_WITHOUT_STEPS * s))
                goto oom;
        if (TSA_VEC_PUSH(b, k, cap, INT64_MAX))
            goto oom;
    }
    *bounds = b;
    *n = k;
    return 0;
oom:
    free(b);
    return -1;
}

static int cmp_api_corr_ctx(const tsa_api *apis, uint32_t a, uint32_t b)
{
    uint32_t ca = apis[a].correlation, cb = apis[b].correlation;
    return (ca > cb) - (ca < cb);
}

static const tsa_api *g_sort_apis;   /* qsort has no context argument in C11 */
static int cmp_api_idx(const void *pa, const void *pb)
{
    return cmp_api_corr_ctx(g_sort_apis, *(const uint32_t *)pa, *(const uint32_t *)pb);
}

static int index_correlations(exporter *x)
{
    x->corr_api = calloc(x->job->n_ranks ? x->job->n_ranks : 1, sizeof *x->corr_api);
    if (!x->corr_api)
        return -1;
    for (size_t ri = 0; ri < x->job->n_ranks; ri++) {
        const tsa_rank *r = &x->job->ranks[ri];
        if (!r->n_apis)
            continue;
        uint32_t *idx = malloc(r->n_apis * sizeof *idx);
        if (!idx)
            return -1;
        for (size_t i = 0; i < r->n_apis; i++)
            idx[i] = (uint32_t)i;
        g_sort_apis = r->apis;
        qsort(idx, r->n_apis, sizeof *idx, cmp_api_idx);
        x->corr_api[ri] = idx;
    }
    return 0;
}

static int64_t job_origin(const tsa_job *job)
{
    int64_t o = INT64_MAX;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        if (r->first_ns || r->last_ns) {
            int64_t t = r->first_ns + r->clock_offset_ns;
            if (t < o)
                o = t;
        }
    }
    return o == INT64_MAX ? 0 : o;
}

int tsa_trace_export(const tsa_job *job, const tsa_trace_options *opt, const char *path,
                     char ***files, size_t *n_files, char *err, size_t errlen)
{
    tsa_trace_options defaults;
    if (!opt) {
        tsa_trace_default_options(&defaults);
        opt = &defaults;
    }
    *files = NULL;
    *n_files = 0;
    exporter x;
    memset(&x, 0, sizeof x);
    x.job = job;
    x.opt = opt;
    x.path = path;
    x.origin = job_origin(job);
    int rc = -1;
    int part_open = 0;
    if (tsa_coll_instances_build(&x.coll, job) || index_correlations(&x)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (open_part(&x)) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
        goto out;
    }
    part_open = 1;
    for (size_t ri = 0; ri < job->n_ranks; ri++) {
        int64_t *b;
        size_t nb;
        if (rank_windows(&x, &job->ranks[ri], &b, &nb)) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        cursor c;
        memset(&c, 0, sizeof c);
        for (size_t w = 0; w + 1 < nb; w++) {
            emit_window(&x, ri, &c, b[w], b[w + 1]);
            emit_steps_and_phases(&x, ri, &c, b[w], b[w + 1]);
            if (opt->max_bytes && x.out.bytes >= opt->max_bytes &&
                !(ri + 1 == job->n_ranks && w + 2 == nb)) {
                part_open = 0;
                if (close_part(&x) || open_part(&x)) {
                    free(b);
                    snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
                    goto out;
                }
                part_open = 1;
            }
        }
        free(b);
    }
    critical_path_flows(&x);
    part_open = 0;
    if (close_part(&x)) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
        goto out;
    }
    rc = 0;
out:
    if (part_open)
        tsa_out_close(&x.out);
    tsa_coll_instances_free(&x.coll);
    if (x.corr_api)
        for (size_t i = 0; i < job->n_ranks; i++)
            free(x.corr_api[i]);
    free(x.corr_api);
    *files = x.files;
    *n_files = x.n_files;
    return rc;
}
