/* Running the stand-in job for real, under the preload, and reading back
 * what tscope recorded (through the analyzer's loader) and what the job
 * and the stand-in CUPTI say they did (their truth files). */
#ifndef STANDIN_RUN_H
#define STANDIN_RUN_H

#include "model/model.h"
#include "tb_harness.h"

typedef struct sj_run {
    char *dir;                /* temporary directory (removed by sj_free) */
    char out[4096];           /* TSCOPE_OUT inside it */
    tb_result res;            /* the launcher's exit status and output */
    tsa_job *job;             /* the dumps, loaded; NULL when none loaded */
} sj_run;

/* 1 when the stand-in and the preload were built (else the caller skips). */
int sj_available(void);

/* Run `ranks` ranks of tsc-standin-job with `args` (NULL-terminated) and
 * extra environment `env` ("K=V" or NULL), then load the dumps.  0 when
 * the job exited 0 and the dumps loaded. */
int sj_run_job(sj_run *r, int ranks, const char *const *args, const char *const *env);

/* The same, with prepare(out) called on TSCOPE_OUT (created) before the
 * job starts (e.g. to leave a trigger file there). */
int sj_run_job_with(sj_run *r, int ranks, const char *const *args, const char *const *env,
                    void (*prepare)(const char *out));

/* A value from a truth file: who is "job" (tsc-standin-job --truth) or
 * "cupti" (STANDIN_TRUTH); -1 when missing. */
long long sj_truth(const sj_run *r, const char *who, int rank, const char *key);

/* The rank's loaded model, or NULL. */
const tsa_rank *sj_rank(const sj_run *r, int rank);

/* Latest value of a dump metadata key of a rank (tscope-report info), or
 * NULL; the buffer is reused by the next call. */
const char *sj_meta(const sj_run *r, int rank, const char *key);

void sj_free(sj_run *r);

#endif
