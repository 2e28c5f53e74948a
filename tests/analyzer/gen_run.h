/* Generate -> load -> analyse of one job (gen_job.h) in the test
 * program's scratch directory (gen_tmpdir.h), for the tests that check
 * analyses of generated jobs.  Include after cmocka.h. */
#ifndef TSA_TEST_GEN_RUN_H
#define TSA_TEST_GEN_RUN_H

#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"
#include "gen_job.h"
#include "gen_tmpdir.h"
#include "job_load.h"

typedef struct run {
    tsa_job *job;
    tsa_analysis *a;
    gen_truth t;
} run;

/* Writes the job into tmpdir/name, loads it (no problems, every rank) and
 * analyses it with the default options. */
static void generate_and_analyze(gen_options *o, const char *name, run *out)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    o->dir = dir;
    assert_int_equal(gen_job(o, &out->t), 0);
    tsa_load_options lo = {.quiet = 1};
    assert_int_equal(tsa_job_load(dir, &lo, &out->job), 0);
    assert_int_equal(out->job->n_problems, 0);
    assert_int_equal(out->job->n_ranks, (size_t)o->ranks);
    out->a = tsa_analyze(out->job, NULL);
    assert_non_null(out->a);
}

static void done(run *r)
{
    tsa_analysis_free(r->a);
    tsa_job_free(r->job);
}

#endif
