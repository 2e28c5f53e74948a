/* tscope's own cost in the reports (self_cost_report.c; docs/self-cost.md):
 * per rank and for the job, next to the budget. */
#ifndef TSA_SELF_COST_REPORT_H
#define TSA_SELF_COST_REPORT_H

#include <stdio.h>

#include "model/analysis.h"

struct cJSON;

/* 1 when a rank of the job recorded its cost (dumps of older tscope do
 * not: then the reports say nothing of it, `info` says "not recorded"). */
int tsa_self_cost_any(const tsa_job *job);

/* The job's line, then one per rank (at most max_lines) with the budget's
 * level changes under it. */
void tsa_self_cost_report_print(FILE *out, const tsa_analysis *a, size_t max_lines);

/* "self_cost": {job figure} at the top, and per rank object i's
 * "self_cost" (null where not recorded). */
void tsa_self_cost_add_json(struct cJSON *root, const tsa_analysis *a);
void tsa_self_cost_rank_json(struct cJSON *rank_object, const tsa_analysis *a, size_t i);

/* The same lines as the text report, in the HTML page (nothing when no
 * rank recorded it). */
void tsa_self_cost_html(FILE *out, const tsa_analysis *a);

#endif
