#include "load_any.h"

#include <stdio.h>
#include <string.h>

#include "job_load.h"
#include "job_text.h"
#include "reader/text_visible.h"
#include "kineto_load.h"

/* One thread: batch runs its analyses in parallel already. */
const tsa_load_options tsa_views_summary_load = {.quiet = 1, .lean = 1, .jobs = 1};

/* The reason for a failure names files and may quote their bytes. */
static void visible_err(char *err, size_t errlen)
{
    if (!err || !errlen)
        return;
    const char *v = tsr_vis(err);
    if (v != err)
        snprintf(err, errlen, "%s", v);
}

/* Every command's job enters the model here, so its strings are made
 * visible, valid UTF-8 here, once (job_text.h). */
static int loaded(int rc, tsa_job **out, char *err, size_t errlen)
{
    if (rc) {
        visible_err(err, errlen);
        return -1;
    }
    if (*out)
        tsa_job_make_text_visible(*out);
    return 0;
}

static int load_either(const char *dir, const tsa_load_options *opt, tsa_job **out,
                       char *err, size_t errlen)
{
    if (tsa_kineto_dir(dir) > 0) {
        /* Status 1 (some traces had problems) still gives a job; the
         * problems are in job->problems like a dump loader's. */
        return tsa_kineto_load_on(dir, opt ? opt->jobs : 0, out, err, errlen) == 2 ? -1 : 0;
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

int tsa_views_load_job(const char *dir, const tsa_load_options *opt, tsa_job **out,
                       char *err, size_t errlen)
{
    *out = NULL;
    return loaded(load_either(dir, opt, out, err, errlen), out, err, errlen);
}
