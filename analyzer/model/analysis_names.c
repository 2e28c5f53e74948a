/* The names of the analysis result's values (model/analysis.h), as the text
 * report prints them and the JSON keys spell them, and which budget lines
 * count as recoverable or measured. */
#include <math.h>

#include "analysis.h"

const char *tsa_budget_line_name(tsa_budget_line l)
{
    static const char *const names[TSA_BL_COUNT] = {
        "useful_compute", "compute_overhead", "data_stall", "exposed_comm_wait",
        "exposed_comm_transfer", "host_launch_idle", "copy_only", "other"};
    return (unsigned)l < TSA_BL_COUNT ? names[l] : "?";
}

const char *tsa_budget_line_label(tsa_budget_line l)
{
    static const char *const names[TSA_BL_COUNT] = {
        "useful compute", "compute overhead", "data stall", "exposed comm (wait)",
        "exposed comm (transfer)", "host/launch idle", "memcpy/memset only", "other"};
    return (unsigned)l < TSA_BL_COUNT ? names[l] : "?";
}

int tsa_budget_line_recoverable(tsa_budget_line l)
{
    /* Copy-only time is GPU work (HTA counts it as busy), not idle to win back. */
    return l != TSA_BL_USEFUL && l != TSA_BL_OTHER && l != TSA_BL_COPY &&
           (unsigned)l < TSA_BL_COUNT;
}

int tsa_budget_line_measured(const tsa_budget *b, tsa_budget_line l, int gpu)
{
    /* Without FLOPs and a peak, useful compute is all measured compute, so
     * the overhead is unknown rather than 0.  Host records alone cannot see
     * the GPU wait for data or for a launch, nor copies: those lines are 0
     * by construction there, not a measured 0. */
    if (l == TSA_BL_OVERHEAD)
        return !isnan(b->mfu);
    return gpu || (l != TSA_BL_DATA_STALL && l != TSA_BL_HOST_IDLE && l != TSA_BL_COPY);
}

const char *tsa_step_method_name(tsa_step_method m)
{
    switch (m) {
    case TSA_STEPS_COLLECTIVES: return "collective pattern";
    case TSA_STEPS_NVTX: return "ProfilerStep ranges";
    case TSA_STEPS_MARKER: return "step marker";
    case TSA_STEPS_AUTOGRAD: return "forward/backward thread cycle";
    case TSA_STEPS_DATALOADER: return "DataLoader iterations";
    case TSA_STEPS_OPTIMIZER: return "Optimizer.step calls";
    case TSA_STEPS_TOP_CALL: return "a repeated top-level call";
    default: return "none (whole run)";
    }
}

const char *tsa_verdict_name(tsa_verdict v)
{
    switch (v) {
    case TSA_VERDICT_GPU_BOUND: return "gpu-bound";
    case TSA_VERDICT_DATA_BOUND: return "data-bound";
    case TSA_VERDICT_COMM_BOUND: return "communication-bound";
    case TSA_VERDICT_HOST_BOUND: return "host-bound";
    case TSA_VERDICT_STRAGGLER_BOUND: return "straggler-bound";
    case TSA_VERDICT_COMPUTE_BOUND: return "compute-bound";
    case TSA_VERDICT_COPY_BOUND: return "copy-bound";
    default: return "unknown";
    }
}

const char *tsa_size_bucket_name(int b)
{
    static const char *const names[TSA_SIZE_BUCKETS] = {
        "<64KiB", "64KiB-1MiB", "1-16MiB", "16-128MiB", "128MiB-1GiB", ">=1GiB",
        "bytes unknown"};
    return b >= 0 && b < TSA_SIZE_BUCKETS ? names[b] : "?";
}

const char *tsa_cause_kind_name(tsa_cause_kind k)
{
    static const char *const names[TSA_CAUSE_KINDS] = {"device", "work", "host", "arrival",
                                                       "link", "gpu-link", "network",
                                                       "gpu-health"};
    return (unsigned)k < TSA_CAUSE_KINDS ? names[k] : "?";
}
