/* A rank's calls and steps as plain arrays, whichever way it holds them: a
 * rank loaded here has them as arrays; a lean rank of the streaming report
 * (and of tscope-report-mpi's process 0) keeps them compact
 * (lean_calls.h, lean_steps.h), and a pass over the job decodes one rank
 * at a time:
 *
 *     tsa_rank_view v;
 *     const tsa_rank *rk = tsa_view_open(r, TSA_VIEW_CALLS, &v);
 *     if (!rk) ... out of memory
 *     ... rk->nccl[0 .. rk->n_nccl) ...
 *     tsa_view_close(&v);
 *
 * rk is r itself when nothing needed decoding, else a copy of r whose
 * arrays are the decoded ones (valid until tsa_view_close). */
#ifndef TSA_RANK_VIEW_H
#define TSA_RANK_VIEW_H

#include "lean_calls.h"
#include "model/model.h"

enum { TSA_VIEW_CALLS = 1, TSA_VIEW_STEPS = 2 };

typedef struct tsa_rank_view {
    tsa_rank rank;
    tsa_nccl_op *calls;         /* decoded here, freed by close */
    tsa_step *steps;
} tsa_rank_view;

/* what: TSA_VIEW_CALLS and/or TSA_VIEW_STEPS.  NULL when out of memory
 * (or a damaged compact store); v is then safe to close. */
const tsa_rank *tsa_view_open(const tsa_rank *r, unsigned what, tsa_rank_view *v);
void tsa_view_close(tsa_rank_view *v);

/* The same for a rank a stage changes (its steps' flags): changes to the
 * view's steps go back to r with tsa_view_store_steps. */
static inline tsa_rank *tsa_view_open_mut(tsa_rank *r, unsigned what, tsa_rank_view *v)
{
    const tsa_rank *rk = tsa_view_open(r, what, v);
    return rk == r ? r : rk ? &v->rank : NULL;
}

/* The steps view->steps (as changed) kept back into r, compact when r
 * keeps them compact, else in place.  0, or -1 when out of memory. */
int tsa_view_store_steps(tsa_rank *r, tsa_rank_view *v);

/* A rank's calls one by one, without decoding them all at once (the
 * walks that hold a place in every rank's calls together):
 *
 *     tsa_call_iter it;
 *     if (tsa_call_iter_open(&it, r)) ... out of memory
 *     for (const tsa_nccl_op *o; (o = tsa_call_iter_next(&it));) ...
 *     tsa_call_iter_close(&it);
 *
 * o is valid until the next call.  A compact store is checked whole when
 * it is made or received (lean_calls.h), so the walk cannot meet damaged
 * bytes. */
typedef struct tsa_call_iter {
    const tsa_rank *r;
    size_t at;
    tsa_calls_cursor c;
    tsa_nccl_op cur;
} tsa_call_iter;

int tsa_call_iter_open(tsa_call_iter *it, const tsa_rank *r);
const tsa_nccl_op *tsa_call_iter_next(tsa_call_iter *it);
void tsa_call_iter_close(tsa_call_iter *it);

/* The distinct shapes of r's calls (every field but the times, seq and
 * kernel), in the order first met, for a question about those fields
 * only (which ops, which communicators): a compact rank's shape table,
 * else its calls themselves.  n receives their number. */
const tsa_nccl_op *tsa_rank_call_shapes(const tsa_rank *r, size_t *n);

/* r's sequenced calls per communicator (seq_summary.h): a lean rank's own,
 * else computed into *tmp.  NULL when out of memory; either way free tmp
 * with tsa_seq_summary_free. */
const tsa_seq_summary *tsa_rank_seqs(const tsa_rank *r, tsa_seq_summary *tmp);

/* 1 when every call of r is linked to its kernel (kernel >= 0), which a
 * compact rank knows without reading its calls. */
int tsa_rank_calls_all_linked(const tsa_rank *r);

/* Makes r keep its calls and steps compact (the arrays freed).  0, or -1
 * when out of memory (r unchanged). */
int tsa_rank_make_lean(tsa_rank *r);

#endif
