/* What the cross-rank pass (crossrank/crossrank.h) finds: one clock for all
 * ranks, who made whom wait, and whether a straggler, an imbalance or a
 * slow host explains it (types only).
 *
 * docs/findings.md explains the method and every finding (DIST.*) and JSON
 * key this pass produces. */
#ifndef TSA_XRANK_H
#define TSA_XRANK_H

#include <stdint.h>
#include <stdio.h>

#include "findings.h"
#include "model.h"

typedef struct tsa_xrank_options {
    double z_threshold;     /* persistence z-score to name a straggler (default 3) */
    double min_slowdown;    /* minimum relative slowdown, e.g. 0.03 (default) */
} tsa_xrank_options;


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
    /* --- added by the crossrank part (append-only) --- */
    int clock_aligned;          /* 0: shares no symmetric collective with the reference */
    int64_t wall_lost_ns;       /* sum over instances it was last of (its arrival - next latest) */
    int64_t compute_median_ns;  /* median per-step work (time outside collectives) */
    double slowdown;            /* median over steps of (its work / step's median rank) - 1 */
    uint64_t steps;             /* steps with a usable work figure */
    uint64_t steps_last;        /* steps in which it waited least (arrived last) */
    double z;                   /* persistence z-score of steps_last */
    int slow;                   /* significantly and materially slower than the median */
} tsa_rank_blame;

typedef struct tsa_straggler {
    int32_t rank;
    const char *host;
    double z;
    double slowdown;            /* relative to the median rank, 0.10 = 10% slower */
    int64_t wall_lost_ns;       /* wall time all ranks waited for it alone: sum over
                                   instances it was last of (its arrival - next latest) */
    int64_t whatif_saved_ns;    /* job time saved if it ran at the median speed
                                   (intermittent: in its slow steps) */
    int64_t whatif_step_saved_ns; /* per analyzed step (intermittent: per slow step) */
    int intermittent;           /* 1: slow in bursts, see slow_steps */
    uint32_t *slow_steps; size_t n_slow_steps;
} tsa_straggler;

/* How steps were found for the persistence test. */
typedef enum tsa_xrank_step_source {
    TSA_XSTEPS_NONE = 0,        /* nothing to analyze */
    TSA_XSTEPS_MODEL,           /* the step pass's tsa_rank.steps */
    TSA_XSTEPS_DERIVED,         /* the repeating sequence of collectives */
    TSA_XSTEPS_PER_COLLECTIVE,  /* no period found: each collective is a step */
} tsa_xrank_step_source;

/* An intermittent straggler (slow in bursts). */
typedef struct tsa_xrank_burst {
    int32_t rank;
    const char *host;
    double z;
    int64_t whatif_saved_ns;
    uint32_t *slow_steps; size_t n_slow_steps;
} tsa_xrank_burst;

typedef struct tsa_xrank_result {
    tsa_rank_blame *ranks; size_t n_ranks;   /* in job rank order */
    int64_t clock_residual_ns;               /* residual skew after alignment */
    uint64_t instances;                      /* collective instances matched */
    tsa_straggler *straggler;                /* NULL when none is named */
    int imbalance;                           /* several slow ranks: load imbalance */
    int32_t *imbalanced_ranks; size_t n_imbalanced;
    const char *slow_host;                   /* all ranks of one host slow, else NULL */
    /* --- added by the crossrank part (append-only) --- */
    int32_t clock_reference_rank;            /* offset 0 by definition, -1 none */
    size_t n_unaligned;                      /* ranks no symmetric collective could align */
    int clock_hosts_split;                   /* ranks sharing a host name disagreed:
                                                each rank was aligned on its own */
    uint64_t clock_samples;                  /* instances used for alignment */
    uint64_t steps;                          /* steps analyzed */
    tsa_xrank_step_source step_source;
    double noise;                            /* robust sigma of per-step relative work */
    int64_t job_wall_ns;                     /* wall extent on the common clock */
    int64_t imbalance_saved_ns;              /* what-if: slow ranks at the median speed */
    double imbalance_slowdown;               /* median slowdown of the imbalanced ranks */
    int32_t *slow_host_ranks; size_t n_slow_host_ranks;
    double slow_host_slowdown;
    int64_t slow_host_saved_ns;
    tsa_xrank_burst *bursts; size_t n_bursts; /* intermittent ranks, biggest saving first */
} tsa_xrank_result;

#endif
