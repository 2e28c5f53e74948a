/* Which phases a report may show.  A phase that was not measured is never
 * shown as 0 or as a guess:
 *  - host-only dumps: no GPU records, so no data stall, optimizer or idle
 *    split; the time outside NCCL calls is "compute (host)";
 *  - GPU records without an autograd thread (pt_autograd_*): forward and
 *    backward cannot be told apart, the compute is "compute (fwd+bwd)". */
#ifndef TSA_PHASE_VIEW_H
#define TSA_PHASE_VIEW_H

#include "model/analysis.h"

/* Label of phase p in this report, or NULL when it was not measured.  The
 * forward phase carries all compute when the split is unknown; its label
 * then says so and tsa_phase_measured() is 0 for it. */
const char *tsa_phase_label(const tsa_analysis *a, tsa_phase p);
int tsa_phase_measured(const tsa_analysis *a, tsa_phase p);

#endif
