#include "core.h"
#include "idle.h"
#include "passes/input_workers.h"
#include "passes/partial.h"

#include <math.h>

/* Recoverable seconds are per rank on average: the job's wall time is one
 * rank's window, and the budget sums the ranks. */
static double per_rank_s(const tsa_analysis *a, int64_t ns)
{
    return a->n_ranks ? (double)ns / (double)a->n_ranks / 1e9 : 0;
}

/* Step-start gaps whose data stall stood on the DataLoader workers' CPU
 * telemetry, over all ranks, and their mean worker CPU. */
static uint32_t worker_gaps(const tsa_analysis *a, double *cpus_mean)
{
    uint32_t n = 0;
    double sum = 0;
    for (size_t i = 0; i < a->n_ranks; i++) {
        n += a->ranks[i].input.gaps[TSA_INPUT_WORKERS];
        sum += a->ranks[i].input.worker_cpus_sum;
    }
    *cpus_mean = n ? sum / n : 0;
    return n;
}

static tsa_severity level(double share, double warn, double crit)
{
    return share >= crit ? TSA_SEV_CRITICAL : share >= warn ? TSA_SEV_WARNING : TSA_SEV_INFO;
}

int tsa_core_findings(const tsa_analysis *a, tsa_findings *out)
{
    const tsa_budget *b = &a->budget;
    double w = (double)b->wall_ns;
    tsa_finding *f;
    if (w > 0) {
        double exposed = (double)a->overlap.exposed_ns / w;
        if (exposed >= TSA_TH_EXPOSED_WARN) {
            /* Waiting for peers is lost to imbalance, not to the network:
             * overlap tuning cannot win it back, so point at the cause. */
            int mostly_wait = a->overlap.exposed_wait_ns > a->overlap.exposed_transfer_ns;
            f = tsa_findings_add(
                out, "COMM.EXPOSED", level(exposed, TSA_TH_EXPOSED_WARN, TSA_TH_EXPOSED_CRIT),
                per_rank_s(a, a->overlap.exposed_ns), -1,
                mostly_wait ? "Most of it is waiting for slower peers: fix the rank or host named "
                              "in the DIST.* findings first; then overlap the rest (DDP "
                              "bucket_cap_mb, FSDP backward_prefetch/forward_prefetch)"
                            : "Overlap communication with compute: for DDP tune bucket_cap_mb "
                              "and keep gradient_as_bucket_view; for FSDP enable "
                              "backward_prefetch=BACKWARD_PRE and forward_prefetch; then check "
                              "busbw against the interconnect",
                "%.1f%% of wall time is communication not hidden behind compute "
                "(%.1f%% waiting for peers, %.1f%% transfer)",
                100 * exposed, 100 * (double)a->overlap.exposed_wait_ns / w,
                100 * (double)a->overlap.exposed_transfer_ns / w);
            if (!f)
                return -1;
            tsa_finding_evidence(f, "%s, over the analysis windows of %zu rank(s)",
                                 a->gpu ? "communication kernels on the GPU"
                                        : "NCCL calls' host time (no GPU records)",
                                 a->n_ranks);
            tsa_finding_evidence(f, "exposed: communication time no compute kernel of the "
                                    "same rank ran under");
            int32_t world = tsa_missing_ranks_world(a->job);
            if (world)
                tsa_finding_evidence(f, "not split into waiting and transfer: %zu of %d ranks "
                                        "read, so no collective's last arrival is known",
                                     a->job->n_ranks, world);
            else
                tsa_finding_evidence(f, "waiting: each collective's time before its last "
                                        "member arrived (common clock over %zu rank(s))",
                                     a->n_ranks);
            tsa_finding_number(f, "exposed_share", exposed);
            tsa_finding_number(f, "wait_share", (double)a->overlap.exposed_wait_ns / w);
            tsa_finding_number(f, "transfer_share", (double)a->overlap.exposed_transfer_ns / w);
            tsa_finding_number(f, "overlapped_share_of_comm",
                               a->overlap.comm_ns ? (double)a->overlap.overlapped_ns /
                                                        (double)a->overlap.comm_ns
                                                  : 0);
        }
        double stall = (double)b->line_ns[TSA_BL_DATA_STALL] / w;
        if (stall >= TSA_TH_STALL_WARN) {
            double worker_cpus;
            uint32_t on_workers = worker_gaps(a, &worker_cpus);
            f = tsa_findings_add(
                out, "DATA.STALL", level(stall, TSA_TH_STALL_WARN, TSA_TH_STALL_CRIT),
                per_rank_s(a, b->line_ns[TSA_BL_DATA_STALL]), -1,
                "Feed the GPU faster: raise DataLoader num_workers, set pin_memory=True and "
                "persistent_workers=True, raise prefetch_factor, move decoding and "
                "augmentation out of the training process",
                "the GPU waits for input %.1f%% of wall time before each step's work (the "
                "evidence: the host in its DataLoader then, or steps that open with a "
                "host-to-device copy of their input%s)",
                100 * stall, on_workers ? ", or its DataLoader workers busy" : "");
            if (!f)
                return -1;
            tsa_finding_evidence(f, "GPU idle at the start of steps whose input work was "
                                    "recorded (a DataLoader span over the gap, or steps that each "
                                    "open with a host-to-device copy): %.1f%% of wall time, "
                                    "threshold %.0f%%",
                                 100 * stall, 100 * TSA_TH_STALL_WARN);
            if (on_workers) /* the other two kinds are in the line above */
                tsa_finding_evidence(f, "DataLoader worker processes busy around %u step-start "
                                        "gap(s) with no DataLoader span or input copy recorded: "
                                        "%.0f%% CPU each on average over the host samples "
                                        "enclosing each gap (threshold %.0f%%)",
                                     on_workers, 100 * worker_cpus, 100 * TSA_WORKERS_BUSY);
            tsa_finding_evidence(f, "steps: %zu on %zu rank(s), by %s", a->steps, a->n_ranks,
                                 tsa_step_method_name(a->method));
            tsa_finding_number(f, "stall_share", stall);
            tsa_finding_number(f, "stall_per_step_ms",
                               a->steps && a->n_ranks
                                   ? (double)b->line_ns[TSA_BL_DATA_STALL] / 1e6 /
                                         (double)a->steps / (double)a->n_ranks
                                   : 0);
        }
        if (tsa_idle_findings(a, out))
            return -1;
        if (!isnan(b->mfu) && b->mfu < TSA_TH_MFU_INFO) {
            f = tsa_findings_add(
                out, "EFF.LOW_MFU", b->mfu < TSA_TH_MFU_WARN ? TSA_SEV_WARNING : TSA_SEV_INFO,
                per_rank_s(a, b->line_ns[TSA_BL_OVERHEAD]), -1,
                "Make the math faster: run GEMMs in bf16/fp16 (autocast), use fused attention "
                "(scaled_dot_product_attention), larger micro-batches and torch.compile to "
                "fuse elementwise kernels",
                "model FLOPs utilisation is %.1f%% of the %s peak", 100 * b->mfu,
                a->peak_source ? a->peak_source : "device");
            if (!f)
                return -1;
            tsa_finding_evidence(f, "FLOPs: %s", a->flops_source ? a->flops_source : "none");
            tsa_finding_evidence(f, "peak: %s", a->peak_source ? a->peak_source : "unknown");
            tsa_finding_number(f, "mfu", b->mfu);
            tsa_finding_number(f, "peak_tflops", a->peak_flops / 1e12);
            tsa_finding_number(f, "overhead_share", (double)b->line_ns[TSA_BL_OVERHEAD] / w);
        }
    }
    if (a->steps > 1 && a->step_cv > TSA_TH_STEP_CV) {
        f = tsa_findings_add(out, "STEP.IRREGULAR", TSA_SEV_INFO, 0, -1,
                             "Look for periodic work inside the loop (evaluation, checkpoints, "
                             "logging) and for a straggler in the cross-rank section",
                             "step time varies by %.0f%% (coefficient of variation)",
                             100 * a->step_cv);
        if (!f)
            return -1;
        tsa_finding_evidence(f, "%zu steps of the analysis window (step markers or the repeating "
                                "pattern the trace shows)", a->steps);
        tsa_finding_evidence(f, "step durations' coefficient of variation %.3f against the "
                                "threshold %.2f", a->step_cv, TSA_TH_STEP_CV);
        tsa_finding_number(f, "step_cv", a->step_cv);
    }
    uint64_t dropped = 0, cupti_dropped = 0, kernels_lost = 0, kernels = 0, device_dropped = 0;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const tsa_rank *r = &a->job->ranks[i];
        dropped += r->dropped_events;
        cupti_dropped += r->cupti_dropped_records;
        kernels_lost += r->gpu_kernels_lost;
        kernels += tsa_rank_kernel_count(r);
        device_dropped += r->gpu_dropped_device;
    }
    if (kernels_lost) {
        f = tsa_findings_add(out, "LOAD.KERNELS_LOST", TSA_SEV_WARNING, 0, -1,
                             "Look for CUPTI's dropped records and the writer's losses in "
                             "`tscope-report info`; a job killed mid-step loses its last kernels",
                             "kernels lost: %llu of %llu launched: GPU busy time, categories and "
                             "MFU are computed on the rest",
                             (unsigned long long)kernels_lost,
                             (unsigned long long)(kernels + kernels_lost));
        if (!f)
            return -1;
        f->confidence_cap = TSA_CONF_MEDIUM;
        tsa_finding_evidence(f, "kernels the dumps counted as launched without a GPU record: "
                                "%llu, over %zu rank(s)", (unsigned long long)kernels_lost,
                             a->job->n_ranks);
        tsa_finding_evidence(f, "kernel records read: %llu", (unsigned long long)kernels);
        tsa_finding_number(f, "kernels_lost", (double)kernels_lost);
        tsa_finding_number(f, "kernels_launched", (double)(kernels + kernels_lost));
    }
    if (dropped || cupti_dropped) {
        f = tsa_findings_add(out, "LOAD.DROPPED", TSA_SEV_WARNING, 0, -1,
                             "Raise the capture buffers (see docs) or use the light CUPTI mode",
                             "%llu events (and %llu CUPTI records, %llu of them device work) "
                             "were dropped during capture: totals may be low",
                             (unsigned long long)dropped, (unsigned long long)cupti_dropped,
                             (unsigned long long)device_dropped);
        if (!f)
            return -1;
        f->confidence_cap = TSA_CONF_MEDIUM;
        tsa_finding_evidence(f, "host events the recorder counted as dropped: %llu",
                             (unsigned long long)dropped);
        tsa_finding_evidence(f, "CUPTI records counted as dropped: %llu (%llu of device work)",
                             (unsigned long long)cupti_dropped,
                             (unsigned long long)device_dropped);
        tsa_finding_number(f, "dropped_events", (double)dropped);
        tsa_finding_number(f, "cupti_dropped_records", (double)cupti_dropped);
    }
    if (a->job->n_problems) {
        f = tsa_findings_add(out, "LOAD.PROBLEMS", TSA_SEV_WARNING, 0, -1,
                             "Run `tscope-report info DIR` to see each dump's problems",
                             "%zu problems while reading the dumps (listed below)",
                             a->job->n_problems);
        if (!f)
            return -1;
        f->confidence_cap = TSA_CONF_MEDIUM;
        tsa_finding_evidence(f, "problems the loader recorded while reading %zu rank(s): %zu",
                             a->job->n_ranks, a->job->n_problems);
        tsa_finding_number(f, "problems", (double)a->job->n_problems);
    }
    if (a->job->n_other_runs) {
        f = tsa_findings_add(out, "LOAD.OTHER_RUNS", TSA_SEV_INFO, 0, -1,
                             "Give each run its own output directory, or pick one with --run-id",
                             "the directory also holds dumps of %zu other run(s), not included",
                             a->job->n_other_runs);
        if (!f)
            return -1;
        tsa_finding_evidence(f, "dumps in the directory whose run id differs from the one read: "
                                "%zu other run(s)", a->job->n_other_runs);
    }
    int32_t world = tsa_missing_ranks_world(a->job);
    if (world) {
        f = tsa_findings_add(out, "LOAD.MISSING_RANKS", TSA_SEV_INFO, 0, -1,
                             "Profile every rank and put all their traces (or dumps) in one "
                             "directory",
                             "only %zu of the job's %d ranks were read: waiting for peers is "
                             "counted as transfer",
                             a->job->n_ranks, world);
        if (!f)
            return -1;
        f->confidence_cap = TSA_CONF_MEDIUM;
        tsa_finding_evidence(f, "traces or dumps of %zu rank(s) read", a->job->n_ranks);
        tsa_finding_evidence(f, "job size %d: the world size the inputs state or the largest "
                                "communicator a recorded collective ran on, whichever is larger",
                             world);
        tsa_finding_number(f, "ranks_read", (double)a->job->n_ranks);
        tsa_finding_number(f, "world_size", world);
    }
    return 0;
}
