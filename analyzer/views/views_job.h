/* Loading "a job directory" whatever it holds: tscope dumps (the core's
 * loader) or torch.profiler traces (kineto.h).  Every views command loads
 * through here; the report command can too. */
#ifndef TSA_VIEWS_JOB_H
#define TSA_VIEWS_JOB_H

#include <stddef.h>

#include "model.h"

/* 0 with *out set (problems met on the way are in (*out)->problems), or -1
 * with a one-line reason in err.  run_id: as tsa_load_options.run_id (dumps
 * only), NULL for the largest run.  Free the job with tsa_job_free. */
int tsa_views_load_job(const char *dir, const char *run_id, tsa_job **out, char *err,
                       size_t errlen);

#endif
