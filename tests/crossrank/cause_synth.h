/* Synthetic jobs for the cause pass's tests (test_cause.c,
 * test_cause_health.c): 4 or 8 ranks, 40 steps of two intervals between
 * all-reduces, kernels in every interval, one rank's extra work made of
 * what the test says. */
#ifndef CAUSE_SYNTH_H
#define CAUSE_SYNTH_H

#include <stdint.h>

#include "model/analysis.h"

#define SLOW_RANK 2
#define K 10   /* kernels per interval between collectives on a healthy rank */

/* Where the slow rank's extra time goes: longer kernels, more kernels,
 * wider gaps between the same kernels, or idle after the same kernels
 * (every rank's kernels packed at the start of the interval). */
typedef enum fill { FILL_DEVICE, FILL_WORK, FILL_HOST, FILL_PACKED } fill;

/* n_ranks ranks, ranks_per_host a host; sd: each rank's slowdown.  40
 * steps of two intervals; *base: one interval's work. */
tsa_job *cs_make_job(int n_ranks, int ranks_per_host, const double *sd, int64_t *base);

/* Kernels into every interval between two collectives of rank r. */
void cs_add_kernels(tsa_rank *r, fill how, int slow, int64_t base);

/* A job with kernels filled, analysed. */
tsa_analysis *cs_run_sd(fill how, int n_ranks, int ranks_per_host, const double *sd,
                        tsa_job **job_out);
/* 4 ranks on one host, SLOW_RANK slower by `slowdown`. */
tsa_analysis *cs_run(fill how, double slowdown, tsa_job **job_out);

/* The one block, SLOW_RANK's, a straggler against 3 peers, ~30 ms extra. */
const tsa_cause_block *cs_slow_block(const tsa_analysis *a);

/* Frees the analysis and the job with what the tests added to it. */
void cs_done(tsa_analysis *a, tsa_job *job);

#endif
