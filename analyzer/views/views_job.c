#include "views_job.h"

#include <stdio.h>
#include <string.h>

#include "core/job_load.h"
#include "kineto.h"

int tsa_views_load_job(const char *dir, const char *run_id, tsa_job **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    if (tsa_kineto_dir(dir) > 0) {
        /* Status 1 (some traces had problems) still gives a job; the
         * problems are in job->problems like a dump loader's. */
        return tsa_kineto_load_ex(dir, out, err, errlen) == 2 ? -1 : 0;
    }
    tsa_load_options lopt;
    memset(&lopt, 0, sizeof lopt);
    lopt.run_id = run_id;
    lopt.quiet = 1;
    return tsa_job_load_ex(dir, &lopt, out, err, errlen) ? -1 : 0;
}
