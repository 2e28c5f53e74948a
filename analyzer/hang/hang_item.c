/* What the detectors share: a result item and its detail lines, the global
 * rank of a job's rank, and which NCCL calls carry a sequence number. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang.h"
#include "load/job_build.h"
#include "tsc_format.h"

int32_t tsa_hang_rank_id(const tsa_job *job, size_t i)
{
    return job->ranks[i].rank >= 0 ? job->ranks[i].rank : (int32_t)i;
}

int tsa_hang_sequenced(uint8_t op)
{
    return tsc_nccl_op_is_sequenced(op);
}

tsa_hang_item *tsa_hang_new_item(tsa_hang_result *h, tsa_hang_kind kind)
{
    if (tsa_grow((void **)&h->items, h->n, &h->cap, sizeof *h->items))
        return NULL;
    tsa_hang_item *it = &h->items[h->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->id = kind == TSA_HANG_HANG     ? "DIST.HANG"
             : kind == TSA_HANG_DESYNC ? "DIST.DESYNC"
                                       : "RANK.EXITED_EARLY";
    return it;
}

int tsa_hang_add_group(tsa_hang_item *it, const tsa_rank_list *ranks, const char *fmt, ...)
{
    tsa_hang_group *p = realloc(it->groups, (it->n_groups + 1) * sizeof *p);
    if (!p)
        return -1;
    it->groups = p;
    tsa_hang_group *g = &p[it->n_groups];
    memset(g, 0, sizeof *g);
    for (size_t i = 0; i < ranks->n; i++)
        if (tsa_rank_list_add(&g->ranks, ranks->v[i])) {
            tsa_rank_list_free(&g->ranks);
            return -1;
        }
    tsa_rank_list_sort(&g->ranks);
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    g->what = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!g->what) {
        tsa_rank_list_free(&g->ranks);
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(g->what, (size_t)len + 1, fmt, ap);
    va_end(ap);
    it->n_groups++;
    return 0;
}

/* The last step every rank with data completed (the step pass's count). */
