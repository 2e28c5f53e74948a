/* tscope-report-mpi: `mpirun -n K tscope-report-mpi DIR [report options]`.
 *
 * Process p loads the main run's dumps at positions p, p+K, p+2K, ...
 * (job_load.h share mode), so loading and decoding, the bulk of the cost,
 * is spread over K processes and each holds only its share of the raw
 * dumps' decoded records.  Every process then ships its loaded ranks
 * (share_pack.h) to process 0, which puts ranks and problems back in the
 * order a single process would have loaded them, and runs the same
 * analysis and printer as `tscope-report` (report_cli.h): same answer. */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/dup_ranks.h"
#include "load/job_build.h"
#include "load/job_text.h"
#include "cmds/report_cli.h"
#include "reader/dump_reader.h"
#include "mpi_runner.h"
#include "load/share_pack.h"
#include "load/kineto_load.h"

#define PROG "tscope-report-mpi"
#define TAG_SHARE 1

/* The share, lean; a length of 0 says this process failed to pack it. */
static int send_share(const tsa_job *job, size_t setup, int me, size_t *bytes)
{
    tsa_pack_buf b = {0};
    if (tsa_share_pack(job, setup, (uint32_t)me, &b))
        b.len = 0;
    *bytes = b.len;
    int rc = tsa_mpi_send_buf(&b, 0, TAG_SHARE);
    tsa_pack_buf_free(&b);
    return rc;
}

/* Appends process q's share to job; *n_ranks: how many ranks it holds.
 * -1 when q failed or sent garbage. */
static int recv_share(int q, tsa_job *job, size_t *n_ranks)
{
    unsigned char *data = NULL;
    size_t len = 0, before = job->n_ranks;
    int rc = tsa_mpi_recv_buf(&data, &len, q, TAG_SHARE) || !len ||
             tsa_share_unpack(data, len, job);
    free(data);
    *n_ranks = job->n_ranks - before;
    return rc ? -1 : 0;
}

/* ---- putting the merged shares back in single-process load order ---- */

typedef struct path_pos {
    const char *path;
    size_t pos;                /* index in tsr_list_dumps order */
} path_pos;

static int by_path(const void *a, const void *b)
{
    return strcmp(((const path_pos *)a)->path, ((const path_pos *)b)->path);
}

static size_t position_of(const path_pos *v, size_t n, const char *path)
{
    path_pos key = {.path = path ? path : ""};
    const path_pos *hit = bsearch(&key, v, n, sizeof *v, by_path);
    return hit ? hit->pos : SIZE_MAX;
}

typedef struct keyed {
    size_t pos, seq;           /* seq: arrival order, keeps the sort stable */
    size_t index;
} keyed;

static int by_pos(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Permutes n elements of `elem` bytes at base into the order of k. */
static int permute(void *base, size_t n, size_t elem, const keyed *k)
{
    if (n == 0) /* base may be NULL (a job without problems) */
        return 0;
    unsigned char *tmp = malloc(n * elem + 1);
    if (!tmp)
        return -1;
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + i * elem, (unsigned char *)base + k[i].index * elem, elem);
    memcpy(base, tmp, n * elem);
    free(tmp);
    return 0;
}

/* Ranks in dump path order; problems after the first `setup` ones grouped
 * by their dump in path order (each dump's own problems keep their order). */
static int restore_order(tsa_job *job, size_t setup, int kineto)
{
    char **paths = NULL;
    size_t n_paths = 0;
    if ((kineto ? tsa_kineto_list : tsr_list_dumps)(job->dir, &paths, &n_paths))
        return -1;
    path_pos *pp = malloc((n_paths + 1) * sizeof *pp);
    size_t nk = job->n_ranks > job->n_problems ? job->n_ranks : job->n_problems;
    keyed *k = malloc((nk + 1) * sizeof *k);
    int rc = -1;
    if (!pp || !k)
        goto out;
    for (size_t i = 0; i < n_paths; i++)
        pp[i] = (path_pos){paths[i], i};
    qsort(pp, n_paths, sizeof *pp, by_path);
    for (size_t i = 0; i < job->n_ranks; i++)
        k[i] = (keyed){position_of(pp, n_paths, job->ranks[i].file), i, i};
    qsort(k, job->n_ranks, sizeof *k, by_pos);
    if (permute(job->ranks, job->n_ranks, sizeof *job->ranks, k))
        goto out;
    size_t np = job->n_problems > setup ? job->n_problems - setup : 0;
    for (size_t i = 0; i < np; i++)
        k[i] = (keyed){position_of(pp, n_paths, job->problems[setup + i].file), i, i};
    qsort(k, np, sizeof *k, by_pos);
    rc = permute(job->problems + setup, np, sizeof *job->problems, k);
out:
    free(pp);
    free(k);
    tsr_free_paths(paths, n_paths);
    return rc;
}

/* ------------------------------------------------------------------ */

/* Parses on every process; only process 0 speaks. */
static int parse_quietly(int me, int argc, char **argv, tsa_report_args *ra)
{
    int saved_out = -1, saved_err = -1;
    if (me != 0) {
        int null = open("/dev/null", O_WRONLY);
        fflush(stdout);
        fflush(stderr);
        saved_out = dup(1);
        saved_err = dup(2);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
            close(null);
        }
    }
    int rc = tsa_report_parse(PROG, argc, argv, ra);
    if (me != 0) {
        fflush(stdout);
        fflush(stderr);
        if (saved_out >= 0) dup2(saved_out, 1), close(saved_out);
        if (saved_err >= 0) dup2(saved_err, 2), close(saved_err);
    }
    return rc;
}

/* TSCOPE_MPI_TIMING=1: each process prints its phase times to stderr
 * (docs/scale.md was measured with it). */
static void phase(int me, const char *what, double *t0)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("TSCOPE_MPI_TIMING");
        on = e && *e && strcmp(e, "0");
    }
    double now = MPI_Wtime();
    if (on)
        fprintf(stderr, PROG "[%d]: %s %.3f s\n", me, what, now - *t0);
    *t0 = now;
}

/* A process other than 0: ships its share lean, then runs the per-rank
 * stages on its ranks until process 0 is done. */
static int serve_share(tsa_job *job, size_t setup, int me, const char *marker, double *t0)
{
    size_t bytes = 0;
    if (send_share(job, setup, me, &bytes))
        MPI_Abort(MPI_COMM_WORLD, 2);
    char what[96];
    snprintf(what, sizeof what, "send lean share (%zu bytes, %zu ranks)", bytes, job->n_ranks);
    phase(me, what, t0);
    tsa_stage_host h;
    if (tsa_stage_host_init(&h, job, marker)) {
        fprintf(stderr, PROG "[%d]: out of memory\n", me);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (tsa_mpi_host_serve(&h))
        MPI_Abort(MPI_COMM_WORLD, 2);
    phase(me, "stages", t0);
    tsa_stage_host_free(&h);
    tsa_job_free(job);
    return -1; /* process 0 decides the exit status */
}

/* Process 0: gathers the lean shares, puts them in single-process order
 * and analyses with the stages run where the ranks are.  The caller tells
 * the hosts it is done. */
static int analyse_at_root(tsa_job *job, size_t setup, int kineto, int procs,
                           tsa_report_args *ra, double *t0)
{
    size_t *held = calloc((size_t)procs, sizeof *held);
    tsa_mpi_root root = {procs, calloc((size_t)procs, sizeof *root.maps), {0}};
    int rc = 2;
    if (!held || !root.maps) {
        fprintf(stderr, PROG ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int q = 1; q < procs; q++)
        if (recv_share(q, job, &held[q])) {
            fprintf(stderr, PROG ": process %d's share could not be gathered\n", q);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    phase(0, "gather lean shares", t0);
    /* torch.profiler traces: the choices tscope-report makes over all of
     * them (one run, ranks, one trace per rank) once they are together. */
    if (restore_order(job, setup, kineto) ||
        (kineto && (tsa_kineto_finish(job) < 0 || tsa_job_make_text_visible(job)))) {
        fprintf(stderr, PROG ": out of memory putting the shares in order\n");
        tsa_job_free(job);
    } else if (!job->n_ranks) {
        fprintf(stderr, PROG ": %s: no readable dump%s%s%s\n", ra->dir,
                job->n_problems ? " (" : "", job->n_problems ? job->problems[0].message : "",
                job->n_problems ? ")" : "");
        tsa_job_free(job);
    } else if (!kineto && tsa_job_drop_duplicate_ranks(job)) {
        fprintf(stderr, PROG ": %s: out of memory while loading\n", ra->dir);
        tsa_job_free(job);
    } else {
        if (!kineto)
            tsa_job_sort_ranks(job);
        if (tsa_host_maps_build(job, held, procs, root.maps)) {
            fprintf(stderr, PROG ": out of memory\n");
            tsa_job_free(job);
        } else {
            ra->runner = tsa_mpi_root_runner(&root);
            rc = tsa_report_finish(PROG, job, ra);
            phase(0, "analyse and print", t0);
        }
    }
    tsa_host_maps_free(root.maps, procs);
    free(held);
    return rc;
}

static int run(int me, int procs, int argc, char **argv)
{
    double t0 = MPI_Wtime();
    tsa_report_args ra;
    int rc = parse_quietly(me, argc, argv, &ra);
    if (rc >= 0)
        return rc;
    size_t setup = 0;
    ra.lopt.share_index = me;
    ra.lopt.share_count = procs;
    ra.lopt.setup_problems = &setup;
    tsa_job *job = NULL;
    char err[512] = "";
    /* Names made visible where they were read, as tscope-report's loader
     * does (job_text.h): what travels and what is printed are clean. */
    int kineto = tsa_kineto_dir(ra.dir) > 0; /* as tscope-report decides */
    int failed = (kineto ? tsa_kineto_load_share(ra.dir, me, procs, &job, err, sizeof err) == 2
                         : tsa_job_load_ex(ra.dir, &ra.lopt, &job, err, sizeof err) != 0) ||
                 tsa_job_make_text_visible(job) != 0,
        any_failed = 0;
    /* Listing failures are the same everywhere; out of memory may not be. */
    phase(me, "load", &t0);
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed) {
        if (me == 0)
            fprintf(stderr, PROG ": %s\n", failed ? err : "a process failed to load its share");
        tsa_job_free(job);
        return 2;
    }
    if (me != 0)
        return serve_share(job, setup, me, ra.opt.step_marker, &t0);
    rc = analyse_at_root(job, setup, kineto, procs, &ra, &t0);
    tsa_mpi_root_done();
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = 0, procs = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    int rc = run(me, procs, argc, argv);
    fflush(stdout);
    /* Every process exits with process 0's status, so mpirun reports it. */
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
