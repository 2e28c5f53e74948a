/* The charts of the HTML report (docs/html.md), one function each, all
 * reading a finished analysis.  Each writes one <figure> with an SVG whose
 * id is given in the comment (the browser test looks for these). */
#ifndef TSA_HTML_CHARTS_H
#define TSA_HTML_CHARTS_H

#include <stdio.h>

#include "model/analysis.h"

/* The page's head: policy (no script, no fetch), title (escaped), styles;
 * the body is open after it (html_report.c). */
void tsa_html_page_begin(FILE *out, const char *title);

/* "budget-waterfall": the budget lines stacked end to end up to wall. */
void tsa_html_budget(FILE *out, const tsa_analysis *a);

/* "heatmap-step" and "heatmap-idle": rank x step of step time and of the
 * time each step spent not computing; ranks and steps in bands when many. */
void tsa_html_heatmaps(FILE *out, const tsa_analysis *a);

/* "blamed-rank": the blamed rank's time computing per step against the
 * median rank's. */
void tsa_html_blame(FILE *out, const tsa_analysis *a);

/* "rank-timeline": one representative step of the blamed rank and of the
 * median rank as lanes (kernels by category, NCCL calls, GPU idle). */
void tsa_html_timeline(FILE *out, const tsa_analysis *a);

/* "memory-over-time": reserved device memory of the ranks with the
 * highest and the lowest peak. */
void tsa_html_memory(FILE *out, const tsa_analysis *a);

/* "kernel-categories": GPU kernel time by category. */
void tsa_html_kernels(FILE *out, const tsa_analysis *a);

/* "collective-sizes": collective time by operation and message size. */
void tsa_html_collectives(FILE *out, const tsa_analysis *a);

#endif
