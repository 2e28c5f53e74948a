/* A diff side from the analysis of one run. */
#include "diff_side.h"

#include <string.h>

#include "model/analysis.h"

void tsa_diff_side_from_analysis(const tsa_analysis *a, const char *label, tsa_diff_side *s)
{
    memset(s, 0, sizeof *s);
    const tsa_summary *sum = &a->summary;
    s->label = label;
    s->ranks = sum->ranks;
    s->hosts = sum->hosts;
    s->steps = sum->steps;
    s->median_step_ns = sum->median_step_ns;
    s->no_steps = sum->no_steps;
    s->mfu = sum->mfu;
    s->exposed_comm_share = sum->exposed_comm_share;
    s->data_stall_share = sum->data_stall_share;
    s->n_lines = TSA_BL_COUNT < TSA_DIFF_MAX_LINES ? TSA_BL_COUNT : TSA_DIFF_MAX_LINES;
    for (size_t l = 0; l < s->n_lines; l++) {
        s->line_label[l] = tsa_budget_line_label((tsa_budget_line)l);
        s->line_ns[l] = sum->lines[l].ns;
    }
    for (size_t r = 0; r < a->n_ranks; r++)
        for (int p = 0; p < TSA_PHASE_COUNT; p++)
            s->phase_ns[p] += a->ranks[r].phase_ns[p];
    memcpy(s->kcat_ns, sum->kcat_ns, sizeof s->kcat_ns);
    for (size_t i = 0; i < sum->n_colls && s->n_colls < TSA_DIFF_MAX_COLLS; i++) {
        s->coll_name[s->n_colls] = sum->colls[i].name;
        s->coll_ns[s->n_colls] = sum->colls[i].ns;
        s->coll_busbw[s->n_colls] = sum->colls[i].busbw_gbps;
        s->n_colls++;
    }
    s->straggler_rank = sum->straggler_rank;
    s->straggler_host = sum->straggler_host;
    s->device = a->device_name;
}
