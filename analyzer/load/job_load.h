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

#endif
