/* HOST.SYNC: blocking host synchronisations inside the analysed steps
 * (.item(), .cpu(), torch.cuda.synchronize(): cudaStreamSynchronize,
 * cudaEventSynchronize, cudaDeviceSynchronize, cuCtxSynchronize).
 *
 * A sync costs GPU time when it drains the queue: after it returns the GPU
 * has nothing to run until the host launches the next work.  That bubble is
 * measured per sync as the GPU idle time from the sync's return to the next
 * kernel or copy, cut at the end of the step it happened in (the next
 * step's start belongs to DATA.STALL).  Bubbles are united per rank, so
 * back-to-back syncs count once. */
#include "sync.h"

#include <string.h>

#include "advisory.h"
#include "passes/rank_stages.h"
#include "util/sat_math.h"

int tsa_sync_findings(const tsa_analysis *a, tsa_findings *out)
{
    tsa_sync_totals t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const tsa_sync_totals *p = &a->digests[i].sync;
        t.syncs += p->syncs;
        TSA_SAT_ACC(t.host_ns, p->host_ns);
        TSA_SAT_ACC(t.idle_ns, p->idle_ns);
        TSA_SAT_ACC(t.wall_ns, p->wall_ns);
        t.steps += p->steps;
    }
    if (!t.syncs || t.wall_ns <= 0)
        return 0;
    double idle = (double)t.idle_ns / (double)t.wall_ns;
    if (idle <= TSA_TH_SYNC_IDLE)
        return 0;
    double per_step = (double)t.syncs / (double)t.steps;
    tsa_finding *f = tsa_findings_add(
        out, "HOST.SYNC", tsa_advisory_level(idle, TSA_TH_SYNC_IDLE), 0, -1,
        "Take host synchronisations out of the step: no .item()/.cpu()/print(tensor)/"
        "torch.cuda.synchronize() per step; keep running metrics on the GPU and read them "
        "every N steps; use non_blocking copies and torch.cuda.Event to time",
        "%.1f blocking host syncs per step (cudaStreamSynchronize, .item(), ...) leave the "
        "GPU idle %.1f%% of wall time until the host launches more work",
        per_step, 100 * idle);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "blocking synchronisation calls recorded on the host: %llu over %llu "
                            "step(s)", (unsigned long long)t.syncs, (unsigned long long)t.steps);
    tsa_finding_evidence(f, "GPU idle after those calls until the next launch: %.1f%% of wall, "
                            "threshold %.0f%%", 100 * idle, 100 * TSA_TH_SYNC_IDLE);
    tsa_finding_number(f, "syncs", (double)t.syncs);
    tsa_finding_number(f, "syncs_per_step", per_step);
    tsa_finding_number(f, "idle_share", idle);
    tsa_finding_number(f, "host_blocked_share", (double)t.host_ns / (double)t.wall_ns);
    return 0;
}
