/* Loading "a job directory" whatever it holds: tscope dumps (job_load.h)
 * or torch.profiler traces (kineto_load.h).  Every command that analyses a
 * job loads through here. */
#ifndef TSA_VIEWS_JOB_H
#define TSA_VIEWS_JOB_H

#include <stddef.h>

#include "job_load.h"
#include "model/model.h"

/* 0 with *out set (problems met on the way are in (*out)->problems), or -1
 * with a one-line reason in err.  opt applies to dumps only (run id, lean
 * loading); NULL for the defaults.  Free the job with tsa_job_free. */
/* Options for commands that need only the analysis summary (diff, batch):
 * lean loading keeps memory near the dumps' size. */
extern const tsa_load_options tsa_views_summary_load;

int tsa_views_load_job(const char *dir, const tsa_load_options *opt, tsa_job **out,
                       char *err, size_t errlen);

#endif
