#include "verdict.h"

#include <string.h>

#include "attribution.h"
#include "findings/idle.h"
#include "findings/netlink.h"
#include "util/fmt_duration.h"
#include "passes/idle_cause.h"
#include "passes/input_facts.h"
#include "whatif/whatif.h"

/* The late-rank finding that costs the most, or NULL. */
static const tsa_finding *top_late_rank(const tsa_analysis *a)
{
    const tsa_finding *best = NULL;
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        /* Bursts slow some steps, they do not set the pace of the job. */
        if (!tsa_finding_is_late_rank(f->id) || !strcmp(f->id, "DIST.INTERMITTENT"))
            continue;
        if (!best || f->recoverable_ns > best->recoverable_ns)
            best = f;
    }
    return best;
}

/* "rank 2 (vm)", "host vm (ranks 2, 3)", "ranks 1, 5" */
static void culprit_text(const tsa_analysis *a, const tsa_finding *f, char *buf, size_t len)
{
    const tsa_xrank_result *x = &a->xrank;
    size_t at = 0;
    if (tsa_pipe_culprit_text(a->pipe, f->id, buf, len))
        return;
    const int32_t *list = NULL;
    size_t n = 0;
    if (!strcmp(f->id, "DIST.SLOW_HOST") && x->slow_host) {
        at = (size_t)snprintf(buf, len, "host %s (rank%s ", x->slow_host,
                              x->n_slow_host_ranks == 1 ? "" : "s");
        list = x->slow_host_ranks;
        n = x->n_slow_host_ranks;
    } else if (!strcmp(f->id, "DIST.IMBALANCE") && x->n_imbalanced) {
        at = (size_t)snprintf(buf, len, "ranks ");
        list = x->imbalanced_ranks;
        n = x->n_imbalanced;
    } else {
        const char *host = x->straggler ? x->straggler->host : NULL;
        snprintf(buf, len, "rank %d%s%s%s", f->rank, host ? " (" : "", host ? host : "",
                 host ? ")" : "");
        return;
    }
    for (size_t i = 0; i < n && at + 16 < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? ", " : "", list[i]);
    if (at + 16 >= len)
        at += (size_t)snprintf(buf + at, len - at, ", ...");
    if (!strcmp(f->id, "DIST.SLOW_HOST") && at < len)
        snprintf(buf + at, len - at, ")");
}

void tsa_decide_verdict(tsa_analysis *a)
{
    const tsa_budget *b = &a->budget;
    const int64_t *late = a->late_rank_ns;
    a->verdict_rank = -1;
    a->verdict_host = NULL;
    if (a->cpu_only) { /* no GPU work to attribute: no GPU-bound claim */
        a->verdict = TSA_VERDICT_UNKNOWN;
        const char *idle_gpu = tsa_job_idle_gpu(a->job);
        int at;
        if (a->cut_short)
            at = snprintf(a->verdict_reason, sizeof a->verdict_reason,
                          "no GPU records before the input ends (cut short)");
        else if (tsa_rank_launches_only(a->job))
            at = snprintf(a->verdict_reason, sizeof a->verdict_reason,
                          "no GPU records: the trace has kernel launches but no kernel records "
                          "(CUDA activity off, or a CUPTI range-profiler trace), so there is no "
                          "GPU time to attribute");
        else if (idle_gpu)
            at = snprintf(a->verdict_reason, sizeof a->verdict_reason,
                          "no GPU records: the trace names a GPU (%s) and holds CUDA runtime "
                          "calls, but no kernel or copy ran on it: the model ran on the CPU "
                          "(move the model and its inputs with .to(\"cuda\")), so there is no "
                          "GPU time to attribute", idle_gpu);
        else
            at = snprintf(a->verdict_reason, sizeof a->verdict_reason,
                          "no GPU records: no CUDA kernels, copies or NCCL calls (a CPU-only "
                          "trace, or an accelerator tscope does not read), so there is no GPU "
                          "time to attribute");
        if (a->host_data && b->wall_ns > 0 && at > 0 && (size_t)at < sizeof a->verdict_reason)
            snprintf(a->verdict_reason + at, sizeof a->verdict_reason - (size_t)at,
                     "; its host records show the loop waiting for its DataLoader %.1f%% of "
                     "the window (DATA.STALL)",
                     100 * (double)b->line_ns[TSA_BL_DATA_STALL] / (double)b->wall_ns);
        return;
    }
    if (b->wall_ns <= 0) {
        a->verdict = TSA_VERDICT_UNKNOWN;
        snprintf(a->verdict_reason, sizeof a->verdict_reason, "no time was analysed");
        return;
    }
    /* Shares of the attributed budget: what the late ranks claimed is
     * taken out of the lines it came from, so the shares are disjoint. */
    double w = (double)b->wall_ns;
    int64_t late_all = 0;
    for (int l = 0; l < TSA_BL_COUNT; l++)
        late_all += late[l];
    double straggler = (double)late_all / w;
    double compute = (double)(b->line_ns[TSA_BL_USEFUL] + b->line_ns[TSA_BL_OVERHEAD] -
                              late[TSA_BL_USEFUL] - late[TSA_BL_OVERHEAD]) / w;
    double data = (double)(b->line_ns[TSA_BL_DATA_STALL] - late[TSA_BL_DATA_STALL]) / w;
    double comm = (double)(b->line_ns[TSA_BL_COMM_WAIT] + b->line_ns[TSA_BL_COMM_TRANSFER] -
                           late[TSA_BL_COMM_WAIT]) / w;
    double host = (double)(b->line_ns[TSA_BL_HOST_IDLE] - late[TSA_BL_HOST_IDLE]) / w;
    /* With GPU records, "other" is GPU idle that no launch, data or NCCL
     * time explains: the host is busy with work tscope does not see (Python,
     * CPU operators) or waits.  Left out of the vote, a mostly idle GPU was
     * called host-bound for its small launch share (kineto corpus, alexnet). */
    double unexplained = a->gpu ? (double)(b->line_ns[TSA_BL_OTHER] - late[TSA_BL_OTHER]) / w : 0;
    char rest[256];
    int at = a->gpu ? snprintf(rest, sizeof rest,
                               "compute %.1f%%, exposed communication %.1f%%, data stall %.1f%%, "
                               "host idle %.1f%%",
                               100 * compute, 100 * comm, 100 * data, 100 * host)
                    : snprintf(rest, sizeof rest,
                               "compute %.1f%%, exposed communication %.1f%% (data stall and "
                               "host idle not measured without GPU records)",
                               100 * compute, 100 * comm);
    if (a->gpu && at > 0 && (size_t)at < sizeof rest)
        at += snprintf(rest + at, sizeof rest - (size_t)at,
                       ", GPU idle unexplained %.1f%%", 100 * unexplained);
    const tsa_finding *lf = top_late_rank(a);
    int pace = lf && a->wall_ns > 0 &&
               (double)lf->recoverable_ns >= TSA_TH_LATE_RANK_VERDICT * (double)a->wall_ns;
    if (late_all > 0 && !pace && at > 0 && (size_t)at < sizeof rest)
        snprintf(rest + at, sizeof rest - (size_t)at, ", late ranks %.1f%%", 100 * straggler);

    if (pace) {
        char who[96], cost[32];
        culprit_text(a, lf, who, sizeof who);
        a->verdict = TSA_VERDICT_STRAGGLER_BOUND;
        a->verdict_rank = lf->rank;
        a->verdict_host = !strcmp(lf->id, "DIST.SLOW_HOST") ? a->xrank.slow_host
                          : a->xrank.straggler && a->xrank.straggler->rank == lf->rank
                              ? a->xrank.straggler->host
                              : NULL;
        int one = !strcmp(lf->id, "DIST.STRAGGLER") || !strcmp(lf->id, "PIPE.SLOW_WORKER");
        snprintf(a->verdict_reason, sizeof a->verdict_reason,
                 "%s set%s the pace (%s): %s extra time and the other ranks' waiting for %s "
                 "cost %.1f%% of wall time (%s per rank); the rest: %s",
                 who, one ? "s" : "", lf->id, one ? "its" : "their", one ? "it" : "them",
                 100 * straggler, tsa_fmt_duration(cost, sizeof cost, lf->recoverable_s * 1e9),
                 rest);
        return;
    }
    tsa_verdict v = a->gpu ? TSA_VERDICT_GPU_BOUND : TSA_VERDICT_COMPUTE_BOUND;
    /* Compute is the work the job is for: a loss that takes a quarter of
     * the wall bounds the step even when compute is larger (a DataLoader-
     * bound ResNet computes 56% of the time and waits for data 33%). */
    double top = compute;
    double losses = comm > data ? comm : data;
    losses = host > losses ? host : losses;
    if (losses >= TSA_TH_LOSS_VERDICT && top > losses)
        top = losses - 1e-12;
    /* Without GPU records compute is host time outside NCCL calls: the
     * GPU's share of it is unknown, so it is not called gpu-bound. */
    const char *what = a->gpu ? "compute" : "compute (host time outside NCCL; no GPU records)";
    char host_what[160];
    const char *host_how;
    const char *host_id = tsa_host_idle_finding(a, &host_how);
    snprintf(host_what, sizeof host_what, "GPU idle %s (%s)", host_how, host_id);
    if (comm > top) { v = TSA_VERDICT_COMM_BOUND; top = comm; what = "exposed communication"; }
    if (data > top) {
        v = TSA_VERDICT_DATA_BOUND;
        top = data;
        what = "data stall: the GPU waits for the input pipeline (DATA.STALL: DataLoader "
               "waits or per-step input copies in the trace)";
    }
    if (host > top) { v = TSA_VERDICT_HOST_BOUND; top = host; what = host_what; }
    /* Copies with no kernel running are GPU time too: a job that mostly
     * moves data between host and device is bound by those transfers. */
    double copy = a->gpu ? (double)(b->line_ns[TSA_BL_COPY] - late[TSA_BL_COPY]) / w : 0;
    char copy_what[160];
    if (copy > top) {
        v = TSA_VERDICT_COPY_BOUND;
        top = copy;
        snprintf(copy_what, sizeof copy_what,
                 "host-device transfer: memcpy/memset records with no kernel running, %.1f%% "
                 "of wall (MEM.COPIES)", 100 * copy);
        what = copy_what;
    }
    if (unexplained > top) {
        /* Without CPU operator records nothing says what the host did. */
        v = a->host_records ? TSA_VERDICT_HOST_BOUND : TSA_VERDICT_UNKNOWN;
        top = unexplained;
        what = a->host_records ? "GPU idle with nothing traced on the host (Python or other "
                                 "untraced host work)"
                               : "GPU idle that the trace cannot explain (it holds no host "
                                 "records)";
    }
    a->verdict = v;
    /* Which link paces the collectives, or how to find out. */
    char paced_by[192] = "", hint[192] = "";
    if (v == TSA_VERDICT_COMM_BOUND) {
        tsa_netlink_pacing(a, paced_by, sizeof paced_by);
        if (!*paced_by && b->line_ns[TSA_BL_COMM_TRANSFER] >
                          b->line_ns[TSA_BL_COMM_WAIT] - late[TSA_BL_COMM_WAIT])
            tsa_netlink_light_hint(a, hint, sizeof hint);
    }
    snprintf(a->verdict_reason, sizeof a->verdict_reason,
             "%s is the largest share of wall time%s: %s%s", what, paced_by, rest, hint);
}

/* A straggler-bound verdict lists the late rank's finding first: it is
 * what sets the pace, whatever the size of the other findings. */
void tsa_verdict_lead(tsa_analysis *a)
{
    if (a->verdict != TSA_VERDICT_STRAGGLER_BOUND)
        return;
    tsa_finding *v = a->findings.items;
    for (size_t i = 0; i < a->findings.n; i++)
        if (tsa_finding_is_late_rank(v[i].id) && v[i].rank == a->verdict_rank &&
            strcmp(v[i].id, "DIST.INTERMITTENT")) {
            tsa_finding lead = v[i];
            memmove(v + 1, v, i * sizeof *v);
            v[0] = lead;
            return;
        }
}
