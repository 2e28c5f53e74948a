/* Plugin collectives to NCCL call records (nprof_join.h). */
#include "nprof_join.h"

#include <stdlib.h>
#include <string.h>

#include "rank_nprof.h"
#include "tsc_nccl_ops.h"

/* NCCL numbers Broadcast and Bcast as one function. */
static uint8_t nccl_function(uint8_t op) { return op == TSC_NCCL_BCAST ? TSC_NCCL_BROADCAST : op; }

static int numbered(uint8_t op) { return op >= 1 && op <= TSC_NCCL_SCATTER; }

/* A call's place among the rank's uncaptured calls of its function on its
 * communicator. */
typedef struct { uint64_t comm_id; uint8_t fn; uint64_t ordinal; size_t call; } call_key;

static int by_key(const void *pa, const void *pb)
{
    const call_key *a = pa, *b = pb;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    if (a->fn != b->fn)
        return a->fn < b->fn ? -1 : 1;
    return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

static call_key *call_keys(const tsa_rank *r, const uint8_t *captured, size_t *n)
{
    call_key *k = malloc(sizeof *k * (r->n_nccl ? r->n_nccl : 1));
    if (!k)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *o = &r->nccl[i];
        if (numbered(o->op) && !captured[i])
            k[m++] = (call_key){o->comm_id, nccl_function(o->op), o->seq, i};
    }
    if (m)
        qsort(k, m, sizeof *k, by_key);
    /* seq orders calls of a communicator: turn it into the per-function place. */
    for (size_t i = 0, run = 0; i < m; i++) {
        if (i && (k[i].comm_id != k[i - 1].comm_id || k[i].fn != k[i - 1].fn))
            run = 0;
        k[i].ordinal = run++;
    }
    *n = m;
    return k;
}

static uint64_t comm_id_of(const struct tsa_nprof *np, uint16_t idx)
{
    const tsa_np_comm *cm = tsa_nprof_comm(np, idx);
    return cm ? cm->comm_id : 0;
}

/* The call a captured record was reported inside: the same thread,
 * communicator and function, its time within the call (calls are sorted
 * by start). */
static void mark_captured(const tsa_rank *r, const tsa_np_captured *c, uint64_t comm_id,
                          uint8_t *captured)
{
    size_t lo = 0, hi = r->n_nccl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->nccl[mid].start_ns <= c->ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        const tsa_nccl_op *o = &r->nccl[i];
        if (o->end_ns < c->ns && c->ns - o->end_ns > 1000000000) /* far back: none */
            break;
        if (o->tid == c->tid && o->comm_id == comm_id && o->end_ns >= c->ns &&
            nccl_function(o->op) == nccl_function(c->op) && !captured[i]) {
            captured[i] = 1;
            return;
        }
    }
}

/* A plugin collective in its function's order of launch. */
typedef struct { uint64_t comm_id; uint8_t fn; int64_t start; uint64_t seq; size_t idx; } launch;

static int by_launch(const void *pa, const void *pb)
{
    const launch *a = pa, *b = pb;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    if (a->fn != b->fn)
        return a->fn < b->fn ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int by_seq(const void *pa, const void *pb)
{
    const launch *a = pa, *b = pb;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Of one function's kernel collectives with the same seq, all but the last
 * launched are replays: NCCL moves the count only for a call.  tmp holds
 * n launches. */
static void mark_replays(const struct tsa_nprof *np, const launch *l, size_t n, launch *tmp,
                         uint8_t *replay)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!np->colls[l[i].idx].ce)
            tmp[m++] = l[i];
    if (m)
        qsort(tmp, m, sizeof *tmp, by_seq);
    for (size_t i = 0; i + 1 < m; i++)
        if (tmp[i].seq == tmp[i + 1].seq)
            replay[tmp[i].idx] = 1;
}

/* One function's collectives [b, e) of l, in launch order, to calls. */
static void join_function(const struct tsa_nprof *np, const launch *l, size_t b, size_t e,
                          launch *tmp, const call_key *k, size_t nk, uint8_t *taken,
                          tsa_np_join *j)
{
    mark_replays(np, l + b, e - b, tmp, j->no_call);
    uint64_t ce_before = 0, eager = 0;
    for (size_t i = b; i < e; i++) {
        const tsa_np_coll *c = &np->colls[l[i].idx];
        uint64_t ordinal;
        if (c->ce) {
            ordinal = eager + ce_before++;
        } else if (j->no_call[l[i].idx]) {
            if (c->seq > eager) /* a replay's seq is the count of calls before */
                eager = c->seq;
            continue;
        } else {
            ordinal = c->seq + ce_before;
            if (c->seq + 1 > eager)
                eager = c->seq + 1;
        }
        call_key want = {.comm_id = l[i].comm_id, .fn = l[i].fn, .ordinal = ordinal};
        const call_key *hit = bsearch(&want, k, nk, sizeof *k, by_key);
        if (hit && !taken[hit->call]) {
            taken[hit->call] = 1;
            j->call_of[l[i].idx] = (int64_t)hit->call;
            j->joined++;
        } else {
            j->no_call[l[i].idx] = 1;
        }
    }
}

static int join_all(const tsa_rank *r, tsa_np_join *j)
{
    const struct tsa_nprof *np = r->nprof;
    for (size_t i = 0; i < np->n_captured; i++)
        if (!np->captured[i].p2p)
            mark_captured(r, &np->captured[i], comm_id_of(np, np->captured[i].comm), j->captured);
    for (size_t i = 0; i < r->n_nccl; i++)
        j->captured_calls += j->captured[i];
    size_t nk = 0, nl = 0;
    call_key *k = call_keys(r, j->captured, &nk);
    launch *l = malloc(sizeof *l * (np->n_colls ? np->n_colls : 1));
    launch *tmp = malloc(sizeof *tmp * (np->n_colls ? np->n_colls : 1));
    uint8_t *taken = calloc(r->n_nccl ? r->n_nccl : 1, 1);
    if (!k || !l || !tmp || !taken) {
        free(k), free(l), free(tmp), free(taken);
        return -1;
    }
    for (size_t i = 0; i < np->n_colls; i++) {
        const tsa_np_coll *c = &np->colls[i];
        if (!numbered(c->op))
            continue; /* send/recv: no number to join by */
        j->colls++;
        uint64_t cid = comm_id_of(np, c->comm);
        if (!cid) {
            j->no_call[i] = 1;
            continue;
        }
        l[nl++] = (launch){cid, nccl_function(c->op), c->start_ns, c->seq, i};
    }
    if (nl)
        qsort(l, nl, sizeof *l, by_launch);
    for (size_t b = 0, e; b < nl; b = e) {
        for (e = b + 1; e < nl && l[e].comm_id == l[b].comm_id && l[e].fn == l[b].fn; e++)
            ;
        join_function(np, l, b, e, tmp, k, nk, taken, j);
    }
    free(k), free(l), free(tmp), free(taken);
    return 0;
}

int tsa_nprof_join(const tsa_rank *r, tsa_np_join *out)
{
    memset(out, 0, sizeof *out);
    const struct tsa_nprof *np = r->nprof;
    size_t nc = np ? np->n_colls : 0;
    out->call_of = malloc(sizeof *out->call_of * (nc ? nc : 1));
    out->no_call = calloc(nc ? nc : 1, 1);
    out->captured = calloc(r->n_nccl ? r->n_nccl : 1, 1);
    if (!out->call_of || !out->no_call || !out->captured) {
        tsa_np_join_free(out);
        return -1;
    }
    for (size_t i = 0; i < nc; i++)
        out->call_of[i] = -1;
    if (np && join_all(r, out)) {
        tsa_np_join_free(out);
        return -1;
    }
    return 0;
}

void tsa_np_join_free(tsa_np_join *j)
{
    free(j->call_of);
    free(j->no_call);
    free(j->captured);
    memset(j, 0, sizeof *j);
}
