/* What-if: move the chosen ranks' work before each collective down to the
 * median of the other ranks' and recompute who arrives last.  Every collective
 * re-synchronises all ranks, so the time saved at each one adds up to the
 * job time saved.  A rank's very first collective has no measured work and
 * saves nothing. */
#include <stdlib.h>

#include "xr_internal.h"

int64_t xr_whatif(const xr_ctx *c, const uint8_t *mask, int64_t *per_step)
{
    int64_t total = 0;
    int64_t *others = malloc(xr_largest_instance(c) * sizeof *others);
    xr_member *ms = xr_scratch_members(c);
    if (!others || !ms) {
        free(others);
        free(ms);
        return 0;
    }
    for (size_t k = 0; k < c->n_inst; k++) {
        const xr_instance *in = &c->inst[k];
        if (!in->usable)
            continue;
        xr_members(c, in, ms);
        size_t no = 0;
        for (uint32_t j = 0; j < in->n; j++) {
            const xr_member *m = &ms[j];
            if (!mask[m->rank] && m->gap != XR_GAP_UNKNOWN)
                others[no++] = m->gap;
        }
        if (!no)
            continue;
        int64_t ref = xr_median_i64(others, no);
        int64_t latest = INT64_MIN;
        for (uint32_t j = 0; j < in->n; j++) {
            const xr_member *m = &ms[j];
            int64_t a = m->arrive;
            if (mask[m->rank] && m->gap != XR_GAP_UNKNOWN && m->gap > ref)
                a -= m->gap - ref;
            if (a > latest)
                latest = a;
        }
        int64_t saved = in->latest - latest;
        if (saved <= 0)
            continue;
        total += saved;
        if (per_step && in->step >= 0 && (size_t)in->step < c->n_steps)
            per_step[in->step] += saved;
    }
    free(others);
    free(ms);
    return total;
}
