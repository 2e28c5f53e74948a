/* The step timeline of a black-box folder (`tscope-report blackbox`): the
 * ranks' per-step summaries merged by step number into job steps, and
 * those grouped into rows for display.  A job step's time is the slowest
 * rank's (in a synchronous job the ranks differ only by jitter). */
#ifndef TSA_BB_TIMELINE_H
#define TSA_BB_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "load/bb_load.h"

typedef struct tsa_bb_job_step {
    uint64_t ns;          /* slowest rank's step time */
    uint64_t nccl_ns;     /* host time in NCCL calls, summed over ranks */
    uint32_t ranks;       /* ranks with a summary of it, 0 = none */
    uint32_t anomalous;   /* ranks that flagged it slow */
    uint64_t seq;         /* the opener's sequence number (the last rank read) */
    int seq_mismatch;     /* ranks disagree on it: they disagree on the steps */
    /* From the ranks' extras (format 1.4), over the ranks that measured it: */
    uint32_t stall_ranks;   /* ranks with a data stall */
    uint64_t stall_ns;      /* their data stall, summed */
    uint64_t stall_max_ns;  /* the largest, and its rank (the lowest on a tie) */
    int stall_max_rank;
    uint32_t mfu_ranks;     /* ranks with their GEMMs' time at peak */
    uint64_t peak_ns;       /* that time, summed */
    uint64_t mfu_step_ns;   /* those ranks' step times, summed */
} tsa_bb_job_step;

/* Steps first..last of the timeline, those with a summary summed up. */
typedef struct tsa_bb_row {
    uint64_t first, last;
    uint64_t steps;        /* steps of the row some rank summarized */
    uint64_t median_ns;    /* median over those steps of the job step time */
    uint64_t max_ns;       /* the slowest of them */
    uint64_t nccl_ns;      /* NCCL host time, summed over ranks and steps */
    uint64_t rank_steps;   /* (rank, step) summaries in the row: nccl_ns / rank_steps
                              is the NCCL time per rank and step */
    uint32_t slow;         /* steps some rank flagged slow */
    /* Data stall (0 rank-steps: not recorded, no CUPTI copy records) */
    uint64_t stall_rank_steps; /* (rank, step) pairs with a data stall */
    uint64_t stall_ns;         /* their sum: stall_ns / stall_rank_steps per rank and step */
    uint64_t max_stall_ns;     /* the largest one, its rank and step (the first on a tie) */
    int max_stall_rank;
    uint64_t max_stall_step;
    /* MFU estimate: gemm_peak_ns / mfu_step_ns (0 rank-steps: not recorded, no
     * cuBLAS GEMM records or no known peak) */
    uint64_t mfu_rank_steps;   /* (rank, step) pairs with their GEMMs' time at peak */
    uint64_t gemm_peak_ns;     /* that time, summed */
    uint64_t mfu_step_ns;      /* their step times, summed */
} tsa_bb_row;

typedef struct tsa_bb_timeline {
    tsa_bb_job_step *steps;  /* steps 0..n_steps-1 */
    size_t n_steps;
    size_t mismatched, slow; /* steps with disagreeing ranks, steps flagged slow */
    tsa_bb_row *rows;
    size_t n_rows;
} tsa_bb_timeline;

/* Build f's timeline: one row per step when every is set or there are at
 * most 40 steps, else 40 rows (at most) of equal step ranges.  0, or -1
 * without memory. */
int tsa_bb_timeline_build(const tsa_bb_folder *f, int every, tsa_bb_timeline *out);
void tsa_bb_timeline_free(tsa_bb_timeline *t);

#endif
