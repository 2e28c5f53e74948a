/* GPU idle by host activity in the reports (idle_report.c). */
#ifndef TSA_IDLE_REPORT_H
#define TSA_IDLE_REPORT_H

#include <stdio.h>

#include "model/analysis.h"

struct cJSON;

/* Whether budget line l was measured for this analysis: as
 * tsa_budget_line_measured, and the data stall of a host-only input whose
 * DataLoader spans were read. */
int tsa_line_measured(const tsa_analysis *a, tsa_budget_line l);

/* Lines under the budget: each cause's time per rank and share of wall. */
void tsa_idle_print(FILE *out, const tsa_analysis *a);
/* "idle_causes": {cause: ns, ..., "host_records": bool}. */
void tsa_idle_add_json(struct cJSON *root, const tsa_analysis *a);

#endif
