#include "views_job.h"

#include <stdio.h>
#include <string.h>

#include "core/job_load.h"
#include "kineto.h"

const tsa_load_options tsa_views_summary_load = {.quiet = 1, .lean = 1};

int tsa_views_load_job(const char *dir, const tsa_load_options *opt, tsa_job **out,
                       char *err, size_t errlen)
{
    *out = NULL;
    if (tsa_kineto_dir(dir) > 0) {
        /* Status 1 (some traces had problems) still gives a job; the
         * problems are in job->problems like a dump loader's. */
        return tsa_kineto_load_ex(dir, out, err, errlen) == 2 ? -1 : 0;
    }
    tsa_load_options lopt;
    if (opt) {
        lopt = *opt;
    } else {
        memset(&lopt, 0, sizeof lopt);
        lopt.quiet = 1;
    }
    return tsa_job_load_ex(dir, &lopt, out, err, errlen) ? -1 : 0;
}
