/* The launch calls that launched a kernel for the first time in a rank's
 * records: the driver loads the kernel's module then (lazy loading), so a
 * first launch can take milliseconds where later ones take microseconds.
 * That time is a start-up cost to warm up past, not launch overhead that
 * CUDA graphs would remove. */
#ifndef TSA_FIRST_LAUNCH_H
#define TSA_FIRST_LAUNCH_H

#include "model/model.h"
#include "util/interval_set.h"

/* The intervals of the launch calls (r->apis, joined by correlation id)
 * whose kernel is the earliest of its name, normalised, into out.  -1 on
 * OOM. */
int tsa_first_launches(const tsa_rank *r, tsa_ivset *out);

#endif
