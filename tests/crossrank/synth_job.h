/* Synthetic jobs with known truth for the cross-rank tests: N ranks run S
 * steps of work separated by collectives on one world communicator; each
 * collective ends when the last rank arrives.  Times are written on each
 * host's own clock (common time minus the host's true offset). */
#ifndef SYNTH_JOB_H
#define SYNTH_JOB_H

#include <stdint.h>

#include "model/model.h"

typedef struct synth_burst {
    int rank;
    int first_step, n_steps;
    double slowdown;        /* extra relative work during the burst */
} synth_burst;

typedef struct synth_params {
    int n_ranks, n_steps;
    int per_step;           /* collectives per step (>= 1) */
    int ranks_per_host;     /* 0: no host names at all */
    int64_t work_ns;        /* work per step per rank at normal speed */
    double jitter;          /* relative sigma of every work chunk */
    const double *slowdown; /* per rank, NULL: none */
    int64_t max_offset_ns;  /* host clocks uniformly within +-, host 0 exact */
    double missing;         /* probability of losing one call record */
    int64_t transfer_ns;
    int64_t end_jitter_ns;  /* ranks leave a collective up to this apart */
    const synth_burst *bursts; int n_bursts;
    int with_steps;         /* fill tsa_rank.steps like the step pass */
    int grouped;            /* host-only calls inside ncclGroupStart/End: each
                             * collective returns at once (in_group), its
                             * GroupEnd blocks until the last rank arrives */
    uint64_t seed;
} synth_params;

/* Sensible defaults: 8 ranks, 50 steps, 4 collectives, 1 host per 4 ranks,
 * 100 ms work, 1% jitter, 1 ms transfer, 3 us end jitter. */
void synth_defaults(synth_params *p);

/* The job; true_offset (optional, n_ranks) receives each rank's true
 * clock_offset_ns.  NULL when out of memory. */
tsa_job *synth_job(const synth_params *p, int64_t *true_offset);
void synth_job_free(tsa_job *job);

#endif
