#include "hta_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_span.h"
#include "util/json_int.h"

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : NAN;
}

void tsa_hta_shares_of(const tsa_rank_result *r, tsa_hta_shares *out)
{
    memset(out, 0, sizeof *out);
    out->span_ns = r->budget.wall_ns;
    out->compute_ns = r->compute_ns;
    out->non_compute_ns = r->overlap.exposed_ns + r->budget.line_ns[TSA_BL_COPY];
    out->idle_ns = out->span_ns - out->compute_ns - out->non_compute_ns;
    out->compute_pct = pct(out->compute_ns, out->span_ns);
    out->non_compute_pct = pct(out->non_compute_ns, out->span_ns);
    out->idle_pct = pct(out->idle_ns, out->span_ns);
    out->overlap_pct = r->overlap.comm_ns ? pct(r->overlap.overlapped_ns, r->overlap.comm_ns)
                                          : NAN;
}

int tsa_rank_pass_hta(tsa_rank *r, const tsa_arrivals *arr, double flops, double peak_flops,
                      tsa_rank_result *res)
{
    uint8_t *kk = malloc(r->n_kernels + 1), *kc = malloc(r->n_copies + 1);
    tsa_kernel *kernels = malloc((r->n_kernels + 1) * sizeof *kernels);
    tsa_copy *copies = malloc((r->n_copies + 1) * sizeof *copies);
    int rc = -1;
    if (!kk || !kc || !kernels || !copies || tsa_rank_hta_kept(r, kk, kc) < 0)
        goto out;
    /* A view of the rank holding only the kept records (sorted order kept). */
    tsa_rank view = *r;
    view.n_kernels = view.n_copies = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        if (kk[i])
            kernels[view.n_kernels++] = r->kernels[i];
    for (size_t i = 0; i < r->n_copies; i++)
        if (kc[i])
            copies[view.n_copies++] = r->copies[i];
    view.kernels = kernels;
    view.copies = copies;
    rc = tsa_rank_pass(&view, arr, flops, peak_flops, res);
    /* The pass sets each kernel's phase: give the kept ones theirs back. */
    for (size_t i = 0, j = 0; i < r->n_kernels && !rc; i++)
        if (kk[i])
            r->kernels[i].phase = kernels[j++].phase;
out:
    free(kk);
    free(kc);
    free(kernels);
    free(copies);
    return rc;
}

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

static void num(cJSON *o, const char *k, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
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
        num(x, "rank", r->rank);
        tsa_json_add_i64(x, "span_ns", h.span_ns);
        tsa_json_add_i64(x, "compute_ns", h.compute_ns);
        tsa_json_add_i64(x, "non_compute_ns", h.non_compute_ns);
        tsa_json_add_i64(x, "idle_ns", h.idle_ns);
        num(x, "compute_pct", h.compute_pct);
        num(x, "non_compute_pct", h.non_compute_pct);
        num(x, "idle_pct", h.idle_pct);
        num(x, "overlap_pct", h.overlap_pct);
        cJSON_AddItemToArray(ranks, x);
    }
}
