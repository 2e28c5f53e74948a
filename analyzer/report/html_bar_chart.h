/* A horizontal bar chart for the HTML pages (the report's kernel and
 * collective charts, the batch fleet page): one bar per label, biggest
 * first, each with its value in the chart's unit and a note. */
#ifndef TSA_HTML_BAR_CHART_H
#define TSA_HTML_BAR_CHART_H

#include <stddef.h>
#include <stdio.h>

typedef struct tsa_html_bar {
    char label[96];             /* left of the bar (escaped) */
    char note[160];             /* after the value (escaped) */
    double v;                   /* in the chart's unit */
    const char *cls;            /* the bar's CSS class (a fixed name, not input); NULL neutral */
} tsa_html_bar;

typedef struct tsa_html_bar_spec {
    const char *id, *title, *reading;
    const char *unit;           /* after each bar's value: "s", "jobs" */
    const char *axis;           /* the axis label: "seconds per rank (analysis window)" */
    const char *empty;          /* said instead of bars when there are none */
    int integer;                /* values are counts: printed without decimals */
    const char *unit_one;       /* integer charts: the unit after a 1 ("job"); NULL unit */
} tsa_html_bar_spec;

/* Sorts bars[0..n) biggest first and draws them. */
void tsa_html_bar_chart(FILE *out, const tsa_html_bar_spec *spec, tsa_html_bar *bars, size_t n);

/* Biggest first (qsort order of tsa_html_bar). */
int tsa_html_bar_cmp(const void *x, const void *y);

#endif
