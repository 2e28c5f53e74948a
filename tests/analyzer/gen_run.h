/* Generate -> load -> analyse of one job (gen_job.h) in the test
 * program's scratch directory (gen_tmpdir.h), for the tests that check
 * analyses of generated jobs.  Include after cmocka.h. */
#ifndef TSA_TEST_GEN_RUN_H
#define TSA_TEST_GEN_RUN_H

#include <stdio.h>
#include <stdlib.h>

#include "model/analysis.h"
#include "gen_job.h"
#include "gen_tmpdir.h"
#include "load/job_load.h"
#include "driver/analyze.h"

typedef struct run {
    tsa_job *job;
    tsa_analysis *a;
    gen_truth t;
    char dir[512];   /* where the job was written */
} run;

/* Writes the job into tmpdir/name. */
static inline void generate(gen_options *o, const char *name, run *out)
{
    snprintf(out->dir, sizeof out->dir, "%s/%s", tmpdir, name);
    o->dir = out->dir;
    assert_int_equal(gen_job(o, &out->t), 0);
}

/* Loads what is in out->dir now (a test may have added files) and
 * analyses it with opt (NULL: the defaults). */
static inline void load_and_analyze(run *out, const tsa_analysis_options *opt)
{
    tsa_load_options lo = {.quiet = 1};
    assert_int_equal(tsa_job_load(out->dir, &lo, &out->job), 0);
    out->a = tsa_analyze(out->job, opt);
    assert_non_null(out->a);
}

/* Generate, load and analyse with the default options; the job loads
 * with no problems and every rank. */
static inline void generate_and_analyze(gen_options *o, const char *name, run *out)
{
    generate(o, name, out);
    load_and_analyze(out, NULL);
    assert_int_equal(out->job->n_problems, 0);
    assert_int_equal(out->job->n_ranks, (size_t)o->ranks);
}

static inline void done(run *r)
{
    tsa_analysis_free(r->a);
    tsa_job_free(r->job);
}

#endif
