/* The job's budget, overlap and kernel categories: the ranks' sums. */
#include "job_budget.h"

#include "input_facts.h"
#include "util/sat_math.h"

void tsa_job_budget(tsa_analysis *a)
{
    a->cpu_only = a->n_ranks > 0;
    for (size_t i = 0; i < a->n_ranks; i++) {
        tsa_rank_result *rr = &a->ranks[i];
        a->gpu |= rr->gpu;
        a->cpu_only &= !a->digests[i].has_kernels && !a->digests[i].has_copies &&
                       !tsa_rank_gpu_collectives(&a->job->ranks[i]);
        int64_t wall = rr->budget.wall_ns;
        if (wall > a->wall_ns)
            a->wall_ns = wall;
        TSA_SAT_ACC(a->budget.wall_ns, wall);
        for (int l = 0; l < TSA_BL_COUNT; l++)
            TSA_SAT_ACC(a->budget.line_ns[l], rr->budget.line_ns[l]);
        TSA_SAT_ACC(a->overlap.comm_ns, rr->overlap.comm_ns);
        TSA_SAT_ACC(a->overlap.overlapped_ns, rr->overlap.overlapped_ns);
        TSA_SAT_ACC(a->overlap.exposed_ns, rr->overlap.exposed_ns);
        TSA_SAT_ACC(a->overlap.exposed_wait_ns, rr->overlap.exposed_wait_ns);
        TSA_SAT_ACC(a->overlap.exposed_transfer_ns, rr->overlap.exposed_transfer_ns);
        for (int c = 0; c < TSA_KCAT_COUNT; c++) {
            TSA_SAT_ACC(a->kcat_ns[c], rr->kcat_ns[c]);
            a->kcat_count[c] += rr->kcat_count[c];
        }
        for (int c = 0; c < TSA_IDLE_COUNT; c++)
            TSA_SAT_ACC(a->idle_ns[c], rr->idle_ns[c]);
        a->host_data |= rr->host_data;
        a->host_records |= a->job->ranks[i].host_records;
    }
    if (a->flops > 0 && a->peak_flops > 0 && a->budget.wall_ns > 0)
        a->budget.mfu = (double)a->budget.line_ns[TSA_BL_USEFUL] / (double)a->budget.wall_ns;
}
