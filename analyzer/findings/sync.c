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
#include "mix.h"

#include <string.h>

#include "util/interval_set.h"
#include "passes/rank_stages.h"
#include "util/sat_math.h"

static int blocks_host(uint8_t kind)
{
    return kind == TSA_SYNC_STREAM || kind == TSA_SYNC_EVENT || kind == TSA_SYNC_CONTEXT ||
           kind == TSA_SYNC_DEVICE;
}

int tsa_sync_measure_rank(const tsa_rank *r, const tsa_rank_result *rr, tsa_sync_totals *t)
{
    if ((!r->n_kernels && !r->n_copies) || rr->method == TSA_STEPS_NONE)
        return 0; /* no GPU records (no bubble to see) or no steps to be inside */
    uint64_t steps = 0;
    for (size_t s = 0; s < r->n_steps; s++)
        steps += !r->steps[s].warmup;
    if (!steps)
        return 0;
    tsa_ivset busy, bubbles;
    tsa_ivset_init(&busy);
    tsa_ivset_init(&bubbles);
    int oom = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        oom |= tsa_ivset_push(&busy, r->kernels[i].start_ns, r->kernels[i].end_ns);
    for (size_t i = 0; i < r->n_copies; i++)
        oom |= tsa_ivset_push(&busy, r->copies[i].start_ns, r->copies[i].end_ns);
    tsa_ivset_normalize(&busy);
    /* Syncs and steps are both sorted by start: walk them together. */
    size_t st = 0;
    for (size_t i = 0; i < r->n_syncs && !oom; i++) {
        const tsa_sync *y = &r->syncs[i];
        while (st < r->n_steps && r->steps[st].end_ns <= y->start_ns)
            st++;
        if (st == r->n_steps)
            break;
        const tsa_step *step = &r->steps[st];
        if (!blocks_host(y->kind) || step->warmup || y->start_ns < step->start_ns)
            continue;
        t->syncs++;
        int64_t back = y->end_ns < step->end_ns ? y->end_ns : step->end_ns;
        if (back > y->start_ns)
            TSA_SAT_ACC(t->host_ns, back - y->start_ns);
        int64_t next = tsa_ivset_next_start(&busy, back);
        oom |= tsa_ivset_push(&bubbles, back, next < step->end_ns ? next : step->end_ns);
    }
    tsa_ivset_normalize(&bubbles);
    tsa_ivset_clip(&bubbles, rr->window_start_ns, rr->window_end_ns);
    TSA_SAT_ACC(t->idle_ns, tsa_ivset_length(&bubbles));
    TSA_SAT_ACC(t->wall_ns, rr->window_end_ns - rr->window_start_ns);
    t->steps += steps;
    tsa_ivset_free(&busy);
    tsa_ivset_free(&bubbles);
    return oom ? -1 : 0;
}

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
    tsa_finding_number(f, "syncs", (double)t.syncs);
    tsa_finding_number(f, "syncs_per_step", per_step);
    tsa_finding_number(f, "idle_share", idle);
    tsa_finding_number(f, "host_blocked_share", (double)t.host_ns / (double)t.wall_ns);
    return 0;
}
