/* The two kinds of directory the streaming report reads (stream_internal.h:
 * stream_source): tscope dumps, whose run is chosen from their headers
 * before any is loaded (job_load.h), and torch.profiler traces, whose run
 * and rank numbers can only be chosen once every trace is parsed
 * (kineto_load.h: tsa_kineto_finish, which tscope-report-mpi's process 0
 * makes over lean ranks too). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "load/job_text.h"
#include "load/kineto_load.h"
#include "reader/dump_reader.h"
#include "stream_internal.h"

/* ---------------------------------------------------------------- dumps */

static tsa_job *dump_job(const tsa_stream *st)
{
    return tsa_job_new(st->dir);
}

static int dump_load(tsa_stream *st, tsa_job *pj, const char *path, int worker)
{
    return tsa_job_load_dump(pj, path, &st->lopt, st->scratch[worker]);
}

static int dumps_done(tsa_stream *st, tsa_job *job, size_t loaded, char *err, size_t err_len)
{
    return tsa_job_plan_done(st->dir, job, loaded, err, err_len);
}

const stream_source stream_dumps = {"dump", tsa_job_plan, dump_job, dump_load, dumps_done};

/* --------------------------------------------------------------- traces */

static int traces_plan(const char *dir, const tsa_load_options *opt, tsa_job **job,
                       char ***paths, size_t *n_paths, char *err, size_t err_len)
{
    (void)opt; /* run id and lean loading are options of dumps */
    *job = NULL;
    if (tsa_kineto_list(dir, paths, n_paths)) {
        snprintf(err, err_len, "%s: %s", dir, strerror(errno ? errno : EIO));
        return -1;
    }
    if (!*n_paths)
        snprintf(err, err_len, "%s: no torch.profiler traces found", dir);
    else if (!(*job = tsa_kineto_job_new(dir)))
        snprintf(err, err_len, "%s: out of memory", dir);
    if (*job)
        return 0;
    tsr_free_paths(*paths, *n_paths);
    *paths = NULL;
    *n_paths = 0;
    return -1;
}

static tsa_job *trace_job(const tsa_stream *st)
{
    return tsa_kineto_job_new(st->dir);
}

static int trace_load(tsa_stream *st, tsa_job *pj, const char *path, int worker)
{
    (void)st;
    (void)worker;
    return tsa_kineto_add_trace(pj, path) < 0 ? -1 : 1;
}

static int traces_done(tsa_stream *st, tsa_job *job, size_t loaded, char *err, size_t err_len)
{
    if (!loaded) { /* every trace over the per-rank limit */
        snprintf(err, err_len, "%s: no readable trace", st->dir);
        if (job->n_problems) {
            size_t l = strlen(err);
            snprintf(err + l, err_len - l, " (%s)", job->problems[0].message);
        }
        return -1;
    }
    if (tsa_kineto_finish(job) < 0 || tsa_job_make_text_visible(job)) {
        snprintf(err, err_len, "%s: out of memory while loading", st->dir);
        return -1;
    }
    return 0;
}

const stream_source stream_traces = {"trace", traces_plan, trace_job, trace_load, traces_done};
