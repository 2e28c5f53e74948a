/* A folder of torch.profiler traces loaded and analysed with the default
 * options, for the verdict tests (corpus, evidence).  Include after
 * <cmocka.h>: it asserts what it needs. */
#ifndef VIEWS_TRACE_ANALYSIS_H
#define VIEWS_TRACE_ANALYSIS_H

#include "driver/analyze.h"
#include "load/job_build.h"
#include "load/kineto_load.h"

static inline tsa_analysis *tu_analyze_traces(const char *dir, tsa_job **job)
{
    int rc = tsa_kineto_load(dir, job);
    assert_true(rc == 0 || rc == 1);
    tsa_analysis_options o;
    tsa_analysis_default_options(&o);
    tsa_analysis *a = tsa_analyze(*job, &o);
    assert_non_null(a);
    return a;
}

#endif
