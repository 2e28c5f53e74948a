/* FLOPs of each rank's window and the peak they are measured against. */
#include "job_flops.h"

#include "peak_table.h"

/* FLOPs of one rank's window: its GEMMs (stage 2), unless an option gives
 * them per step. */
static double rank_flops(const tsa_analysis *a, const tsa_rank_digest *d, size_t steps,
                         double *by_dtype)
{
    const tsa_analysis_options *o = &a->opt;
    if (o->flops_per_step > 0)
        return o->flops_per_step * (double)steps;
    if (o->params > 0 && o->tokens_per_step > 0) {
        double per_token = 6.0 * o->params;
        if (o->layers > 0 && o->seq > 0 && o->hidden > 0)
            per_token += 12.0 * o->layers * (double)o->seq * o->hidden;
        return per_token * o->tokens_per_step * (double)steps;
    }
    for (int t = 0; t < TSA_DTYPE_COUNT; t++)
        by_dtype[t] += d->gemm_flops_by_dtype[t];
    return d->gemm_flops;
}

static const char *flops_source(const tsa_analysis_options *o, double flops)
{
    if (o->flops_per_step > 0)
        return "flops-per-step";
    if (o->params > 0 && o->tokens_per_step > 0)
        return "formula";
    return flops > 0 ? "gemm" : "none";
}

void tsa_job_flops(tsa_analysis *a)
{
    double by_dtype[TSA_DTYPE_COUNT] = {0};
    for (size_t i = 0; i < a->n_ranks; i++) {
        a->ranks[i].flops = rank_flops(a, &a->digests[i], a->steps, by_dtype);
        a->flops += a->ranks[i].flops;
    }
    a->flops_source = flops_source(&a->opt, a->flops);
    a->dtype = TSA_DTYPE_UNKNOWN;
    for (int d = 1; d < TSA_DTYPE_COUNT; d++)
        if (by_dtype[d] > by_dtype[a->dtype])
            a->dtype = (tsa_dtype)d;
    if (a->opt.peak_tflops > 0) {
        a->peak_flops = a->opt.peak_tflops * 1e12;
        a->peak_source = "--peak-tflops";
    } else {
        a->peak_flops = tsa_peak_flops(a->device_name, a->dtype, &a->peak_source);
    }
}
