/* The report of one analysis: the terminal text and the --json document
 * (docs/report.md).  color: 1 for ANSI colors. */
#ifndef TSA_REPORT_H
#define TSA_REPORT_H

#include <stdio.h>

#include "model/analysis.h"

void tsa_report_print_text(FILE *out, const tsa_analysis *a, int color);
char *tsa_report_text(const tsa_analysis *a, int color); /* malloc'd, NULL on OOM */
char *tsa_report_json(const tsa_analysis *a);   /* malloc'd, NULL on OOM */

#endif
