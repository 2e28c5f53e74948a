/* The HTA-compatible view's text section and JSON object, from the shares
 * of passes/hta_view.h. */
#include "hta_render.h"

#include <math.h>

#include "passes/hta_view.h"
#include "util/json_int.h"

void tsa_hta_view_print(FILE *out, const tsa_analysis *a)
{
    if (a->opt.window != TSA_WINDOW_GPU_SPAN)
        return;
    fprintf(out, "\nHTA-COMPATIBLE VIEW (--window gpu-span: first to last GPU record, "
                 "HTA's definitions)\n");
    fprintf(out, "  %5s %12s %9s %12s %7s %9s\n", "rank", "span", "compute", "non-compute",
            "idle", "overlap");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const tsa_rank_result *r = &a->ranks[i];
        if (!r->gpu) {
            fprintf(out, "  %5d  no GPU records\n", r->rank);
            continue;
        }
        tsa_hta_shares h;
        tsa_hta_shares_of(r, &h);
        char ov[16];
        if (isnan(h.overlap_pct))
            snprintf(ov, sizeof ov, "n/a");
        else
            snprintf(ov, sizeof ov, "%.2f%%", h.overlap_pct);
        fprintf(out, "  %5d %9.3f ms %8.2f%% %11.2f%% %6.2f%% %9s\n", r->rank,
                (double)h.span_ns / 1e6, h.compute_pct, h.non_compute_pct, h.idle_pct, ov);
    }
}

void tsa_hta_view_add_json(cJSON *root, const tsa_analysis *a)
{
    if (a->opt.window != TSA_WINDOW_GPU_SPAN)
        return;
    cJSON *view = cJSON_AddObjectToObject(root, "gpu_span_view");
    cJSON *ranks = cJSON_AddArrayToObject(view, "per_rank");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const tsa_rank_result *r = &a->ranks[i];
        if (!r->gpu)
            continue;
        tsa_hta_shares h;
        tsa_hta_shares_of(r, &h);
        cJSON *x = cJSON_CreateObject();
        tsa_json_add_num(x, "rank", r->rank);
        tsa_json_add_i64(x, "span_ns", h.span_ns);
        tsa_json_add_i64(x, "compute_ns", h.compute_ns);
        tsa_json_add_i64(x, "non_compute_ns", h.non_compute_ns);
        tsa_json_add_i64(x, "idle_ns", h.idle_ns);
        tsa_json_add_num(x, "compute_pct", h.compute_pct);
        tsa_json_add_num(x, "non_compute_pct", h.non_compute_pct);
        tsa_json_add_num(x, "idle_pct", h.idle_pct);
        tsa_json_add_num(x, "overlap_pct", h.overlap_pct);
        cJSON_AddItemToArray(ranks, x);
    }
}
