/* When grouped calls completed on the host (xr_internal.h).
 *
 * Between ncclGroupStart and ncclGroupEnd a collective only enqueues and
 * returns at once; the thread's outermost GroupEnd launches the group and
 * blocks until every member rank joined.  A grouped call's own end is
 * therefore no meeting point: a rank that arrives late leaves its
 * AllReduce "late" while the others left theirs at once and waited in
 * GroupEnd.  Taken as the collective's end, that difference reads as a
 * clock offset, and the clock alignment then explains the straggler away. */
#include <stdlib.h>

#include "tsc_format.h"
#include "xr_internal.h"

/* A call inside a group without its own GPU interval (no linked kernel). */
static int grouped_host_call(const tsa_nccl_op *op)
{
    return op->kernel < 0 && (op->group_depth > 0 || (op->flags & TSC_NCCL_F_IN_GROUP)) &&
           op->op >= TSC_NCCL_ALLREDUCE && op->op <= TSC_NCCL_RECV;
}

int64_t *xr_group_done(const tsa_rank *r)
{
    int64_t *done = malloc((r->n_nccl ? r->n_nccl : 1) * sizeof *done);
    size_t *open = malloc((r->n_nccl ? r->n_nccl : 1) * sizeof *open);
    if (!done || !open) {
        free(done);
        free(open);
        return NULL;
    }
    size_t n_open = 0;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        done[i] = op->end_ns;
        if (grouped_host_call(op))
            open[n_open++] = i;
        /* Only the outermost GroupEnd (depth 1 at entry) runs the group. */
        if (op->op != TSC_NCCL_GROUP_END || op->group_depth > 1)
            continue;
        size_t w = 0;
        for (size_t k = 0; k < n_open; k++) {
            const tsa_nccl_op *m = &r->nccl[open[k]];
            if (m->tid != op->tid)
                open[w++] = open[k];
            else if (op->end_ns > done[open[k]])
                done[open[k]] = op->end_ns;
        }
        n_open = w;
    }
    free(open);
    return done;
}
