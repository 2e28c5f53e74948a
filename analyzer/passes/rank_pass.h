/* Per-rank timeline pass: overlap, exposed communication (wait / transfer),
 * data stall, host idle, per-step phases, and the rank's budget. */
#ifndef TSA_RANK_PASS_H
#define TSA_RANK_PASS_H

#include "model/analysis.h"

/* Latest arrival of every collective instance, keyed by (comm id, seq),
 * on the job's common clock (t + clock_offset_ns). */
typedef struct tsa_arrival {
    uint64_t comm_id, seq;
    int64_t latest;
} tsa_arrival;

typedef struct tsa_arrivals {
    tsa_arrival *v;
    size_t n;
} tsa_arrivals;

/* Arrival of a call = start of its GPU interval (host interval when not
 * linked to a kernel).  Only collectives of communicators with more than
 * one rank count.  -1 on OOM. */
int tsa_arrivals_build(const tsa_job *job, tsa_arrivals *out);
/* Whether a call has an arrival to wait for: a collective of a known
 * communicator of more than one rank. */
int tsa_counts_for_arrival(const tsa_nccl_op *op);
/* Latest arrival (common clock) or INT64_MIN when unknown. */
int64_t tsa_arrivals_latest(const tsa_arrivals *a, uint64_t comm_id, uint64_t seq);
void tsa_arrivals_free(tsa_arrivals *a);

/* Fills res->overlap, res->budget (useful/overhead from `flops` and
 * `peak_flops`, NAN mfu when either is 0), res->compute_ns, res->phase_ns,
 * res->kcat_*, and the phase fields of r->steps.  The window is
 * [res->window_start_ns, res->window_end_ns).  -1 on OOM. */
int tsa_rank_pass(tsa_rank *r, const tsa_arrivals *arr, double flops, double peak_flops,
                  tsa_rank_result *res);

/* Budget lines from the measured parts; sums to wall exactly. */
void tsa_budget_fill(tsa_budget *b, int64_t wall, int64_t compute, double flops,
                     double peak_flops, int64_t data, int64_t wait, int64_t transfer,
                     int64_t host, int64_t copy);

#endif
