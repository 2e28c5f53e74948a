/* A rank's calls and steps as arrays (rank_view.h). */
#include "rank_view.h"

#include <stdlib.h>
#include <string.h>

#include "lean_calls.h"
#include "lean_steps.h"

const tsa_rank *tsa_view_open(const tsa_rank *r, unsigned what, tsa_rank_view *v)
{
    memset(v, 0, sizeof *v);
    int calls = (what & TSA_VIEW_CALLS) && r->lean_calls;
    int steps = (what & TSA_VIEW_STEPS) && r->lean_steps;
    if (!calls && !steps)
        return r;
    v->rank = *r;
    if (calls) {
        const struct tsa_lean_calls *lc = r->lean_calls;
        v->calls = malloc((lc->n ? lc->n : 1) * sizeof *v->calls);
        if (!v->calls || tsa_lean_calls_decode(lc, v->calls))
            return NULL;
        v->rank.nccl = v->calls;
        v->rank.n_nccl = lc->n;
        v->rank.lean_calls = NULL;
    }
    if (steps) {
        const struct tsa_lean_steps *ls = r->lean_steps;
        v->steps = malloc((ls->n ? ls->n : 1) * sizeof *v->steps);
        if (!v->steps || tsa_lean_steps_decode(ls, v->steps))
            return NULL;
        v->rank.steps = v->steps;
        v->rank.n_steps = ls->n;
        v->rank.lean_steps = NULL;
    }
    return &v->rank;
}

void tsa_view_close(tsa_rank_view *v)
{
    free(v->calls);
    free(v->steps);
    v->calls = NULL;
    v->steps = NULL;
}

int tsa_view_store_steps(tsa_rank *r, tsa_rank_view *v)
{
    if (!r->lean_steps)
        return 0;   /* the view was r itself: changed in place */
    struct tsa_lean_steps *ls = tsa_lean_steps_encode(v->rank.steps, v->rank.n_steps);
    if (!ls)
        return -1;
    tsa_lean_steps_free(r->lean_steps);
    r->lean_steps = ls;
    return 0;
}

int tsa_rank_make_lean(tsa_rank *r)
{
    struct tsa_lean_calls *lc = NULL;
    struct tsa_lean_steps *ls = NULL;
    if (!r->lean_calls && !(lc = tsa_lean_calls_encode(r->nccl, r->n_nccl)))
        return -1;
    if (!r->lean_steps && !(ls = tsa_lean_steps_encode(r->steps, r->n_steps))) {
        tsa_lean_calls_free(lc);
        return -1;
    }
    if (lc) {
        r->lean_calls = lc;
        free(r->nccl);
        r->nccl = NULL;
        r->cap_nccl = 0;
    }
    if (ls) {
        r->lean_steps = ls;
        free(r->steps);
        r->steps = NULL;
    }
    return 0;
}

const tsa_nccl_op *tsa_rank_call_shapes(const tsa_rank *r, size_t *n)
{
    *n = r->lean_calls ? r->lean_calls->n_shapes : r->n_nccl;
    return r->lean_calls ? r->lean_calls->shapes : r->nccl;
}

const tsa_seq_summary *tsa_rank_seqs(const tsa_rank *r, tsa_seq_summary *tmp)
{
    tsa_seq_summary_init(tmp);
    if (r->lean_calls)
        return &r->lean_calls->seqs;
    for (size_t i = 0; i < r->n_nccl; i++)
        if (tsa_seq_summary_add(tmp, &r->nccl[i]))
            return NULL;
    tsa_seq_summary_done(tmp);
    return tmp;
}

int tsa_rank_calls_all_linked(const tsa_rank *r)
{
    if (r->lean_calls)
        return r->lean_calls->n_unlinked == 0;
    for (size_t i = 0; i < r->n_nccl; i++)
        if (r->nccl[i].kernel < 0)
            return 0;
    return 1;
}

int tsa_call_iter_open(tsa_call_iter *it, const tsa_rank *r)
{
    memset(it, 0, sizeof *it);
    it->r = r;
    return r->lean_calls ? tsa_calls_cursor_open(&it->c, r->lean_calls) : 0;
}

const tsa_nccl_op *tsa_call_iter_next(tsa_call_iter *it)
{
    if (!it->r->lean_calls)
        return it->at < it->r->n_nccl ? &it->r->nccl[it->at++] : NULL;
    return tsa_calls_cursor_next(&it->c, &it->cur) == 1 ? &it->cur : NULL;
}

void tsa_call_iter_close(tsa_call_iter *it)
{
    if (it->r && it->r->lean_calls)
        tsa_calls_cursor_close(&it->c);
}
