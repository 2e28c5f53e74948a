/* The step pass: finds the training steps of one rank (fills r->steps). */
#ifndef TSA_STEPS_H
#define TSA_STEPS_H

#include "model/analysis.h"

/* Finds r's steps with, in order of preference: the --step-marker (NVTX
 * range, else kernel, matched as a substring), NVTX "ProfilerStep#" ranges,
 * the period of the collective sequence, the forward/backward thread cycle
 * of the kernels' launches (GPU records), a repeated top-level call of a
 * torch.profiler trace (steps_toplevel.h).  Without any, one step spans the
 * GPU records (the whole extent of a host-only input; TSA_STEPS_NONE).  Replaces r->steps.  -1 on OOM. */
int tsa_find_steps(tsa_rank *r, const char *marker, tsa_step_method *method);

/* Smallest period p of seq[0..n) (seq[i] == seq[i+p] for every valid i),
 * n when none is shorter: the classic failure-function result. */
size_t tsa_sequence_period(const uint64_t *seq, size_t n);

/* Steps between the starts of the ranges whose name holds needle (prefix:
 * starts with it), steps.c.  Appends to r->steps.  -1 on OOM. */
int tsa_steps_from_range_starts(tsa_rank *r, const char *needle, int prefix, size_t *cap);
/* Appends the step [s, e) (nothing when e <= s).  -1 on OOM. */
int tsa_step_append(tsa_rank *r, size_t *cap, int64_t s, int64_t e);

/* Warm-up steps to skip by default for a run with `steps` steps. */
int tsa_default_warmup(size_t steps);

#endif
