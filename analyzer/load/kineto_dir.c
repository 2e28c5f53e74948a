/* A directory of torch.profiler traces as one job: find the trace files,
 * parse each into a rank, and order the ranks. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "job_build.h"
#include "kineto/kineto_internal.h"
#include "kineto_load.h"
#include "kineto_runs.h"
#include "util/cmp.h"
#include "util/par_for.h"
#include "util/vec.h"

#define SNIFF_BYTES (64u << 10)

static int is_trace_name(const char *name)
{
    return name[0] != '.' && (tsa_ends_with(name, ".json") || tsa_ends_with(name, ".json.gz"));
}

/* The other form Chrome traces take (docs/views.md): a bare top-level
 * array of event objects, "[ {...,"ph":...". */
static int bare_event_array(const char *buf)
{
    const char *p = buf + strspn(buf, " \t\r\n");
    if (*p != '[')
        return 0;
    p += 1 + strspn(p + 1, " \t\r\n");
    return *p == '{' && strstr(p, "\"ph\"") != NULL;
}

/* Kineto writes deviceProperties and distributedInfo before traceEvents,
 * so "traceEvents" may sit some way in; 64 KiB covers many GPUs' worth. */
static int looks_like_trace(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return 0;
    char *buf = malloc(SNIFF_BYTES + 1);
    int n = buf ? gzread(gz, buf, SNIFF_BYTES) : -1;
    gzclose(gz);
    int yes = 0;
    if (n > 0) {
        buf[n] = '\0';
        /* NULs would end the search early; a JSON file has none. */
        yes = strlen(buf) == (size_t)n &&
              (strstr(buf, "\"traceEvents\"") != NULL || bare_event_array(buf)) &&
              /* tscope's own export (trace_export.c) is a Chrome trace too;
               * written into a job directory, it must not become a rank */
              strstr(buf, "\"tool\":\"tscope\"") == NULL;
    }
    free(buf);
    return yes;
}

/* Sorted paths of the trace files in dir; -1 when dir cannot be read, and
 * 0 files when it holds tscope dumps. */
static int list_traces(const char *dir, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int has_dumps = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (tsa_ends_with(e->d_name, ".tsd"))
            has_dumps = 1;
        if (!is_trace_name(e->d_name))
            continue;
        char *p;
        int dir_len = (int)strlen(dir);
        while (dir_len > 1 && dir[dir_len - 1] == '/')
            dir_len--; /* "dir/" + "/" + name would double the slash */
        if (asprintf(&p, "%.*s/%s", dir_len, dir, e->d_name) < 0) {
            rc = -1;
            break;
        }
        struct stat st;
        if (stat(p, &st) || !S_ISREG(st.st_mode) || !looks_like_trace(p)) {
            free(p);
            continue;
        }
        if (TSA_VEC_PUSH(paths, n, cap, p)) {
            free(p);
            rc = -1;
            break;
        }
    }
    closedir(d);
    if (rc || has_dumps) {
        for (size_t i = 0; i < n; i++)
            free(paths[i]);
        free(paths);
        return rc;
    }
    if (n > 1)
        qsort(paths, n, sizeof *paths, tsa_cmp_str);
    *out = paths;
    *n_out = n;
    return 0;
}

int tsa_kineto_list(const char *dir, char ***paths, size_t *n)
{
    return list_traces(dir, paths, n);
}

int tsa_kineto_dir(const char *dir)
{
    char **paths;
    size_t n;
    if (list_traces(dir, &paths, &n))
        return -1;
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return (int)n;
}

/* torch.profiler's tensorboard_trace_handler names files
 * "<host>_<pid>.<time>.pt.trace.json", and a trace names no host itself.
 * The prefix is taken for the host only when the number after it is the
 * pid of the trace's own CPU events: other names ("worker3_step_12") say
 * nothing of the host, and make it unknown. */
static char *host_from_name(const char *path, uint32_t pid)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strchr(base, '.');
    size_t len = dot ? (size_t)(dot - base) : strlen(base);
    const char *us = NULL;
    for (size_t i = 0; i < len; i++)
        if (base[i] == '_')
            us = base + i;
    if (us && us > base && us + 1 < base + len) {
        int digits = 1;
        for (const char *p = us + 1; p < base + len; p++)
            digits &= *p >= '0' && *p <= '9';
        if (digits && pid && strtoull(us + 1, NULL, 10) == pid)
            return strndup(base, (size_t)(us - base));
    }
    return strdup("unknown");
}

/* "a/b/" -> "b": the job's name when the traces carry no run id. */
static char *dir_basename(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    return strndup(dir + start, len - start);
}

/* b is another profiling cycle of a's process: the same pid on the same
 * host (as far as the names tell) and no overlap in time, which two
 * processes running side by side would have. */
static int same_process_cycle(const tsa_rank *a, const tsa_rank *b)
{
    if (!a->pid || a->pid != b->pid)
        return 0;
    if ((a->host || b->host) && (!a->host || !b->host || strcmp(a->host, b->host)))
        return 0;
    return a->last_ns <= b->first_ns || b->last_ns <= a->first_ns;
}

static int cmp_rank(const void *pa, const void *pb)
{
    const tsa_rank *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return strcmp(a->file, b->file);
}

/* The byte offset in "...at byte N..." messages, for the problem record. */
static uint64_t offset_of(const char *msg)
{
    const char *p = strstr(msg, "at byte ");
    return p ? strtoull(p + 8, NULL, 10) : 0;
}

int tsa_kineto_load(const char *dir, tsa_job **out)
{
    char err[512];
    int rc = tsa_kineto_load_ex(dir, out, err, sizeof err);
    if (rc == 2)
        fprintf(stderr, "tscope-report: %s\n", err);
    return rc;
}

tsa_job *tsa_kineto_job_new(const char *dir)
{
    tsa_job *job = calloc(1, sizeof *job);
    if (!job || !(job->dir = strdup(dir)) || !(job->run_id = dir_basename(dir))) {
        tsa_job_free(job);
        return NULL;
    }
    return job;
}

int tsa_kineto_add_trace(tsa_job *job, const char *path)
{
    char msg[512];
    tsa_rank *r = tsa_job_add_rank(job);
    if (!r)
        return -1;
    int status = 0;
    if (tsa_kineto_load_file(path, r, NULL, msg, sizeof msg)) {
        status = 1;
        if (tsa_job_add_problem(job, path, offset_of(msg), "%s", msg))
            return -1;
    }
    r->host = host_from_name(path, r->pid);
    r->run_id = strdup(job->run_id);
    return r->host && r->run_id ? status : -1;
}

/* The traces of one load, each parsed on a worker thread into a job of
 * its own (one trace in flight per thread), then taken into the job in
 * path order: the ranks and problems come out as one thread loading them
 * in turn would list them. */
typedef struct trace_loads {
    const char *dir;
    char **paths;           /* the traces to load, in path order */
    tsa_job **jobs;         /* one per trace */
    int *status;            /* tsa_kineto_add_trace's answer per trace */
} trace_loads;

static int load_one_trace(void *ctx, size_t i, int worker)
{
    trace_loads *l = ctx;
    (void)worker;
    if (!(l->jobs[i] = tsa_kineto_job_new(l->dir)))
        return -1;
    l->status[i] = tsa_kineto_add_trace(l->jobs[i], l->paths[i]);
    return l->status[i] < 0 ? -1 : 0;
}

/* Moves one trace's rank and problems to the end of job's; 0 or -1 (OOM). */
static int take_trace(tsa_job *job, tsa_job *one)
{
    for (size_t i = 0; i < one->n_ranks; i++) {
        tsa_rank *r = tsa_job_add_rank(job);
        if (!r)
            return -1;
        *r = one->ranks[i];
        memset(&one->ranks[i], 0, sizeof one->ranks[i]);
    }
    one->n_ranks = 0;
    for (size_t i = 0; i < one->n_problems; i++) {
        if (TSA_VEC_PUSH(job->problems, job->n_problems, job->cap_problems, one->problems[i]))
            return -1;
        memset(&one->problems[i], 0, sizeof one->problems[i]);
    }
    return 0;
}

/* Loads paths[0..n) into job on up to threads threads; 0 clean, 1 when a
 * trace had a problem, -1 out of memory. */
static int load_traces(tsa_job *job, const char *dir, char **paths, size_t n, int threads)
{
    trace_loads l = {dir, paths, calloc(n ? n : 1, sizeof *l.jobs),
                     calloc(n ? n : 1, sizeof *l.status)};
    int status = l.jobs && l.status && !tsa_par_for(n, threads, load_one_trace, &l) ? 0 : -1;
    for (size_t i = 0; i < n && status >= 0; i++) {
        if (take_trace(job, l.jobs[i]))
            status = -1;
        else if (l.status[i])
            status = 1;
    }
    for (size_t i = 0; l.jobs && i < n; i++)
        tsa_job_free(l.jobs[i]);
    free(l.jobs);
    free(l.status);
    return status;
}

int tsa_kineto_load_share(const char *dir, int share_index, int share_count, tsa_job **out,
                          char *err, size_t errlen)
{
    return tsa_kineto_load_share_on(dir, share_index, share_count, 1, out, err, errlen);
}

int tsa_kineto_load_share_on(const char *dir, int share_index, int share_count, int threads,
                             tsa_job **out, char *err, size_t errlen)
{
    *out = NULL;
    char **paths;
    size_t n;
    if (list_traces(dir, &paths, &n)) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno ? errno : EIO));
        return 2;
    }
    if (n == 0) {
        snprintf(err, errlen, "%s: no torch.profiler traces found", dir);
        free(paths);
        return 2;
    }
    /* This share's traces, in path order, at the front of paths. */
    size_t mine = 0;
    for (size_t i = 0; i < n; i++)
        if (share_count <= 1 || (int)(i % (size_t)share_count) == share_index) {
            char *p = paths[i];
            paths[i] = paths[mine];
            paths[mine++] = p;
        }
    if (threads < 1)
        threads = tsa_cores_available();
    int status = 0;
    tsa_job *job = tsa_kineto_job_new(dir);
    if (job && (status = load_traces(job, dir, paths, mine, threads)) < 0) {
        tsa_job_free(job);
        job = NULL;
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    if (!job) {
        snprintf(err, errlen, "%s: out of memory", dir);
        return 2;
    }
    *out = job;
    return status;
}

int tsa_kineto_finish(tsa_job *job)
{
    int status = 0;
    tsa_rank *ranks = job->ranks;
    /* Before the world size defaults below: traces of another run stay out. */
    size_t loaded = job->n_ranks, n_ranks = kineto_keep_one_run(job, ranks, loaded);
    if (n_ranks < loaded)
        status = 1;
    job->n_ranks = n_ranks;
    /* Traces without distributedInfo: file order stands in for the rank,
     * except that one process profiled in several cycles (the profiler's
     * schedule with repeat) is one rank, not one per file. */
    int any_rank = 0;
    for (size_t i = 0; i < n_ranks; i++)
        any_rank |= ranks[i].rank >= 0;
    int32_t distinct = 0;
    for (size_t i = 0; i < n_ranks && !any_rank; i++) {
        size_t j = 0;
        while (j < i && !same_process_cycle(&ranks[j], &ranks[i]))
            j++;
        ranks[i].rank = j < i ? ranks[j].rank : distinct++;
    }
    for (size_t i = 0; i < n_ranks; i++)
        if (ranks[i].world_size <= 0)
            ranks[i].world_size = any_rank ? (int32_t)n_ranks : distinct;
    qsort(ranks, n_ranks, sizeof *ranks, cmp_rank);
    /* Two traces of one rank (two profiling windows): keep the first. */
    size_t keep = 0;
    for (size_t i = 0; i < n_ranks; i++) {
        if (keep && ranks[i].rank >= 0 && ranks[i].rank == ranks[keep - 1].rank) {
            status = 1;
            if (tsa_job_add_problem(job, ranks[i].file, 0,
                                    "second trace of rank %d ignored (kept %s)%s", ranks[i].rank,
                                    ranks[keep - 1].file,
                                    any_rank ? ""
                                             : ": the same process, profiled in another cycle"))
                return -1;
            tsa_rank_free_contents(&ranks[i]);
            continue;
        }
        if (keep != i)
            ranks[keep] = ranks[i];
        keep++;
    }
    job->n_ranks = keep;
    return status;
}

int tsa_kineto_load_ex(const char *dir, tsa_job **out, char *err, size_t errlen)
{
    return tsa_kineto_load_on(dir, 0, out, err, errlen);
}

int tsa_kineto_load_on(const char *dir, int threads, tsa_job **out, char *err, size_t errlen)
{
    int status = tsa_kineto_load_share_on(dir, 0, 1, threads, out, err, errlen);
    if (status == 2)
        return 2;
    int fin = tsa_kineto_finish(*out);
    if (fin < 0) {
        snprintf(err, errlen, "%s: out of memory", dir);
        tsa_job_free(*out);
        *out = NULL;
        return 2;
    }
    return status > fin ? status : fin;
}
