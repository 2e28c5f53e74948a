/* Pipeline what-if: who really sets the pace of a pipeline-parallel job.
 *
 * The pass builds a dependency graph of every analysed step across all
 * workers from the records tscope already has (order on each stream or
 * thread, collectives that wait for their last member, send/receive pairs,
 * waits across streams), replays it with chosen operations set to the
 * duration their peers of the same role take, and reports the slowdown
 * S = actual / ideal, the step time each fix would give back, the class
 * of the problem (one slow worker, a slow stage, a slow DP group, or a
 * spread) and the critical path of the steps.  docs/whatif.md explains the
 * method and what it cannot see.  It runs only on jobs whose send/receive
 * pairs form pipelines; flat data-parallel jobs keep the cross-rank pass's
 * findings. */
#ifndef TSA_WHATIF_H
#define TSA_WHATIF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/findings.h"
#include "model/model.h"

/* Kinds of operation whose fix is reported on its own. */
typedef enum tsa_pipe_okind {
    TSA_OK_COMPUTE = 0,          /* compute of unknown phase (host time) */
    TSA_OK_FORWARD,
    TSA_OK_BACKWARD,
    TSA_OK_OPTIMIZER,
    TSA_OK_OTHER_COMPUTE,
    TSA_OK_P2P,                  /* pipeline send / receive */
    TSA_OK_ALLREDUCE,
    TSA_OK_ALLGATHER,
    TSA_OK_REDUCESCATTER,
    TSA_OK_ALLTOALL,
    TSA_OK_OTHER_COMM,
    TSA_OK_COUNT
} tsa_pipe_okind;

const char *tsa_pipe_okind_name(int k);   /* "forward compute", "send/recv", ... */

typedef enum tsa_pipe_class {
    TSA_PIPE_NONE = 0,           /* not material: nothing named */
    TSA_PIPE_SLOW_WORKER,
    TSA_PIPE_SLOW_STAGE,
    TSA_PIPE_SLOW_DP,
    TSA_PIPE_SPREAD,
} tsa_pipe_class;

const char *tsa_pipe_class_id(tsa_pipe_class c);   /* "PIPE.SLOW_WORKER", ... */

/* One operation on a critical path. */
typedef struct tsa_pipe_hop {
    int32_t rank;                /* global rank */
    uint32_t lane;               /* thread id or stream */
    uint8_t kind;                /* 0 compute, 1 communication */
    uint8_t okind;
    uint8_t via_start;           /* 1: the next hop waited for this one's start (a hub) */
    int64_t start_ns, end_ns;    /* recorded, common clock */
} tsa_pipe_hop;

typedef struct tsa_pipe_result {
    int pipeline;                /* 1: the job has pipelines and was analysed */
    size_t n_ranks, n_stages, n_dp, steps;
    int32_t *stage_of, *dp_of;   /* per rank index */
    int32_t *global_rank;        /* per rank index */
    size_t nodes, hubs;          /* graph size */
    size_t cut_links;            /* links dropped to break equal-time cycles */
    int64_t actual_ns, ideal_ns; /* summed over the analysed steps: the what-if's
                                    baseline (the record with every launch gap at
                                    its peers') and every slow operation fixed
                                    (none longer than its peers' median) */
    int64_t typical_ns;          /* every operation at its peers' median */
    int64_t recorded_ns;         /* the record's step times, summed */
    int64_t replay_error_ns;     /* largest |replay of the record - record| over steps */
    double slowdown;             /* S = actual / typical, 1 when typical is 0 */
    int64_t *step_actual_ns, *step_ideal_ns, *step_typical_ns;   /* per step */
    int64_t *saved_worker_ns;    /* per rank index: fixing that worker alone */
    int64_t *saved_stage_ns;     /* per stage */
    int64_t *saved_dp_ns;        /* per DP rank */
    int64_t saved_kind_ns[TSA_OK_COUNT];
    uint8_t kind_seen[TSA_OK_COUNT];
    tsa_pipe_class cls;
    int32_t culprit;             /* rank index, stage or DP rank of the class; -1 */
    int32_t worst_stage;         /* the stage whose fix saves most */
    double explained;            /* best single fix / (actual - ideal) */
    /* critical paths of every analysed step, hop_first[s] .. hop_first[s+1] */
    tsa_pipe_hop *hops; size_t *hop_first;
    size_t slowest_step;         /* the step whose critical path the text shows */
    uint32_t *step_number;       /* per analysed step: the step's number on rank 0 */
} tsa_pipe_result;

/* Runs the what-if on a job whose clocks the cross-rank pass aligned and
 * whose steps the step pass found.  Adds its finding to findings (may be
 * NULL).  Returns 0 (out->pipeline 0 when the job has no pipeline), or -1
 * out of memory. */
int tsa_pipe_run(const tsa_job *job, tsa_pipe_result *out, tsa_findings *findings);

/* 1 when job may be a pipeline: some rank made a Send or Recv call.  The
 * stages are found from the send/receive pairs (wi_topo.c), so a job
 * without any is never one, and tsa_pipe_run does not build its graph
 * (hundreds of MB for a few hundred ranks x 1,000 steps). */
int tsa_pipe_possible(const tsa_job *job);
void tsa_pipe_free(tsa_pipe_result *r);

/* On a pipeline job the cross-rank pass's late-rank findings (DIST.*)
 * blame whoever arrives last at the data-parallel collectives, which in a
 * pipeline is not who is slow: removes them (and their ranks in xr), so
 * the what-if's finding speaks alone.  xr is a tsa_xrank_result *. */
void tsa_pipe_supersede(const tsa_pipe_result *r, tsa_findings *findings, void *xr);

/* Ranks (global) a PIPE.* finding blames; 0 when id is not one. */
size_t tsa_pipe_culprits(const tsa_pipe_result *r, const char *id, int32_t *out, size_t cap);
/* What fixing the blamed worker / stage / DP rank (a spread: every slow
 * operation) gives back over the analysed steps; -1 when none is blamed. */
int64_t tsa_pipe_blamed_ns(const tsa_pipe_result *r);
/* "stage 3 (ranks 6, 7)", "rank 0 (DP 0, stage 0)" for the verdict. */
int tsa_pipe_culprit_text(const tsa_pipe_result *r, const char *id, char *buf, size_t len);

#endif
