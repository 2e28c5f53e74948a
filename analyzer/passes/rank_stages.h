/* The per-rank stages of tsa_analyze: the only passes that read a rank's
 * bulk records (kernels, copies, syncs, GEMMs, API calls, ranges).
 *
 * Each stage is a function of one rank and of a plan the job-level passes
 * decided; what it leaves for the job-level passes goes into the rank's
 * tsa_rank_result, its steps and its digest.  After the last stage nothing
 * reads the bulk records again, so tscope-report-mpi runs the stages on the
 * process that loaded the rank and ships only their results
 * (analyzer/mpi); tscope-report runs them here (tsa_local_runner).  Both
 * give the same answer because both run these same functions.
 *
 *   1. steps   find the rank's steps, trim an input cut short
 *   2. window  warm-up flags, the analysis window, GEMM FLOPs in it
 *      (needs the job's warm-up and step count: plan)
 *   3. pass    the rank pass (rank_pass.h) and the digest of what the
 *      tables and the advisory findings need (needs the arrivals of every
 *      collective, the clock offset from the cross-rank pass, the FLOPs
 *      counted for the rank and the peak: plan) */
#ifndef TSA_RANK_STAGES_H
#define TSA_RANK_STAGES_H

#include "model/analysis.h"
#include "rank_digest.h"
#include "rank_pass.h"

typedef struct tsa_window_plan {
    int warmup;                 /* steps skipped */
    size_t steps_total;         /* steps every rank analyses up to */
    size_t steps;               /* analysed steps */
    tsa_window window;
    /* 0, or where per-kernel records stop (the first step to light, its
     * rank's clock): a window not bounded by steps ends there. */
    int64_t records_end_ns;
} tsa_window_plan;

typedef struct tsa_pass_plan {
    const tsa_arrivals *arrivals;
    double peak_flops;
    tsa_window window;
} tsa_pass_plan;

/* Stage 1: r->steps, rr->method and rr->steps_found, d->cut and
 * d->cut_note.  job: the problems that say whether r was cut short.
 * -1 on OOM. */
int tsa_stage_steps(const tsa_job *job, tsa_rank *r, const char *marker, tsa_rank_result *rr,
                    tsa_rank_digest *d);
/* The warm-up flag of each step (part of stage 2, and done by the job-level
 * passes on every rank's copy of its steps, compact or not).  -1 on OOM. */
int tsa_stage_mark_warmup(tsa_rank *r, const tsa_window_plan *p);
/* Stage 2: warm-up flags, rr->window_*, d->gemm_flops*.  -1 on OOM. */
int tsa_stage_window(tsa_rank *r, const tsa_window_plan *p, tsa_rank_result *rr,
                     tsa_rank_digest *d);
/* Stage 3, with rr->flops and r->clock_offset_ns already set: the rank
 * pass, then the digest.  -1 on OOM. */
int tsa_stage_pass(tsa_rank *r, const tsa_pass_plan *p, tsa_rank_result *rr,
                   tsa_rank_digest *d);

/* Runs each stage over every rank of a->job, filling a->ranks[i],
 * a->digests[i] and a->job->ranks[i].steps.  0, or -1 on failure. */
typedef struct tsa_rank_runner {
    int (*steps)(void *ctx, tsa_analysis *a);
    int (*window)(void *ctx, tsa_analysis *a, const tsa_window_plan *p);
    int (*pass)(void *ctx, tsa_analysis *a, const tsa_pass_plan *p);
    void *ctx;
    /* A remote rank's records again, for a pass after the stages that
     * needs them (the cause pass reads a few ranks): the rank as it would
     * be held here after stage 3, or NULL on failure; release frees it.
     * NULL functions: the runner cannot (tscope-report-mpi). */
    tsa_rank *(*hold)(void *ctx, const tsa_analysis *a, size_t i);
    void (*release)(void *ctx, tsa_rank *r);
    /* 1: window already marked the warm-up steps of the remote ranks' own
     * copies (the streaming report runs stage 2 on them); 0: the job-level
     * passes mark them (tscope-report-mpi, whose hosts hold the steps). */
    int marks_remote_steps;
} tsa_rank_runner;

/* The stages run here, on the ranks that hold their records (remote ranks
 * are skipped: their home process runs them). */
extern const tsa_rank_runner tsa_local_runner;

#endif
