/* Loading a job directory into the model (analyzer/model.h).
 *
 * A directory may hold dumps of several runs (a restarted job, an old run
 * left behind): the run id with the most dumps is loaded, the other ids are
 * listed in job->other_runs and never mixed in.  Loading streams each dump
 * once into flat per-rank arrays (no per-event allocation) and sorts each
 * array once at the end. */
#ifndef TSA_JOB_LOAD_H
#define TSA_JOB_LOAD_H

#include "model/model.h"

typedef struct tsa_load_options {
    const char *run_id;   /* load this run id instead of the largest; NULL auto */
    int quiet;            /* 1: do not print progress/problems to stderr */
    int lean;             /* 1: keep only the API records that can matter to the
                           * analysis (those not entirely inside GPU-busy time),
                           * after using all of them to find launch threads */
    /* Share mode (tscope-report-mpi), share_count > 0: load only the main
     * run's dumps whose position i (in path order) has i % share_count ==
     * share_index; list the setup problems (files that are not dumps) only
     * when share_index is 0; leave duplicate ranks and rank order to the
     * caller, which merges the shares; an empty share is not an error. */
    int share_index, share_count;
    size_t *setup_problems; /* share mode, not NULL: receives how many problems
                             * were listed before the first dump was loaded */
    int jobs;             /* threads reading torch.profiler traces; < 1: the
                           * cores available */
} tsa_load_options;

/* Loads the main run of `dir`.  Returns 0 with *out set (problems met on the
 * way are in (*out)->problems), or -1 when nothing is loadable: then *out is
 * NULL and `err` (when not NULL) receives a one-line reason.  Exit-code
 * mapping for commands: see tsa_job_load_status. */
int tsa_job_load(const char *dir, const tsa_load_options *opt, tsa_job **out);

/* Like tsa_job_load, with the reason for a failure copied into err. */
int tsa_job_load_ex(const char *dir, const tsa_load_options *opt, tsa_job **out,
                    char *err, size_t err_len);

void tsa_job_free(tsa_job *job);

/* tsa_job_load_ex in its three steps, for a caller that loads the dumps
 * itself (one at a time, on several threads: driver/stream_load.h).
 *
 * tsa_job_plan: a job with no rank yet (run id, other runs, files that
 * are not dumps as problems) and the paths of the main run's dumps in
 * path order (*paths: free with tsr_free_paths).  -1 with err on failure. */
int tsa_job_plan(const char *dir, const tsa_load_options *opt, tsa_job **job, char ***paths,
                 size_t *n_paths, char *err, size_t err_len);
/* Per-loader scratch handed from one dump to the next (one per thread). */
typedef struct tsa_load_scratch tsa_load_scratch;
tsa_load_scratch *tsa_load_scratch_new(void);
void tsa_load_scratch_free(tsa_load_scratch *s);
/* Appends the rank of one dump and its problems to job.  1 loaded, 0
 * unreadable (a problem says why, no rank), -1 out of memory. */
int tsa_job_load_dump(tsa_job *job, const char *path, const tsa_load_options *opt,
                      tsa_load_scratch *s);
/* After the last dump (loaded: how many gave a rank): duplicates dropped,
 * ranks sorted.  -1 with err when none loaded or out of memory. */
int tsa_job_plan_done(const char *dir, tsa_job *job, size_t loaded, char *err, size_t err_len);

#endif
