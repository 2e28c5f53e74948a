/* Builders for the in-memory model: growable arrays and the one final
 * sort (see job_build.h); names are interned by rank_strings.c. */
#include "job_build.h"
#include "kernel_category.h"
#include "lean_calls.h"
#include "lean_steps.h"
#include "rank_telemetry.h"
#include "rank_nprof.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem_hint.h"
#include "util/record_sort.h"
#include "tsc_format.h"

tsa_job *tsa_job_new(const char *dir)
{
    tsa_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    job->dir = strdup(dir ? dir : "");
    if (!job->dir) {
        free(job);
        return NULL;
    }
    return job;
}

tsa_rank *tsa_job_add_rank(tsa_job *job)
{
    if (tsa_grow((void **)&job->ranks, job->n_ranks, &job->cap_ranks, sizeof *job->ranks))
        return NULL;
    tsa_rank *r = &job->ranks[job->n_ranks++];
    memset(r, 0, sizeof *r);
    r->rank = -1;
    r->local_rank = -1;
    r->world_size = -1;
    return r;
}

int tsa_job_add_problem(tsa_job *job, const char *file, uint64_t offset, const char *fmt, ...)
{
    if (tsa_grow((void **)&job->problems, job->n_problems, &job->cap_problems,
             sizeof *job->problems))
        return -1;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tsa_problem *p = &job->problems[job->n_problems];
    p->file = strdup(file ? file : "");
    p->message = strdup(buf);
    p->offset = offset;
    if (!p->file || !p->message) {
        free(p->file);
        free(p->message);
        return -1;
    }
    job->n_problems++;
    return 0;
}

int tsa_job_add_other_run(tsa_job *job, const char *run_id)
{
    if (tsa_grow((void **)&job->other_runs, job->n_other_runs, &job->cap_other_runs,
             sizeof *job->other_runs))
        return -1;
    char *s = strdup(run_id ? run_id : "");
    if (!s)
        return -1;
    job->other_runs[job->n_other_runs++] = s;
    return 0;
}

/* ------------------------------------------------------------ records */

#define DEFINE_ADD(fn, type, arr, n, cap)                                   \
    int fn(tsa_rank *r, const type *x)                                      \
    {                                                                       \
        if (tsa_grow((void **)&r->arr, r->n, &r->cap, sizeof *r->arr))          \
            return -1;                                                      \
        r->arr[r->n++] = *x;                                                \
        return 0;                                                           \
    }

DEFINE_ADD(tsa_rank_add_nccl, tsa_nccl_op, nccl, n_nccl, cap_nccl)
DEFINE_ADD(tsa_rank_add_kernel, tsa_kernel, kernels, n_kernels, cap_kernels)
DEFINE_ADD(tsa_rank_add_copy, tsa_copy, copies, n_copies, cap_copies)
DEFINE_ADD(tsa_rank_add_sync, tsa_sync, syncs, n_syncs, cap_syncs)
DEFINE_ADD(tsa_rank_add_gemm, tsa_gemm, gemms, n_gemms, cap_gemms)
DEFINE_ADD(tsa_rank_add_api, tsa_api, apis, n_apis, cap_apis)
DEFINE_ADD(tsa_rank_add_range, tsa_range, ranges, n_ranges, cap_ranges)

void tsa_rank_counts_of(const tsa_rank *r, tsa_rank_counts *c)
{
    c->nccl = r->n_nccl;
    c->kernels = r->n_kernels;
    c->copies = r->n_copies;
    c->syncs = r->n_syncs;
    c->gemms = r->n_gemms;
    c->apis = r->n_apis;
    c->ranges = r->n_ranges;
}

/* Capacity of at least want (plus slack) for *arr; 0 or -1 on OOM. */
static int reserve(void **arr, size_t *cap, size_t want, size_t elem)
{
    if (!want)
        return 0;
    want += want / 8 + 64;
    if (want <= *cap || want > SIZE_MAX / elem)
        return 0;
    void *p = realloc(*arr, want * elem);
    if (!p)
        return -1;
    tsa_hint_huge(p, want * elem);
    *arr = p;
    *cap = want;
    return 0;
}

#define RESERVE(arr, cap, cnt) reserve((void **)&r->arr, &r->cap, c->cnt, sizeof *r->arr)

int tsa_rank_reserve(tsa_rank *r, const tsa_rank_counts *c)
{
    if (RESERVE(nccl, cap_nccl, nccl) || RESERVE(kernels, cap_kernels, kernels) ||
        RESERVE(copies, cap_copies, copies) || RESERVE(syncs, cap_syncs, syncs) ||
        RESERVE(gemms, cap_gemms, gemms) || RESERVE(apis, cap_apis, apis) ||
        RESERVE(ranges, cap_ranges, ranges))
        return -1;
    return 0;
}

#define DEFINE_NEW(fn, type, arr, n, cap)                                   \
    type *fn(tsa_rank *r)                                                   \
    {                                                                       \
        if (tsa_grow((void **)&r->arr, r->n, &r->cap, sizeof *r->arr))          \
            return NULL;                                                    \
        type *x = &r->arr[r->n++];                                          \
        memset(x, 0, sizeof *x);                                            \
        return x;                                                           \
    }

DEFINE_NEW(tsa_rank_new_kernel, tsa_kernel, kernels, n_kernels, cap_kernels)
DEFINE_NEW(tsa_rank_new_api, tsa_api, apis, n_apis, cap_apis)
DEFINE_NEW(tsa_rank_new_gemm, tsa_gemm, gemms, n_gemms, cap_gemms)

int tsa_rank_add_thread(tsa_rank *r, uint32_t tid, const char *name)
{
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].tid == tid) {
            uint32_t s = tsa_rank_intern(r, name);
            if (s == UINT32_MAX)
                return -1;
            r->threads[i].name = s;
            return 0;
        }
    if (tsa_grow((void **)&r->threads, r->n_threads, &r->cap_threads, sizeof *r->threads))
        return -1;
    uint32_t s = tsa_rank_intern(r, name);
    if (s == UINT32_MAX)
        return -1;
    r->threads[r->n_threads].tid = tid;
    r->threads[r->n_threads].name = s;
    r->n_threads++;
    return 0;
}

const char *tsa_rank_thread_name(const tsa_rank *r, uint32_t tid)
{
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].tid == tid)
            return tsa_rank_string(r, r->threads[i].name);
    return "";
}

/* ------------------------------------------------------------- names */

const char *tsa_phase_name(tsa_phase p)
{
    static const char *const names[TSA_PHASE_COUNT] = {
        "unknown", "data", "forward", "backward", "optimizer", "communication", "idle", "other"};
    return (unsigned)p < TSA_PHASE_COUNT ? names[p] : "unknown";
}

const char *tsa_dtype_name(tsa_dtype d)
{
    static const char *const names[TSA_DTYPE_COUNT] = {
        "unknown", "fp32", "tf32", "fp16", "bf16", "fp8", "fp64", "int8"};
    return (unsigned)d < TSA_DTYPE_COUNT ? names[d] : "unknown";
}

/* The table's NCCL function names (format/tsc_nccl_ops.h), never NULL for
 * printing. */
const char *tsa_nccl_op_name(uint8_t op)
{
    const char *name = tsc_nccl_op_name(op);
    return name ? name : "unknown";
}

const char *tsa_copy_dir_name(uint8_t dir)
{
    static const char *const names[] = {"other", "H2D", "D2H", "D2D", "P2P", "H2H", "memset"};
    return dir < sizeof names / sizeof names[0] ? names[dir] : "other";
}

int tsa_nccl_is_collective(uint8_t op)
{
    return tsc_nccl_op_is_collective(op);
}

/* -------------------------------------------------------------- finish */

static void remap(int32_t *link, const size_t *perm, size_t n)
{
    if (perm && *link >= 0 && (size_t)*link < n)
        *link = (int32_t)perm[*link];
    else if (*link >= 0 && (size_t)*link >= n)
        *link = TSA_NONE;
}

static int by_rank(const void *pa, const void *pb)
{
    const tsa_rank *a = pa, *b = pb;
    /* Unknown ranks (-1) go last, in file order. */
    uint32_t ra = (uint32_t)a->rank, rb = (uint32_t)b->rank;
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return strcmp(a->file ? a->file : "", b->file ? b->file : "");
}

/* Give back the growth slack of every array (called once a rank is loaded). */
#define SHRINK(arr, n, cap)                                                 \
    do {                                                                    \
        if (r->cap > r->n && r->n) {                                        \
            void *p_ = realloc(r->arr, r->n * sizeof *r->arr);              \
            if (p_) {                                                       \
                r->arr = p_;                                                \
                r->cap = r->n;                                              \
            }                                                               \
        }                                                                   \
    } while (0)

void tsa_rank_shrink(tsa_rank *r)
{
    SHRINK(nccl, n_nccl, cap_nccl);
    SHRINK(kernels, n_kernels, cap_kernels);
    SHRINK(copies, n_copies, cap_copies);
    SHRINK(syncs, n_syncs, cap_syncs);
    SHRINK(gemms, n_gemms, cap_gemms);
    SHRINK(apis, n_apis, cap_apis);
    SHRINK(ranges, n_ranges, cap_ranges);
}

static void extend(tsa_rank *r, int64_t s, int64_t e)
{
    if (s && (r->first_ns == 0 || s < r->first_ns))
        r->first_ns = s;
    if (e > r->last_ns)
        r->last_ns = e;
}

/* Sort one of the rank's arrays (see record_sort.h). */
#define SORT(arr, n, cap, perm)                                             \
    tsa_sort_records((void **)&r->arr, &r->cap, r->n, sizeof *r->arr, perm)

int tsa_rank_finish_but_apis(tsa_rank *r)
{
    tsa_telemetry_finish(r);
    size_t *pk = NULL, *pn = NULL, *pg = NULL;
    if (SORT(kernels, n_kernels, cap_kernels, &pk) || SORT(nccl, n_nccl, cap_nccl, &pn) ||
        SORT(gemms, n_gemms, cap_gemms, &pg)) {
        free(pk);
        free(pn);
        return -1;
    }
    /* Categories by name, computed once per distinct name. */
    uint8_t *cat_of = r->n_strings ? malloc(r->n_strings) : NULL;
    if (cat_of)
        memset(cat_of, 0xff, r->n_strings);
    for (size_t i = 0; i < r->n_kernels; i++) {
        tsa_kernel *k = &r->kernels[i];
        remap(&k->nccl, pn, r->n_nccl);
        remap(&k->gemm, pg, r->n_gemms);
        if (k->category == TSA_KCAT_OTHER) {
            if (cat_of && k->name < r->n_strings) {
                if (cat_of[k->name] == 0xff)
                    cat_of[k->name] = (uint8_t)tsa_kernel_category(r->strings[k->name]);
                k->category = cat_of[k->name];
            } else {
                k->category = (uint8_t)tsa_kernel_category(tsa_rank_string(r, k->name));
            }
        }
        if (k->nccl >= 0)
            k->category = TSA_KCAT_COMM;
        extend(r, k->start_ns, k->end_ns);
    }
    for (size_t i = 0; i < r->n_nccl; i++) {
        tsa_nccl_op *op = &r->nccl[i];
        remap(&op->kernel, pk, r->n_kernels);
        if (op->kernel < 0 && op->gpu_start_ns == 0 && op->gpu_end_ns == 0) {
            op->gpu_start_ns = op->start_ns;
            op->gpu_end_ns = op->end_ns;
        }
        extend(r, op->start_ns, op->end_ns);
    }
    for (size_t i = 0; i < r->n_gemms; i++) {
        remap(&r->gemms[i].kernel, pk, r->n_kernels);
        extend(r, r->gemms[i].start_ns, r->gemms[i].end_ns);
    }
    free(cat_of);
    free(pk);
    free(pn);
    free(pg);
    if (SORT(copies, n_copies, cap_copies, NULL) || SORT(syncs, n_syncs, cap_syncs, NULL) ||
        SORT(ranges, n_ranges, cap_ranges, NULL))
        return -1;
    for (size_t i = 0; i < r->n_copies; i++)
        extend(r, r->copies[i].start_ns, r->copies[i].end_ns);
    for (size_t i = 0; i < r->n_ranges; i++)
        extend(r, r->ranges[i].start_ns, r->ranges[i].end_ns);
    return 0;
}

int tsa_rank_sort_apis(tsa_rank *r) { return SORT(apis, n_apis, cap_apis, NULL); }

int tsa_rank_finish(tsa_rank *r)
{
    return tsa_rank_finish_but_apis(r) || tsa_rank_sort_apis(r) ? -1 : 0;
}

void tsa_job_sort_ranks(tsa_job *job)
{
    if (job->n_ranks > 1)
        qsort(job->ranks, job->n_ranks, sizeof *job->ranks, by_rank);
}

int tsa_job_finish(tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        if (tsa_rank_finish(&job->ranks[i]))
            return -1;
    tsa_job_sort_ranks(job);
    return 0;
}

void tsa_rank_free_contents(tsa_rank *r)
{
    free(r->host);
    free(r->run_id);
    free(r->file);
    free(r->device_name);
    free(r->cmdline);
    free(r->cupti_other);
    free(r->nccl);
    free(r->kernels);
    free(r->copies);
    free(r->syncs);
    free(r->gemms);
    free(r->apis);
    free(r->ranges);
    free(r->threads);
    tsa_rank_strings_free(r);
    free(r->steps);
    tsa_telemetry_free(r);
    tsa_nprof_free(r);
    free(r->mem);
    free(r->pending);
    free(r->host_spans);
    free(r->top_calls);
    tsa_lean_calls_free(r->lean_calls);
    tsa_lean_steps_free(r->lean_steps);
    memset(r, 0, sizeof *r);
}

void tsa_job_free(tsa_job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < job->n_ranks; i++)
        tsa_rank_free_contents(&job->ranks[i]);
    free(job->ranks);
    for (size_t i = 0; i < job->n_problems; i++) {
        free(job->problems[i].file);
        free(job->problems[i].message);
    }
    free(job->problems);
    for (size_t i = 0; i < job->n_other_runs; i++)
        free(job->other_runs[i]);
    free(job->other_runs);
    for (size_t i = 0; i < job->n_duplicates; i++) {
        free(job->duplicates[i].kept_file);
        free(job->duplicates[i].dropped_file);
    }
    free(job->duplicates);
    free(job->dir);
    free(job->run_id);
    free(job);
}
