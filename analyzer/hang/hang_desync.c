/* DIST.DESYNC: the same (communicator, sequence number) entered with a
 * different collective (op, bytes, dtype or root) on different ranks.
 *
 * Per communicator, every rank's sequenced calls (completed or in flight)
 * in sequence order are walked together; the first seq where two ranks'
 * collectives differ is reported (everything after it is off anyway).
 * Send/recv are not compared (a pipeline's stages legitimately differ),
 * and once the ranks have made different numbers of send/recv calls their
 * sequence numbers no longer line up: the walk stops there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "hang.h"
#include "load/rank_view.h"
#include "reader/dump_reader.h"
#include "tsc_format.h"
#include "util/vec.h"

/* What the walk compares of a call. */
typedef struct lane_call {
    uint64_t seq, bytes;
    int32_t peer;
    uint8_t op, dtype;
} lane_call;

/* One rank's sequenced calls on the communicator (completed, then in
 * flight), by seq.  Calls that already come in seq order (every healthy
 * rank's) are walked as they are stored, LANE_AHEAD at a time into a small
 * buffer (the walk visits every rank at every seq: 10,000 ranks' next
 * calls must stay in the cache); a rank whose seqs go back (a damaged
 * dump) has its calls copied and sorted, ties in the order stored. */
#define LANE_AHEAD 32

typedef struct lane_entry {
    lane_call c;
    size_t pos;
} lane_entry;

typedef struct lane {
    const tsa_rank *r;
    uint64_t comm;
    tsa_call_iter it;
    int walking;                /* it is open */
    size_t pend;                /* next call in flight to look at */
    lane_entry *v;              /* the buffer, or the sorted copies */
    size_t n, at, cap;
    uint64_t p2p;               /* send/recv seen so far */
} lane;

static int on_comm(const tsa_nccl_op *o, uint64_t comm)
{
    return o->comm_id == comm && tsa_hang_sequenced(o->op);
}

static lane_call lane_call_of(const tsa_nccl_op *o)
{
    return (lane_call){o->seq, o->bytes, o->peer, o->op, o->dtype};
}

static int by_seq_then_pos(const void *a, const void *b)
{
    const lane_entry *x = a, *y = b;
    if (x->c.seq != y->c.seq)
        return x->c.seq < y->c.seq ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* 1 when r's calls on comm, then its calls in flight on it, never go back
 * in seq; 0 when they do; -1 on OOM.  The calls' part is in the rank's
 * summary (load/seq_summary.h). */
static int in_seq_order(const tsa_rank *r, uint64_t comm)
{
    tsa_seq_summary tmp;
    const tsa_seq_summary *sum = tsa_rank_seqs(r, &tmp);
    const tsa_comm_seqs *cs = sum ? tsa_seq_summary_comm(sum, comm) : NULL;
    int ordered = cs ? cs->ordered : 1, any = cs != NULL;
    uint64_t last = cs ? cs->last_seq : 0;
    tsa_seq_summary_free(&tmp);
    if (!sum)
        return -1;
    for (size_t k = 0; ordered && k < r->n_pending; k++)
        if (on_comm(&r->pending[k], comm)) {
            ordered = !any || r->pending[k].seq >= last;
            last = r->pending[k].seq;
            any = 1;
        }
    return ordered;
}

static int sort_lane(lane *l)
{
    tsa_call_iter it;
    if (tsa_call_iter_open(&it, l->r))
        return -1;
    int rc = 0;
    for (const tsa_nccl_op *o; !rc && (o = tsa_call_iter_next(&it));)
        if (on_comm(o, l->comm))
            rc = TSA_VEC_PUSH(l->v, l->n, l->cap, ((lane_entry){lane_call_of(o), l->n}));
    tsa_call_iter_close(&it);
    for (size_t k = 0; !rc && k < l->r->n_pending; k++)
        if (on_comm(&l->r->pending[k], l->comm))
            rc = TSA_VEC_PUSH(l->v, l->n, l->cap,
                              ((lane_entry){lane_call_of(&l->r->pending[k]), l->n}));
    if (!rc && l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, by_seq_then_pos);
    return rc ? -1 : 0;
}

static int open_lane(const tsa_rank *r, uint64_t comm, lane *l)
{
    memset(l, 0, sizeof *l);
    l->r = r;
    l->comm = comm;
    int ordered = in_seq_order(r, comm);
    if (ordered < 0)
        return -1;
    if (!ordered)
        return sort_lane(l);
    l->v = malloc(LANE_AHEAD * sizeof *l->v);
    if (!l->v || tsa_call_iter_open(&l->it, r))
        return -1;
    l->walking = 1;
    return 0;
}

static void close_lane(lane *l)
{
    if (l->walking)
        tsa_call_iter_close(&l->it);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* The next LANE_AHEAD calls of a walked lane into its buffer. */
static void refill(lane *l)
{
    l->n = l->at = 0;
    while (l->n < LANE_AHEAD) {
        const tsa_nccl_op *o = tsa_call_iter_next(&l->it);
        if (!o && l->pend < l->r->n_pending)
            o = &l->r->pending[l->pend++];
        else if (!o)
            return;
        if (on_comm(o, l->comm))
            l->v[l->n++].c = lane_call_of(o);
    }
}

/* The lane's next call, NULL at its end. */
static const lane_call *lane_peek(lane *l)
{
    if (l->at == l->n && l->walking)
        refill(l);
    return l->at < l->n ? &l->v[l->at].c : NULL;
}

static void lane_take(lane *l)
{
    l->at++;
}

static int is_p2p(uint8_t op) { return tsc_nccl_op_kind(op) == TSC_NCCL_KIND_P2P; }

static int same_signature(const lane_call *a, const lane_call *b)
{
    return a->op == b->op && a->bytes == b->bytes && a->dtype == b->dtype && a->peer == b->peer;
}

static void signature_text(const lane_call *o, char *buf, size_t cap)
{
    int rooted = tsc_nccl_op_kind(o->op) == TSC_NCCL_KIND_ROOTED;
    const char *dt = tsr_nccl_dtype_name(o->dtype);
    size_t n = (size_t)snprintf(buf, cap, "%s %s %llu B", tsa_nccl_op_name(o->op),
                                dt ? dt : "?", (unsigned long long)o->bytes);
    if (rooted && n < cap)
        snprintf(buf + n, cap - n, " root %d", o->peer);
}

/* The ranks at this seq, one line per signature. */
static int report(tsa_hang_result *h, const tsa_job *job, const lane_call **at,
                  uint64_t comm, uint64_t seq)
{
    tsa_hang_item *it = tsa_hang_new_item(h, TSA_HANG_DESYNC);
    if (!it)
        return -1;
    it->comm_id = comm;
    it->seq = seq;
    size_t n = job->n_ranks;
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return -1;
    int rc = 0;
    char first[128] = "", other[128] = "";
    for (size_t i = 0; i < n && !rc; i++) {
        if (!at[i] || done[i])
            continue;
        tsa_rank_list g = {0};
        for (size_t j = i; j < n && !rc; j++)
            if (at[j] && !done[j] && same_signature(at[i], at[j])) {
                done[j] = 1;
                rc = tsa_rank_list_add(&g, tsa_hang_rank_id(job, j)) ||
                     tsa_rank_list_add(&it->ranks, tsa_hang_rank_id(job, j));
            }
        char sig[128];
        signature_text(at[i], sig, sizeof sig);
        if (!first[0]) {
            snprintf(first, sizeof first, "%s", sig);
            it->op = at[i]->op;
        } else if (!other[0]) {
            snprintf(other, sizeof other, "%s", sig);
        }
        if (!rc)
            rc = tsa_hang_add_group(it, &g, "called %s", sig);
        tsa_rank_list_free(&g);
    }
    free(done);
    tsa_rank_list_sort(&it->ranks);
    if (!rc && asprintf(&it->title, "comm %016llx seq %llu: ranks called different collectives "
                        "(%s / %s%s)", (unsigned long long)comm, (unsigned long long)seq, first,
                        other, it->n_groups > 2 ? " / ..." : "") < 0) {
        it->title = NULL;
        rc = -1;
    }
    return rc;
}

/* The seq of the lane's next call; UINT64_MAX at its end (a call with
 * that seq ends the walk as the end of every lane would). */
static uint64_t head_of(lane *l)
{
    const lane_call *o = lane_peek(l);
    return o ? o->seq : UINT64_MAX;
}

static int desync_on(const tsa_job *job, tsa_hang_result *h, uint64_t comm, lane *lanes,
                     uint64_t *head, const lane_call **at, lane_call *at_copy)
{
    size_t n = job->n_ranks;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = open_lane(&job->ranks[i], comm, &lanes[i]);
    for (size_t i = 0; i < n && !rc; i++)
        head[i] = head_of(&lanes[i]);
    for (uint64_t seq = 0; !rc;) {
        /* The next seq any rank has, and every rank's call there. */
        uint64_t next = UINT64_MAX;
        for (size_t i = 0; i < n; i++)
            if (head[i] < next)
                next = head[i];
        if (next == UINT64_MAX)
            break;
        seq = next;
        int p2p_mismatch = 0, differ = 0, any_p2p = 0;
        uint64_t p2p0 = UINT64_MAX;
        const lane_call *ref = NULL;
        for (size_t i = 0; i < n; i++) {
            at[i] = NULL;
            if (head[i] == seq) {
                at_copy[i] = *lane_peek(&lanes[i]);
                at[i] = &at_copy[i];
                lane_take(&lanes[i]);
                head[i] = head_of(&lanes[i]);
            }
            if (!at[i])
                continue;
            if (p2p0 == UINT64_MAX)
                p2p0 = lanes[i].p2p;
            p2p_mismatch |= lanes[i].p2p != p2p0;
            any_p2p |= is_p2p(at[i]->op);
            if (!ref)
                ref = at[i];
            else if (!same_signature(ref, at[i]))
                differ = 1;
        }
        if (p2p_mismatch)
            break; /* seq numbers no longer comparable */
        if (differ && !any_p2p) {
            rc = report(h, job, at, comm, seq);
            break;
        }
        for (size_t i = 0; i < n; i++)
            lanes[i].p2p += at[i] && is_p2p(at[i]->op);
    }
    for (size_t i = 0; i < n; i++)
        close_lane(&lanes[i]);
    return rc;
}

int tsa_hang_find_desyncs(const tsa_job *job, tsa_hang_result *h)
{
    size_t n = job->n_ranks;
    if (n < 2)
        return 0;
    lane *lanes = calloc(n, sizeof *lanes);
    uint64_t *head = calloc(n, sizeof *head);
    const lane_call **at = calloc(n, sizeof *at);
    lane_call *at_copy = calloc(n, sizeof *at_copy);
    uint64_t *comms = NULL;
    size_t n_comms = 0, cap = 0;
    int rc = lanes && head && at && at_copy ? 0 : -1;
    /* Every communicator, once (in the order first met: the order of a
     * rank's call shapes is that of its calls). */
    for (size_t i = 0; i < n && !rc; i++) {
        size_t ns;
        const tsa_nccl_op *shape = tsa_rank_call_shapes(&job->ranks[i], &ns);
        for (size_t k = 0; k < ns && !rc; k++) {
            uint64_t c = shape[k].comm_id;
            if (!c || !tsa_hang_sequenced(shape[k].op))
                continue;
            size_t q = 0;
            while (q < n_comms && comms[q] != c)
                q++;
            if (q < n_comms)
                continue;
            rc = TSA_VEC_PUSH(comms, n_comms, cap, c);
        }
    }
    for (size_t q = 0; q < n_comms && !rc; q++)
        rc = desync_on(job, h, comms[q], lanes, head, at, at_copy);
    free(comms);
    free(lanes);
    free(head);
    free(at);
    free(at_copy);
    return rc ? -1 : 0;
}
