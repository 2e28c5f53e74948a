/* What the cause rules share (cause.c and the rule files beside it): the
 * measures of the ranks compared so far, the peers' median of a figure,
 * and one cause's candidate before it is named. */
#ifndef TSA_CAUSE_PEERS_H
#define TSA_CAUSE_PEERS_H

#include <stddef.h>

#include "cause_measure.h"
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

/* Measures of the ranks used so far, by rank index (lazily). */
typedef struct cause_ctx {
    tsa_analysis *a;
    const tsa_rank_runner *runner; /* reads a remote rank again */
    cm_rank *m;
    uint8_t *done;
    double *scratch;     /* n_ranks figures */
    int without_p2p;     /* a rank's step less its sends and receives (pipeline
                          * stages: there they wait for the other stages) */
} cause_ctx;

/* The measures of rank index i (read again through the runner when it is
 * remote); NULL when out of memory or it cannot be read. */
const cm_rank *measure(cause_ctx *c, size_t i);

typedef double (*figure_fn)(const cm_rank *m);

/* Median of a figure over ranks (skipping NAN), NAN when none has it. */
double median_of(cause_ctx *c, const size_t *idx, size_t n, figure_fn f);

/* own exceeds peers by TSA_TH_CAUSE_REL (both known). */
int rel_above(double own, double peers);

/* One blamed rank against its peers: a cause's explained time per step
 * and its comparison, before the pass names it (evidence empty: no case). */
typedef struct candidate {
    double explained, own, peers;
    const char *metric;         /* what own and peers measure */
    const char *fix;            /* NULL: the kind's usual fix (cause.c) */
    char evidence[TSA_CAUSE_TEXT];
} candidate;

/* Appends printf-style text at *at of buf (cap bytes), keeping *at valid
 * when the text does not fit. */
void cause_words(char *buf, size_t cap, int *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
