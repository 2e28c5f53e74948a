/* The cause pass: for each rank or host the cross-rank pass blames, the
 * causes its records support against its peers' (model/cause.h). */
#ifndef TSA_FINDINGS_CAUSE_H
#define TSA_FINDINGS_CAUSE_H

#include "model/analysis.h"
#include "passes/rank_stages.h"

/* A cause is named when it explains at least this share of the blamed
 * rank's extra work per step... */
#define TSA_TH_CAUSE_SHARE 0.2
/* ... and its own figure differs from its peers' by at least this much
 * (relative), so run-to-run noise on a quiet rank names nothing. */
#define TSA_TH_CAUSE_REL 0.03
/* Without GPU records, more main-thread CPU is work only on a rank whose
 * main thread is on the CPU for at least this share of its step (a
 * sleeping rank's few CPU ticks are sampling noise, not its work). */
#define TSA_TH_CAUSE_CPU_BOUND 0.1
/* ... and its main thread's CPU per step must exceed its peers' by this
 * much: a figure read in 10 ms ticks every 100 ms, which also holds the
 * CPU its NCCL calls take, differs by up to ~10% between equal ranks. */
#define TSA_TH_CAUSE_CPU_REL 0.15
/* Peers measured per blamed rank, spread over the rank order: the medians
 * settle long before, and a 1,000-rank job should not read every rank. */
#define TSA_CAUSE_PEERS_MAX 16

/* Fills a->cause after the cross-rank pass and the per-rank stages.
 * 0, or -1 when out of memory. */
int tsa_cause_run(tsa_analysis *a, const tsa_rank_runner *runner);
void tsa_cause_free(tsa_cause_result *r);

#endif
