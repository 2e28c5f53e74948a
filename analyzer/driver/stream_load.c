/* The streaming report's loading half (stream.h): each dump loaded in full
 * on a worker thread, through stage 1, and reduced to its lean rank before
 * the thread takes the next one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/job_build.h"
#include "load/job_text.h"
#include "load/kineto_load.h"
#include "load/lean_steps.h"
#include "load/share_pack.h"
#include "reader/dump_reader.h"
#include "stream_internal.h"
#include "util/mem_hint.h"
#include "util/par_for.h"
#include "whatif/whatif.h"

/* The loaded rank through stage 1, then what the stages after need of it
 * kept in the slot, compact: its steps and, for stage 2, its GEMMs (a
 * GEMM's time is its kernel's start when linked: the kernels are about to
 * be freed). */
static int reduce(tsa_stream *st, tsa_job *pj, stream_slot *sl)
{
    tsa_rank *r = &pj->ranks[0];
    tsa_rank_result rr;
    tsa_rank_digest d;
    memset(&rr, 0, sizeof rr);
    memset(&d, 0, sizeof d);
    if (tsa_stage_steps(pj, r, st->marker, &rr, &d))
        return -1;
    sl->method = rr.method;
    sl->steps_found = rr.steps_found;
    sl->cut = d.cut;
    memcpy(sl->cut_note, d.cut_note, sizeof sl->cut_note);
    if (stream_gemms_keep(r, &sl->gemms) ||
        !(sl->steps = tsa_lean_steps_encode(r->steps, r->n_steps)))
        return -1;
    return 0;
}

void stream_prefetch(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    close(fd);
}

static int load_one(void *ctx, size_t i, int worker)
{
    tsa_stream *st = ctx;
    size_t pos = st->first + i;
    stream_slot *sl = &st->slots[pos];
    const char *path = st->paths[pos];
    if (pos + (size_t)st->jobs < st->n_paths)   /* the dump taken next, jobs ahead */
        stream_prefetch(st->paths[pos + (size_t)st->jobs]);
    tsa_job *pj = st->src->new_job(st);
    if (!pj)
        return -1;
    struct stat sb;
    int rc;
    if (st->max_rank_bytes && stat(path, &sb) == 0 &&
        (unsigned long long)sb.st_size > st->max_rank_bytes) {
        /* Before any allocation: one oversized rank must not take the
         * memory the others are reported with. */
        rc = tsa_job_add_problem(pj, path, 0,
                                 "%s of %llu bytes is over the per-rank limit of %llu bytes "
                                 "(--max-rank-mb): rank skipped",
                                 st->src->what, (unsigned long long)sb.st_size,
                                 st->max_rank_bytes)
                 ? -1
                 : 0;
    } else {
        rc = st->src->load(st, pj, path, worker);
    }
    if (rc >= 0 && tsa_job_make_text_visible(pj))
        rc = -1;
    /* Packed as loaded (its record counts choose among duplicate ranks),
     * then through stage 1. */
    if (rc >= 0 && tsa_share_pack(pj, 0, 0, &sl->lean))
        rc = -1;
    if (rc > 0 && reduce(st, pj, sl))
        rc = -1;
    tsa_job_free(pj);
    return rc < 0 ? -1 : 0;
}

/* Appends slot pos's rank (if any) and problems to job.  Unpacked here,
 * on the main thread: what the job keeps is then allocated away from the
 * workers' full ranks, whose freed memory it would otherwise pin (1,750
 * instead of 1,410 MiB on 10,240 ranks). */
static int take_slot(tsa_job *job, stream_slot *sl, size_t pos, size_t *loaded)
{
    size_t before = job->n_ranks;
    int rc = tsa_share_unpack_own(sl->lean.data, sl->lean.len, job);
    tsa_pack_buf_free(&sl->lean);
    if (rc)
        return -1;
    if (job->n_ranks > before) {
        tsa_rank *r = &job->ranks[job->n_ranks - 1];
        r->remote_index = (uint32_t)pos;
        r->lean_steps = sl->steps;
        r->n_steps = sl->steps ? sl->steps->n : 0;
        sl->steps = NULL;
        (*loaded)++;
    }
    return 0;
}

static unsigned long long default_rank_limit(int jobs)
{
    /* A loaded rank takes about twice its dump; the threads together may
     * hold half the machine's memory. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    return (unsigned long long)pages * (unsigned long long)page / 4 / (unsigned long long)jobs;
}

/* The bytes of the main run's dumps, and of the largest. */
static unsigned long long dump_bytes(char **paths, size_t n, unsigned long long *largest)
{
    unsigned long long sum = 0;
    struct stat sb;
    *largest = 0;
    for (size_t i = 0; i < n; i++)
        if (stat(paths[i], &sb) == 0) {
            sum += (unsigned long long)sb.st_size;
            if ((unsigned long long)sb.st_size > *largest)
                *largest = (unsigned long long)sb.st_size;
        }
    return sum;
}

int tsa_stream_load(const char *dir, const tsa_load_options *opt, const char *marker,
                    const tsa_stream_limits *lim, tsa_job **out, tsa_stream **out_st, char *err,
                    size_t err_len)
{
    *out = NULL;
    *out_st = NULL;
    tsa_job *job = NULL;
    char **paths = NULL;
    size_t n_paths = 0, loaded = 0;
    /* Traces when the directory holds them and no dump, as load_any.c
     * decides. */
    const stream_source *src = tsa_kineto_dir(dir) > 0 ? &stream_traces : &stream_dumps;
    if (src->plan(dir, opt, &job, &paths, &n_paths, err, err_len))
        return -1;
    int jobs = lim->jobs;
    if (jobs < 1)
        jobs = tsa_cores_available();
    unsigned long long max_rank_bytes = lim->max_rank_bytes ? lim->max_rank_bytes
                                                            : default_rank_limit(jobs);
    /* Held whole when small, unless a dump is over the per-rank limit:
     * only the stream refuses it. */
    unsigned long long largest;
    if (lim->stream_above && dump_bytes(paths, n_paths, &largest) <= lim->stream_above &&
        (!max_rank_bytes || largest <= max_rank_bytes)) {
        tsr_free_paths(paths, n_paths);
        tsa_job_free(job);
        return 1;
    }
    tsa_keep_freed_memory((size_t)32 << 20);
    tsa_stream *st = calloc(1, sizeof *st);
    if (!st) {
        tsr_free_paths(paths, n_paths);
        tsa_job_free(job);
        snprintf(err, err_len, "%s: out of memory while loading", dir);
        return -1;
    }
    stream_timing_start(&st->timing);
    stream_phase_begin(&st->timing);
    st->src = src;
    st->paths = paths;
    st->n_paths = n_paths;
    st->dir = strdup(dir);
    if (opt)
        st->lopt = *opt;
    st->lopt.share_count = 0;
    st->marker = marker;
    st->jobs = jobs;
    st->max_rank_bytes = max_rank_bytes;
    st->slots = calloc(n_paths + 1, sizeof *st->slots);
    st->scratch = calloc((size_t)jobs, sizeof *st->scratch);
    int rc = st->dir && st->slots && st->scratch && !tsa_job_make_text_visible(job) ? 0 : -1;
    for (int t = 0; t < jobs && !rc; t++)
        if (!(st->scratch[t] = tsa_load_scratch_new()))
            rc = -1;
    /* In batches, each taken into the job in path order (ranks and
     * problems as the in-memory loader lists them) before the next is
     * read: the packed lean ranks waiting are one batch, not the job. */
    size_t batch = 16 * (size_t)jobs;
    for (size_t first = 0; first < n_paths && !rc; first += batch) {
        size_t n = n_paths - first < batch ? n_paths - first : batch;
        st->first = first;
        rc = tsa_par_for(n, jobs, load_one, st);
        for (size_t pos = first; pos < first + n && !rc; pos++)
            rc = take_slot(job, &st->slots[pos], pos, &loaded);
    }
    if (rc) {
        snprintf(err, err_len, "%s: out of memory while loading", dir);
    } else if (src->done(st, job, loaded, err, err_len)) {
        rc = -1;
    }
    if (rc) {
        tsa_job_free(job);
        tsa_stream_free(st);
        return -1;
    }
    stream_phase_end(&st->timing, STREAM_LOAD);
    *out = job;
    *out_st = st;
    return 0;
}

int tsa_stream_needs_whole(const tsa_job *job)
{
    return tsa_pipe_possible(job);
}

void tsa_stream_free(tsa_stream *st)
{
    if (!st)
        return;
    stream_timing_print(&st->timing);
    for (size_t i = 0; st->slots && i < st->n_paths; i++) {
        tsa_pack_buf_free(&st->slots[i].lean);
        tsa_lean_steps_free(st->slots[i].steps);
        stream_gemms_free(&st->slots[i].gemms);
    }
    free(st->slots);
    for (int t = 0; st->scratch && t < st->jobs; t++)
        tsa_load_scratch_free(st->scratch[t]);
    free(st->scratch);
    for (size_t i = 0; i < st->n_held; i++)
        tsa_job_free(st->held[i]);
    free(st->held);
    tsr_free_paths(st->paths, st->n_paths);
    free(st->dir);
    free(st);
}
