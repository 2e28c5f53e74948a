/* The budget's thinning steps of a job (records_cut.h). */
#include "records_cut.h"

#include "load/rank_view.h"
#include "model/self_cost.h"
#include "tsc_format.h"

/* The steps of r that ended by at_ns (steps are in order). */
static int steps_before(const tsa_rank *r, int64_t at_ns, size_t *n)
{
    tsa_rank_view v;
    const tsa_rank *rk = tsa_view_open(r, TSA_VIEW_STEPS, &v);
    if (rk) {
        *n = 0;
        while (*n < rk->n_steps && rk->steps[*n].end_ns <= at_ns)
            (*n)++;
    }
    tsa_view_close(&v);
    return rk ? 0 : -1;
}

/* The earliest step to `what` over the ranks (realtime clocks); with
 * count_steps, steps_before is the fewest steps any such rank completed
 * before its own step, so that the analysed steps end before every one. */
static int find(const tsa_job *job, const char *what, int count_steps, tsa_records_cut *out)
{
    *out = (tsa_records_cut){.rank = -1};
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        int64_t at, resume;
        if (!tsa_self_cost_thinned(&r->self_cost, what, &at, &resume))
            continue;
        size_t before = 0;
        if (count_steps && steps_before(r, at, &before))
            return -1;
        if (!out->ranks++ || before < out->steps_before)
            out->steps_before = before;
        if (out->rank >= 0 && at >= out->at_ns)
            continue;
        out->rank = r->rank;
        out->at_ns = at;
        out->resume_ns = resume;
        out->run_start_ns = r->first_ns;
        out->run_end_ns = r->last_ns;
    }
    return 0;
}

int tsa_records_cut_find(tsa_analysis *a)
{
    if (find(a->job, TSC_COST_WHAT_LIGHT, 1, &a->kernels_cut))
        return -1;
    return find(a->job, TSC_COST_WHAT_NPROF, 0, &a->plugin_cut);
}
