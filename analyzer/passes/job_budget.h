/* The job's budget from the ranks' (after stage 3 of the per-rank stages). */
#ifndef TSA_JOB_BUDGET_H
#define TSA_JOB_BUDGET_H

#include "model/analysis.h"
#include "rank_digest.h"

/* Sums the ranks' budgets, overlaps and kernel categories (saturating),
 * the longest rank window, whether GPU records drove the analysis or no
 * rank had any GPU or NCCL record, and the MFU. */
void tsa_job_budget(tsa_analysis *a);

#endif
