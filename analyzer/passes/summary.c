/* The plain numbers a batch row or a diff needs (tsa_summary). */
#include "summary.h"

#include <string.h>

#include "load/job_build.h"

int tsa_job_hosts(const tsa_job *job)
{
    int n = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const char *h = job->ranks[i].host ? job->ranks[i].host : "";
        size_t j = 0;
        while (j < i && strcmp(job->ranks[j].host ? job->ranks[j].host : "", h))
            j++;
        if (j == i)
            n++;
    }
    return n;
}

void tsa_summary_fill(tsa_analysis *a)
{
    tsa_summary *s = &a->summary;
    memset(s, 0, sizeof *s);
    s->run_id = a->job->run_id;
    s->ranks = a->job->n_ranks;
    s->hosts = a->hosts;
    s->steps = a->steps;
    s->wall_ns = a->wall_ns;
    s->median_step_ns = a->median_step_ns;
    s->no_steps = a->method == TSA_STEPS_NONE;
    s->mfu = a->budget.mfu;
    s->top_recoverable = -1;
    for (int l = 0; l < TSA_BL_COUNT; l++) {
        s->lines[l].name = tsa_budget_line_name((tsa_budget_line)l);
        s->lines[l].ns = a->budget.line_ns[l];
        s->lines[l].recoverable = tsa_budget_line_recoverable((tsa_budget_line)l);
        if (s->lines[l].recoverable && s->lines[l].ns > 0 &&
            (s->top_recoverable < 0 || s->lines[l].ns > s->lines[s->top_recoverable].ns))
            s->top_recoverable = l;
    }
    double w = (double)a->budget.wall_ns;
    s->exposed_comm_share = w > 0 ? (double)a->overlap.exposed_ns / w : 0;
    s->data_stall_share = w > 0 ? (double)a->budget.line_ns[TSA_BL_DATA_STALL] / w : 0;
    memcpy(s->kcat_ns, a->kcat_ns, sizeof s->kcat_ns);
    for (size_t i = 0; i < a->n_colls && s->n_colls < 16; i++) {
        tsa_summary_coll *c = &s->colls[s->n_colls++];
        c->op = a->colls[i].op;
        c->name = tsa_nccl_op_name(a->colls[i].op);
        c->count = a->colls[i].count;
        c->bytes = a->colls[i].bytes;
        c->ns = a->colls[i].ns;
        c->busbw_gbps = a->colls[i].busbw_gbps;
    }
    s->straggler_rank = -1;
    if (a->have_xrank && a->xrank.straggler) {
        s->straggler_rank = a->xrank.straggler->rank;
        s->straggler_host = a->xrank.straggler->host;
    }
    s->verdict = a->verdict;
}
