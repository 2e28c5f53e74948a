/* The what-if's finding: one per job, the class the replay points at.
 * Its recoverable time is what that one fix gives back (the spread: the
 * whole gap to the ideal), so it never exceeds the job's step time. */
#include <stdio.h>

#include "wi_internal.h"

static tsa_severity severity_of(int64_t saved, int64_t wall)
{
    double f = wall > 0 ? (double)saved / (double)wall : 0;
    return f >= 0.10 ? TSA_SEV_CRITICAL : f >= 0.01 ? TSA_SEV_WARNING : TSA_SEV_INFO;
}

void wi_add_finding(const tsa_pipe_result *r, tsa_findings *f)
{
    const char *id = tsa_pipe_class_id(r->cls);
    if (!id || !r->steps)
        return;
    int64_t R = r->actual_ns - r->ideal_ns;
    int64_t saved = tsa_pipe_blamed_ns(r);
    double per_step = (double)saved / (double)r->steps / 1e6;
    /* Of the recorded step time, the wall the verdict and the budget use,
     * so the finding, the verdict and the what-if print one share. */
    double share = r->recorded_ns > 0 ? 100.0 * (double)saved / (double)r->recorded_ns : 0;
    char who[320];
    tsa_pipe_culprit_text(r, id, who, sizeof who);
    int rank = r->cls == TSA_PIPE_SLOW_WORKER ? r->global_rank[r->culprit] : -1;
    /* per class: what was found, the fix, what the fix is of */
    static const struct {
        const char *lead, *fix, *what;
    } text[] = {
        [TSA_PIPE_SLOW_WORKER] = {"one slow worker: %s sets the pace of the job",
            "Look at this worker's GPU and host first: clocks and throttling (nvidia-smi -q -d "
            "PERFORMANCE,CLOCK), its NVLink/PCIe links, other processes on the node; if it "
            "stays slow, drain the node and restart without it. Its pipeline neighbours only "
            "wait for it.", "fixing this worker alone"},
        [TSA_PIPE_SLOW_STAGE] = {"slow pipeline stage: %s takes longer than the other stages on "
            "every DP rank",
            "Repartition the pipeline: give this stage fewer layers (or account for the "
            "embedding / loss layers it holds, e.g. Megatron's "
            "--decoder-first/last-pipeline-num-layers), or check that all its workers share "
            "a slow resource.", "balancing this stage"},
        [TSA_PIPE_SLOW_DP] = {"slow data-parallel group: %s is slow on every stage",
            "All stages of this DP rank are slow: look for what they share (a node, a switch, "
            "their shard of the data: longer sequences) and balance the data across DP ranks.",
            "fixing this DP rank"},
        [TSA_PIPE_SPREAD] = {"slowdown spread over the workers, stage %d worst",
            "Work per micro-batch varies from step to step on every worker (e.g. sequence "
            "lengths): balance tokens per micro-batch (packing, length-grouped batching) and "
            "between stages; no single machine is to blame.", "removing all of it"},
    };
    char lead[512], best[32] = "this one";
    if (r->cls == TSA_PIPE_SPREAD) {
        snprintf(lead, sizeof lead, text[r->cls].lead, r->worst_stage);
        snprintf(best, sizeof best, "stage %d", r->worst_stage);
    } else {
        snprintf(lead, sizeof lead, text[r->cls].lead, who);
    }
    tsa_finding *x = tsa_findings_add(f, id, severity_of(saved, r->actual_ns), (double)saved / 1e9,
        rank, text[r->cls].fix,
        "%s; the step runs %.2fx as long as with every operation running like its peers' (S), "
        "and %s gives back %.1f%% of the recorded step time (%.2f ms per step); the best "
        "single fix (%s) explains %.0f%% of the slowdown",
        lead, r->slowdown, text[r->cls].what, share, per_step, best, 100.0 * r->explained);
    if (!x)
        return;
    tsa_finding_evidence(x, "pipeline from the send/receive pairs: %zu stages x %zu DP ranks, "
                            "%zu workers", r->n_stages, r->n_dp, r->n_ranks);
    tsa_finding_evidence(x, "%zu steps replayed: %zu operations, %zu matched collectives and "
                            "send/recv pairs; the record replays to itself within %.3f ms per "
                            "step", r->steps, r->nodes, r->hubs, (double)r->replay_error_ns / 1e6);
    tsa_finding_evidence(x, "typical: each kernel at its mean on every worker, each transfer at "
                            "its median; the fix replayed: %.2f ms per step of %.2f recorded",
                         per_step, (double)r->recorded_ns / 1e6 / (double)r->steps);
    tsa_finding_number(x, "slowdown_S", r->slowdown);
    tsa_finding_number(x, "recoverable_share", r->recorded_ns > 0 ? (double)R / (double)r->recorded_ns : 0);
    tsa_finding_number(x, "saved_share", share / 100.0);
    tsa_finding_number(x, "saved_s", (double)saved / 1e9);
    tsa_finding_number(x, "saved_per_step_s", per_step / 1e3);
    tsa_finding_number(x, "explained", r->explained);
    tsa_finding_number(x, "culprit", r->culprit);
    tsa_finding_number(x, "worst_stage", r->worst_stage);
}
