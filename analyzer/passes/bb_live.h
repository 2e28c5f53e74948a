/* Job-level series of a running black-box job (`tscope-report live`),
 * from the ranks' per-step summaries as they arrive (docs/blackbox.md,
 * "Live job metrics").
 *
 * A step is *complete* once every rank has summarized it; only complete
 * steps make job figures.  Per complete step: the job step time (the
 * slowest rank's step time) and the median over ranks; the slowest rank,
 * the one with the most time outside NCCL calls (in a synchronous job the
 * ranks leave the step's last collective together, so the rank the others
 * waited for is the one that spent least of the step inside NCCL), with
 * the z-score of that time against the other ranks.  Over the last
 * `window` complete steps: how often each rank was the slowest; the most
 * frequent one is named the straggler when that count is improbable under
 * noise (binomial z-score, each rank slowest with probability 1/ranks) and
 * it is materially slower (the median over the window of its time outside
 * NCCL over the step's median rank's).  Where the ranks' summary files
 * have extras (format 1.4: CUPTI copies, cuBLAS GEMMs), the data stall of
 * each complete step over the ranks that measured it, and the MFU
 * estimate over the window, the mean over ranks of each rank's GEMM time
 * at peak over its step time. */
#ifndef TSA_BB_LIVE_H
#define TSA_BB_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

#define TSA_LIVE_BUCKETS 15
extern const double tsa_live_bucket_le[TSA_LIVE_BUCKETS]; /* seconds */

typedef struct tsa_live_opts {
    uint32_t window;       /* complete steps in the straggler window (default 100) */
    double z_threshold;    /* binomial z-score to name a straggler (default 3) */
    double min_slowdown;   /* and at least this much slower (default 0.03) */
} tsa_live_opts;

void tsa_live_default_opts(tsa_live_opts *o);

typedef struct tsa_live_cell tsa_live_cell;

typedef struct tsa_live_rank {
    int rank;
    tsa_live_cell *ring;   /* its last summaries, by step number */
    uint64_t next;         /* one past the highest step it summarized */
    uint64_t received;     /* summaries received */
    uint64_t dropped;      /* records it dropped, over those summaries */
} tsa_live_rank;

/* One complete step in the straggler window. */
typedef struct tsa_live_wstep {
    uint64_t step;
    int32_t slowest;       /* index into ranks, -1: a tie */
    uint64_t median_own_ns;/* the median rank's time outside NCCL */
    uint64_t nccl_ns, step_ns; /* sums over the ranks */
    uint64_t stall_ns, stall_step_ns; /* sums over the ranks that measured a data stall */
} tsa_live_wstep;

typedef struct tsa_live {
    tsa_live_opts opt;
    uint64_t mask;              /* per-rank ring size - 1 */
    tsa_live_rank *ranks;       /* in order of appearance */
    size_t *by_rank;            /* indices into ranks, by rank number: sums and ties
                                   over ranks go in this order, so figures do not
                                   depend on which rank's file was found first */
    size_t n_ranks, ranks_cap;
    size_t expected;            /* ranks of the job (world size), 0 unknown: no step
                                   completes before that many have summaries */
    uint64_t next;              /* the next step to complete */
    /* totals over complete steps */
    uint64_t complete, incomplete, anomalous, mismatched;
    uint64_t nccl_ns, step_ns;  /* sums over ranks */
    uint64_t buckets[TSA_LIVE_BUCKETS + 1]; /* job step time, +Inf last */
    uint64_t job_step_ns;       /* sum of job step times */
    /* the last complete step */
    int have_last;
    uint64_t last_step, last_max_ns;
    double last_median_ns;
    int32_t last_slowest;       /* index into ranks, -1: a tie */
    double last_z;              /* NaN when not defined (fewer than 3 ranks) */
    /* its data stall over the ranks that measured it (0 ranks: not recorded) */
    uint32_t last_stall_ranks;
    double last_stall_median_ns;
    uint64_t last_stall_max_ns;
    int32_t last_stall_max;     /* index into ranks, -1: a tie */
    /* data stall of complete steps, summed over the ranks that measured it */
    uint64_t stall_rank_steps, stall_ns;
    /* the straggler window */
    tsa_live_wstep *win;
    size_t win_n, win_head;
    uint32_t *counts;           /* per rank: steps in the window it was slowest */
    int32_t top;                /* most often slowest, -1 none */
    double top_share, top_z, top_slowdown;
    int named;                  /* top is a straggler */
    double nccl_ratio;          /* window: NCCL host time / step time, over ranks */
    double stall_ratio;         /* window: data stall / step time, over the ranks and
                                   steps that measured it; NaN: none did */
    double mfu;                 /* window: the mean over ranks of each rank's GEMM time at
                                   peak over its step time; NaN: no rank measured it */
    uint32_t mfu_ranks;         /* the ranks in that mean */
    int any_peak;               /* some summary came with GEMM time at peak */
    /* ranks that lag behind */
    int32_t lagging;            /* index, -1 none */
    uint64_t lag_steps;
    /* scratch */
    uint64_t *own, *dur, *stall;
    double *rel;
} tsa_live;

int tsa_live_init(tsa_live *L, const tsa_live_opts *opt);
void tsa_live_free(tsa_live *L);
/* Forget everything (a restarted job): the options stay. */
void tsa_live_reset(tsa_live *L);

/* The index of rank `rank`, added if new; -1 without memory. */
long tsa_live_rank_index(tsa_live *L, int rank);

/* Summaries of the rank at index i, with their extras (x[k] is s[k]'s;
 * x may be NULL: none). */
void tsa_live_add(tsa_live *L, size_t i, const tsc_step_summary *s, const tsc_step_extra *x,
                  size_t n);

/* Make the job figures of the steps every rank has now summarized. */
void tsa_live_update(tsa_live *L);

#endif
