#include "group_share.h"

#include <stdlib.h>

#include "tsc_format.h"

static int is_member(const tsa_nccl_op *op)
{
    return op->kernel < 0 && (op->group_depth > 0 || (op->flags & TSC_NCCL_F_IN_GROUP)) &&
           op->op != TSC_NCCL_GROUP_START && op->op != TSC_NCCL_GROUP_END &&
           op->op < TSC_NCCL_COMM_INIT_RANK;
}

/* Slices the group's time among the pending members of its thread.  The
 * group runs from its first pending call (the outermost GroupStart when it
 * was recorded) to the end of the GroupEnd, so the slices cover all the
 * communication time the group's calls stand for. */
static void share_out(const tsa_rank *r, tsa_call_span *sp, const size_t *pend, size_t n_pend,
                      uint32_t tid, int64_t s, int64_t e)
{
    uint64_t bytes = 0;
    size_t members = 0;
    for (size_t k = 0; k < n_pend; k++) {
        const tsa_nccl_op *op = &r->nccl[pend[k]];
        if (op->tid != tid)
            continue;
        if (op->gpu_start_ns < s)
            s = op->gpu_start_ns;
        if (op->op == TSC_NCCL_GROUP_START)
            continue;
        bytes += op->bytes;
        members++;
    }
    if (!members || e <= s)
        return;
    int64_t d = e - s, at = s;
    uint64_t done_bytes = 0;
    size_t seen = 0;
    for (size_t k = 0; k < n_pend; k++) {
        const tsa_nccl_op *op = &r->nccl[pend[k]];
        if (op->tid != tid || op->op == TSC_NCCL_GROUP_START)
            continue;
        seen++;
        done_bytes += op->bytes;
        /* Cumulative, so the slices tile [s, e) exactly. */
        int64_t upto = seen == members ? e
                       : bytes ? s + (int64_t)((double)d * (double)done_bytes / (double)bytes)
                               : s + (int64_t)((double)d * (double)seen / (double)members);
        if (upto < at)
            upto = at;
        if (upto > e)
            upto = e;
        sp[pend[k]].start_ns = at;
        sp[pend[k]].end_ns = upto;
        at = upto;
    }
}

tsa_call_span *tsa_call_spans(const tsa_rank *r)
{
    if (!r->n_nccl)
        return NULL;
    tsa_call_span *sp = malloc(r->n_nccl * sizeof *sp);
    size_t *pend = malloc(r->n_nccl * sizeof *pend);
    if (!sp || !pend) {
        free(sp);
        free(pend);
        return NULL;
    }
    size_t n_pend = 0;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        sp[i].start_ns = op->gpu_start_ns;
        sp[i].end_ns = op->gpu_end_ns;
        sp[i].skip = op->op == TSC_NCCL_GROUP_START || op->op == TSC_NCCL_GROUP_END;
        sp[i].own = !sp[i].skip && !is_member(op);
        if (is_member(op) || (op->op == TSC_NCCL_GROUP_START && op->group_depth == 0))
            pend[n_pend++] = i;
        /* Only the outermost GroupEnd (depth 1 at entry) runs the group. */
        if (op->op == TSC_NCCL_GROUP_END && op->group_depth <= 1) {
            share_out(r, sp, pend, n_pend, op->tid, op->gpu_start_ns, op->gpu_end_ns);
            size_t w = 0;
            for (size_t k = 0; k < n_pend; k++)
                if (r->nccl[pend[k]].tid != op->tid)
                    pend[w++] = pend[k];
            n_pend = w;
        }
    }
    free(pend);
    return sp;
}
