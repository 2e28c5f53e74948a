/* The budget's "no per-kernel records (light)" level in a run that
 * started in full mode (preload/cost_levels.c, docs/self-cost.md): CUPTI
 * stops tracing kernels and the launch calls light mode does not keep,
 * and the sink treats new records as light mode does; back up, both come
 * back.  Writer thread only (the CUPTI drain hook). */
#ifndef TSC_LIGHT_STEP_H
#define TSC_LIGHT_STEP_H

#include "cupti_api.h"

/* light: 1 to step down, 0 to step back up.  0, or -1 when CUPTI refused
 * a kind (the sink still filters as light mode does). */
int tsc_light_step_apply(const tsc_cupti_api *api, int light);

#endif
