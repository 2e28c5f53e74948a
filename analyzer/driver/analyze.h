/* tsa_analyze: every pass over one job, in order, into one tsa_analysis
 * (model/analysis.h).  Only commands and batch rows call it; no pass
 * includes it. */
#ifndef TSA_ANALYZE_H
#define TSA_ANALYZE_H

#include "model/analysis.h"
#include "passes/rank_stages.h"

void tsa_analysis_default_options(tsa_analysis_options *opt);

/* NULL options: defaults.  Returns NULL only when out of memory.  Writes
 * into the job: r->steps (step pass), r->clock_offset_ns (cross-rank pass)
 * and kernel.phase; calling it again on the same job recomputes them. */
tsa_analysis *tsa_analyze(tsa_job *job, const tsa_analysis_options *opt);

/* tsa_analyze with the per-rank stages run by `runner` (tscope-report-mpi
 * runs them where each rank was loaded). */
tsa_analysis *tsa_analyze_with(tsa_job *job, const tsa_analysis_options *opt,
                               const tsa_rank_runner *runner);

void tsa_analysis_free(tsa_analysis *a);

#endif
