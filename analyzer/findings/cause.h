/* The cause pass: for each rank or host the cross-rank pass blames, the
 * causes its records support against its peers' (model/cause.h). */
#ifndef TSA_FINDINGS_CAUSE_H
#define TSA_FINDINGS_CAUSE_H

#include "cause_peers.h"   /* the thresholds */
#include "model/analysis.h"
#include "passes/rank_stages.h"

/* Fills a->cause after the cross-rank pass and the per-rank stages.
 * 0, or -1 when out of memory. */
int tsa_cause_run(tsa_analysis *a, const tsa_rank_runner *runner);
void tsa_cause_free(tsa_cause_result *r);

#endif
