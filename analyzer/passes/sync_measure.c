/* What HOST.SYNC (findings/sync.h) measures on one rank: the blocking
 * host syncs inside the analysed steps and the GPU bubbles after them. */
#include "sync_measure.h"

#include "util/interval_set.h"
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
