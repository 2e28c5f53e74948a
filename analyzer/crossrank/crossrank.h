/* The cross-rank pass over one job (its results: model/xrank.h). */
#ifndef TSA_CROSSRANK_H
#define TSA_CROSSRANK_H

#include "model/findings.h"
#include "model/model.h"
#include "model/xrank.h"

void tsa_xrank_default_options(tsa_xrank_options *opt);

/* Align clocks (sets job->ranks[i].clock_offset_ns), attribute waiting,
 * classify, and append findings.  Uses job->ranks[i].steps when the step
 * pass filled them.  findings may be NULL.  Returns 0, or -1 when out of
 * memory (out is then empty and safe to free). */
int tsa_xrank_run(tsa_job *job, const tsa_xrank_options *opt,
                  tsa_xrank_result *out, tsa_findings *findings);

void tsa_xrank_free(tsa_xrank_result *r);

#endif
