/* Running a whole test-bed job (launcher + ranks) for the end-to-end
 * tests, with or without the preload. */
#ifndef TB_JOB_H
#define TB_JOB_H

#include <time.h>

#include "tb_harness.h"

typedef struct tb_job {
    int nranks;
    const char *out_dir;        /* TSCOPE_OUT; NULL leaves it unset */
    const char *expect_prefix;  /* --expect; NULL for none */
    int with_preload;
    const char *const *rank_args; /* extra tsc-testbed-rank options, NULL-terminated */
    const char *const *env;     /* extra environment, NULL-terminated */
    const char *const *launch_args; /* extra launcher options (--env R:K=V), NULL-terminated */
    int timeout_s;
    int (*hook)(int pid, void *arg); /* see tb_run_with */
    void *hook_arg;
} tb_job;

/* A hook (tb_job.hook) that sends a signal once every rank has created
 * <mark>.<rank> (--mark-after) and delay_ms more have passed. */
typedef struct tb_signal_plan {
    const char *mark;  /* wait for <mark>.<rank> of every rank */
    int nranks;
    int sig;
    int whole_group;   /* signal every process, not only the launcher */
    int delay_ms;      /* after all marks */
    struct timespec marked;
    int seen;
} tb_signal_plan;

int tb_signal_when_marked(int pid, void *plan);

/* A test's temporary directory and the usual paths in it: out (TSCOPE_OUT),
 * exp (--expect prefix), mark (--mark-after prefix).  NULL when the
 * end-to-end pieces are not built (tb_e2e_available) or on error. */
typedef struct tb_fixture {
    char *dir;
    char out[4200], exp[4200], mark[4200];
} tb_fixture;

tb_fixture *tb_fixture_new(const char *tag);
void tb_fixture_free(tb_fixture *f);  /* removes the directory */

/* cmocka setup/teardown: *state = a fixture (NULL: the test skips). */
int tb_fixture_setup(void **state);
int tb_fixture_teardown(void **state);

/* Runs the job; fills r (free with tb_result_free). */
int tb_run_job(const tb_job *job, tb_result *r);

/* "rank R checksum X" lines of a job's stdout, sorted, newline-joined;
 * caller frees. */
char *tb_checksum_lines(const char *out);

#endif
