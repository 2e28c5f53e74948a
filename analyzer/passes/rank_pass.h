/* Per-rank timeline pass: overlap, exposed communication (wait / transfer),
 * data stall, host idle, per-step phases, and the rank's budget. */
#ifndef TSA_RANK_PASS_H
#define TSA_RANK_PASS_H

#include "arrivals.h"
#include "model/analysis.h"

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
