/* Which ranks and steps the rank charts of the HTML report show: the blamed
 * rank (html_blame.c, html_timeline.c) and the k-th analysed step of a rank
 * (steps counted after its warm-up, so the same k is the same step on
 * every rank). */
#ifndef TSA_HTML_RANKS_H
#define TSA_HTML_RANKS_H

#include <stddef.h>

#include "model/analysis.h"

/* Index into a->job->ranks of the rank the verdict names, else of the named
 * straggler; -1 none. */
long tsa_html_blamed_index(const tsa_analysis *a);

/* Index into r->steps of r's k-th analysed step, or -1. */
long tsa_html_analysed_step(const tsa_rank *r, size_t k);

#endif
