/* The budget's thinning steps in the reports (records_cut_report.c;
 * docs/self-cost.md): where per-kernel records stop and the window ends,
 * where NCCL plugin proxy and channel events stop.  Nothing when no rank
 * took such a level (the reports of every other run stay as they were). */
#ifndef TSA_RECORDS_CUT_REPORT_H
#define TSA_RECORDS_CUT_REPORT_H

#include <stdio.h>

#include "model/analysis.h"

struct cJSON;

/* One line each, indented by two spaces. */
void tsa_records_cut_print(FILE *out, const tsa_analysis *a);
/* "records_cut": {"per_kernel": {...}, "nccl_plugin": {...}} at the top. */
void tsa_records_cut_add_json(struct cJSON *root, const tsa_analysis *a);
/* The same lines in the HTML page. */
void tsa_records_cut_html(FILE *out, const tsa_analysis *a);

#endif
