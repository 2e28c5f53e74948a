#include "hta_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_span.h"

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
