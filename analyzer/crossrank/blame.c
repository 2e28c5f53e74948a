/* Blame.  In a collective nobody can leave before the last rank arrives,
 * so per instance and rank (times on the common clock):
 *   wait     = latest arrival - own arrival
 *   transfer = own end - latest arrival
 * The unique last arriver is blamed for the others' summed wait
 * (blame_ns, rank-seconds), and for the wall time the whole job spent on
 * it alone: its arrival minus the next latest (wall_lost_ns).  A tie for
 * last blames nobody. */
#include <stdlib.h>

#include "xr_internal.h"

int xr_blame(xr_ctx *c, tsa_xrank_result *out)
{
    int64_t *scratch = malloc(xr_largest_instance(c) * sizeof *scratch);
    xr_member *ms = xr_scratch_members(c);
    if (!scratch || !ms) {
        free(scratch);
        free(ms);
        return -1;
    }

    for (size_t k = 0; k < c->n_inst; k++) {
        xr_instance *in = &c->inst[k];
        in->gap_median = XR_GAP_UNKNOWN;
        if (!in->usable)
            continue;
        xr_members(c, in, ms);
        int64_t latest = ms[0].arrive, second = INT64_MIN, sum = 0;
        int32_t last = ms[0].rank;
        int tie = 0;
        for (uint32_t j = 1; j < in->n; j++) {
            int64_t a = ms[j].arrive;
            if (a > latest) {
                second = latest;
                latest = a;
                last = ms[j].rank;
                tie = 0;
            } else if (a == latest) {
                second = a;
                tie = 1;
            } else if (a > second) {
                second = a;
            }
        }
        int64_t earliest = latest;
        for (uint32_t j = 0; j < in->n; j++)
            if (ms[j].arrive < earliest)
                earliest = ms[j].arrive;
        if (latest - earliest > XR_SPAN_MAX) {
            in->usable = 0;   /* ranks an hour apart: not one call, corrupt seqs */
            continue;
        }
        size_t ng = 0;
        for (uint32_t j = 0; j < in->n; j++) {
            const xr_member *m = &ms[j];
            tsa_rank_blame *b = &out->ranks[m->rank];
            int64_t wait = latest - m->arrive;
            int64_t transfer = m->end - latest;
            b->collectives++;
            b->wait_ns += wait;
            b->transfer_ns += transfer > 0 ? transfer : 0;
            sum += wait;
            if (m->gap != XR_GAP_UNKNOWN)
                scratch[ng++] = m->gap;
        }
        in->latest = latest;
        in->second = second;
        in->last = tie ? -1 : last;
        if (!tie) {
            tsa_rank_blame *b = &out->ranks[last];
            b->arrived_last++;
            b->blame_ns += sum;
            b->wall_lost_ns += latest - second;
        }
        if (ng)
            in->gap_median = xr_median_i64(scratch, ng);
        out->instances++;
    }
    for (size_t r = 0; r < c->n_ranks; r++) {
        tsa_rank_blame *b = &out->ranks[r];
        b->arrived_last_share = b->collectives ? (double)b->arrived_last / (double)b->collectives : 0;
    }
    free(scratch);
    free(ms);
    return 0;
}
