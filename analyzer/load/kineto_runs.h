/* One run among the traces of a directory. */
#ifndef TSA_KINETO_RUNS_H
#define TSA_KINETO_RUNS_H

#include <stddef.h>

#include "model/model.h"

/* Keep the traces of one run among ranks[0..n) (kineto_runs.c): those that
 * agree with the largest group on declared world size and device.  The
 * others are freed, and named in job->other_runs and job->problems.
 * Returns how many stay (moved to the front). */
size_t kineto_keep_one_run(tsa_job *job, tsa_rank *ranks, size_t n);

#endif
