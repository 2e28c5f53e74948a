#include "group_share.h"

#include <stdlib.h>

#include "tsc_format.h"

static int is_member(const tsa_nccl_op *op)
{
    return op->kernel < 0 && (op->group_depth > 0 || (op->flags & TSC_NCCL_F_IN_GROUP)) &&
           tsc_nccl_op_kind(op->op) != TSC_NCCL_KIND_GROUP && !tsc_nccl_op_is_setup(op->op);
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

/* Calls each outermost GroupEnd of r with the calls still pending on its
 * thread (grouped members, and the outermost GroupStart that opened the
 * group), in record order.  -1 on OOM. */
typedef void (*group_fn)(const tsa_rank *r, const size_t *pend, size_t n_pend,
                         const tsa_nccl_op *group_end, void *ctx);

static int walk_groups(const tsa_rank *r, group_fn fn, void *ctx)
{
    size_t *pend = malloc((r->n_nccl ? r->n_nccl : 1) * sizeof *pend);
    if (!pend)
        return -1;
    size_t n_pend = 0;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        if (is_member(op) || (op->op == TSC_NCCL_GROUP_START && op->group_depth == 0))
            pend[n_pend++] = i;
        /* Only the outermost GroupEnd (depth 1 at entry) runs the group. */
        if (op->op == TSC_NCCL_GROUP_END && op->group_depth <= 1) {
            fn(r, pend, n_pend, op, ctx);
            size_t w = 0;
            for (size_t k = 0; k < n_pend; k++)
                if (r->nccl[pend[k]].tid != op->tid)
                    pend[w++] = pend[k];
            n_pend = w;
        }
    }
    free(pend);
    return 0;
}

static void share_group(const tsa_rank *r, const size_t *pend, size_t n_pend,
                        const tsa_nccl_op *ge, void *ctx)
{
    share_out(r, ctx, pend, n_pend, ge->tid, ge->gpu_start_ns, ge->gpu_end_ns);
}

tsa_call_span *tsa_call_spans(const tsa_rank *r)
{
    if (!r->n_nccl)
        return NULL;
    tsa_call_span *sp = malloc(r->n_nccl * sizeof *sp);
    if (!sp)
        return NULL;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        sp[i].start_ns = op->gpu_start_ns;
        sp[i].end_ns = op->gpu_end_ns;
        sp[i].skip = op->op == TSC_NCCL_GROUP_START || op->op == TSC_NCCL_GROUP_END;
        sp[i].own = !sp[i].skip && !is_member(op);
    }
    if (walk_groups(r, share_group, sp)) {
        free(sp);
        return NULL;
    }
    return sp;
}

static void group_completes(const tsa_rank *r, const size_t *pend, size_t n_pend,
                            const tsa_nccl_op *ge, void *ctx)
{
    int64_t *done = ctx;
    for (size_t k = 0; k < n_pend; k++)
        if (r->nccl[pend[k]].tid == ge->tid && ge->end_ns > done[pend[k]])
            done[pend[k]] = ge->end_ns;
}

int64_t *tsa_group_done(const tsa_rank *r)
{
    int64_t *done = malloc((r->n_nccl ? r->n_nccl : 1) * sizeof *done);
    if (!done)
        return NULL;
    for (size_t i = 0; i < r->n_nccl; i++)
        done[i] = r->nccl[i].end_ns;
    if (walk_groups(r, group_completes, done)) {
        free(done);
        return NULL;
    }
    return done;
}
