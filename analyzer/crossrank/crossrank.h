/* The cross-rank pass: one clock for all ranks, who made whom wait, and
 * whether a straggler, an imbalance or a slow host explains it. */
#ifndef TSA_CROSSRANK_H
#define TSA_CROSSRANK_H

#include <stdint.h>
#include <stdio.h>

#include "findings.h"
#include "model.h"

typedef struct tsa_xrank_options {
    double z_threshold;     /* persistence z-score to name a straggler (default 3) */
    double min_slowdown;    /* minimum relative slowdown, e.g. 0.03 (default) */
} tsa_xrank_options;

void tsa_xrank_default_options(tsa_xrank_options *opt);

typedef struct tsa_rank_blame {
    int32_t rank;
    const char *host;           /* borrowed from the job */
    int64_t clock_offset_ns;    /* add to this rank's times for the common clock */
    uint64_t collectives;       /* collective instances this rank took part in */
    uint64_t arrived_last;      /* instances where it arrived last */
    double arrived_last_share;
    int64_t wait_ns;            /* its own waiting for later peers */
    int64_t transfer_ns;
    int64_t blame_ns;           /* waiting it caused others (summed over them) */
    double compute_rel_median;  /* its median per-step compute / the median rank's */
} tsa_rank_blame;

typedef struct tsa_straggler {
    int32_t rank;
    const char *host;
    double z;
    double slowdown;            /* relative to the median rank, 0.10 = 10% slower */
    int64_t wall_lost_ns;       /* others' waiting it caused over the run */
    int64_t whatif_saved_ns;    /* job time saved if it ran at the median speed */
    int64_t whatif_step_saved_ns;
    int intermittent;           /* 1: slow in bursts, see slow_steps */
    uint32_t *slow_steps; size_t n_slow_steps;
} tsa_straggler;

typedef struct tsa_xrank_result {
    tsa_rank_blame *ranks; size_t n_ranks;   /* in job rank order */
    int64_t clock_residual_ns;               /* residual skew after alignment */
    uint64_t instances;                      /* collective instances matched */
    tsa_straggler *straggler;                /* NULL when none is named */
    int imbalance;                           /* several slow ranks: load imbalance */
    int32_t *imbalanced_ranks; size_t n_imbalanced;
    const char *slow_host;                   /* all ranks of one host slow, else NULL */
} tsa_xrank_result;

/* Align clocks (sets job->ranks[i].clock_offset_ns), attribute waiting,
 * classify, and append findings.  Uses job->ranks[i].steps when the step
 * pass filled them.  Returns 0, or -1 when out of memory. */
int tsa_xrank_run(tsa_job *job, const tsa_xrank_options *opt,
                  tsa_xrank_result *out, tsa_findings *findings);

void tsa_xrank_free(tsa_xrank_result *r);

/* Terminal section: per rank compute, wait, blame, last-arrival share,
 * offset; the straggler marked.  color: 1 to use ANSI colors. */
void tsa_xrank_print(FILE *out, const tsa_xrank_result *r, int color);

/* Adds "straggler", "imbalance" and "clock" to a report's JSON object
 * (a cJSON *, typed void * so this header needs no cJSON). */
void tsa_xrank_add_json(void *cjson_root, const tsa_xrank_result *r);

#endif
