/* Run diff: two analysed runs side by side.  Times are normalised to
 * milliseconds per rank-step (a line's rank-nanoseconds / ranks / analysed
 * steps), so runs of different length or size compare. */
#ifndef TSA_DIFF_H
#define TSA_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

#define TSA_DIFF_MAX_LINES 16
#define TSA_DIFF_MAX_COLLS 16

/* What one run contributes to a diff (filled from an analysis, or by hand
 * in tests).  Names are borrowed static strings or the label. */
typedef struct tsa_diff_side {
    const char *label;              /* the directory */
    size_t ranks, hosts, steps;     /* steps: analysed steps */
    int64_t median_step_ns;
    int no_steps;                   /* no steps found: steps is the one window */
    double mfu;                     /* NAN unknown */
    double exposed_comm_share, data_stall_share;
    size_t n_lines;
    const char *line_label[TSA_DIFF_MAX_LINES];
    int64_t line_ns[TSA_DIFF_MAX_LINES];     /* rank-ns over the analysed steps */
    int64_t phase_ns[TSA_PHASE_COUNT];        /* rank-ns */
    int64_t kcat_ns[TSA_KCAT_COUNT];          /* rank-ns */
    size_t n_colls;
    const char *coll_name[TSA_DIFF_MAX_COLLS];
    int64_t coll_ns[TSA_DIFF_MAX_COLLS];      /* rank-ns */
    double coll_busbw[TSA_DIFF_MAX_COLLS];    /* GB/s */
    int32_t straggler_rank;                   /* -1 none */
    const char *straggler_host;
    const char *device;                       /* GPU name, NULL unknown */
} tsa_diff_side;

typedef enum tsa_diff_unit {
    TSA_DIFF_MS_PER_STEP = 0,   /* ms per rank-step */
    TSA_DIFF_GBPS,
    TSA_DIFF_SHARE,             /* 0..1, printed as percent */
    TSA_DIFF_COUNT_UNIT,
} tsa_diff_unit;

typedef struct tsa_diff_row {
    const char *section;        /* "step", "budget", "phases", "kernels", "collectives", "shares" */
    char name[64];
    double a, b;                /* NAN when the run lacks it */
    tsa_diff_unit unit;
} tsa_diff_row;

typedef struct tsa_diff {
    tsa_diff_row *rows;
    size_t n_rows;
    double speedup;             /* A's median step / B's; NAN unknown */
    int most;                   /* row that changed most (ms per step), -1 none */
    char changed_most[256];     /* one line about it */
} tsa_diff;

/* Returns 0, or -1 out of memory. */
int tsa_diff_compute(const tsa_diff_side *a, const tsa_diff_side *b, tsa_diff *out);
void tsa_diff_print_text(FILE *out, const tsa_diff_side *a, const tsa_diff_side *b,
                         const tsa_diff *d);
/* One self-contained HTML page (html_diff.c, docs/html.md). */
void tsa_diff_print_html(FILE *out, const tsa_diff_side *a, const tsa_diff_side *b,
                         const tsa_diff *d);
/* malloc'd JSON text (docs/views.md), NULL out of memory. */
char *tsa_diff_json(const tsa_diff_side *a, const tsa_diff_side *b, const tsa_diff *d);
void tsa_diff_free(tsa_diff *d);

/* "N steps analysed", or "no steps" for a run without steps; buf. */
const char *tsa_diff_steps_text(char *buf, size_t cap, const tsa_diff_side *s);

#endif
