/* The analysis in plain numbers (tsa_summary), for batch rows and diffs. */
#ifndef TSA_SUMMARY_H
#define TSA_SUMMARY_H

#include "model/analysis.h"

/* Distinct host names among the job's ranks. */
int tsa_job_hosts(const tsa_job *job);

/* a->summary from the finished analysis. */
void tsa_summary_fill(tsa_analysis *a);

#endif
