/* The job-level step plan over the per-rank stages (rank_stages.h). */
#ifndef TSA_JOB_STEPS_H
#define TSA_JOB_STEPS_H

#include "model/analysis.h"
#include "rank_stages.h"

/* Stage 1 on every rank (run), then the job's step method (the most common),
 * warm-up and analysed steps, the partial-input note, and stage 2 on every
 * rank with that plan.  -1 on failure. */
int tsa_job_find_steps(tsa_analysis *a, const tsa_rank_runner *run);

/* Median step time per rank and of the job, and the coefficient of
 * variation of all analysed steps.  -1 on OOM. */
int tsa_job_step_stats(tsa_analysis *a);

#endif
