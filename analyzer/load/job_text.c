/* Visible, valid UTF-8 model strings (job_text.h). */
#include "job_text.h"

#include "reader/text_visible.h"

int tsa_job_make_text_visible(tsa_job *job)
{
    int rc = 0;
    rc |= tsr_text_make_visible(&job->dir);
    rc |= tsr_text_make_visible(&job->run_id);
    for (size_t i = 0; i < job->n_other_runs; i++)
        rc |= tsr_text_make_visible(&job->other_runs[i]);
    for (size_t i = 0; i < job->n_problems; i++) {
        rc |= tsr_text_make_visible(&job->problems[i].file);
        rc |= tsr_text_make_visible(&job->problems[i].message);
    }
    for (size_t i = 0; i < job->n_ranks; i++) {
        tsa_rank *r = &job->ranks[i];
        rc |= tsr_text_make_visible(&r->host);
        rc |= tsr_text_make_visible(&r->run_id);
        rc |= tsr_text_make_visible(&r->file);
        rc |= tsr_text_make_visible(&r->device_name);
        rc |= tsr_text_make_visible(&r->cmdline);
        rc |= tsr_text_make_visible(&r->cupti_other);
        /* The intern index (if any) keeps the old spellings' hashes; it
         * only serves loading, which is over. */
        for (size_t s = 0; s < r->n_strings; s++)
            rc |= tsr_text_make_visible(&r->strings[s]);
    }
    return rc ? -1 : 0;
}
