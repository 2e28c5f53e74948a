/* Per-collective transfer tables (coll_transfer.h). */
#include "coll_transfer.h"

#include <stdlib.h>
#include <string.h>

#include "load/comm_ranks.h"
#include "load/nprof_reduce.h"
#include "load/rank_nprof.h"
#include "load/rank_view.h"
#include "util/cmp.h"
#include "util/vec.h"

/* One part of a rank's lean records (load/nprof_lean.h): sender-side
 * proxy ops of a (collective, peer, channel), or its kernel channels
 * (kernel = 1); owner the rank's index in the job, colls its distinct
 * collectives of (comm, op). */
typedef struct {
    uint64_t comm_id;
    uint8_t op, kernel;
    int src, dst, ch;
    size_t owner;
    uint64_t colls, ops, steps;
    uint64_t bytes, wire, wait_peer;
} sample;

static int by_peer(const void *pa, const void *pb)
{
    const sample *a = pa, *b = pb;
    int c = tsa_order_u64(a->comm_id, b->comm_id);
    c = c ? c : tsa_order_i64(a->op, b->op);
    c = c ? c : tsa_order_i64(a->kernel, b->kernel);
    c = c ? c : tsa_order_i64(a->src, b->src);
    return c ? c : tsa_order_i64(a->dst, b->dst);
}

static int by_channel(const void *pa, const void *pb)
{
    const sample *a = pa, *b = pb;
    int c = tsa_order_u64(a->comm_id, b->comm_id);
    c = c ? c : tsa_order_i64(a->op, b->op);
    return c ? c : tsa_order_i64(a->ch, b->ch);
}

static int by_owner(const void *pa, const void *pb)
{
    const sample *a = pa, *b = pb;
    int c = tsa_order_u64(a->comm_id, b->comm_id);
    c = c ? c : tsa_order_i64(a->op, b->op);
    return c ? c : tsa_order_u64(a->owner, b->owner);
}

typedef struct {
    sample *s;
    size_t n, cap;
} samples;

static int add(samples *v, const sample *x)
{
    if (tsa_grow((void **)&v->s, v->n, &v->cap, sizeof *v->s))
        return -1;
    v->s[v->n++] = *x;
    return 0;
}

static uint64_t colls_of(const tsa_np_lean *l, uint64_t comm_id, uint8_t op)
{
    for (size_t k = 0; k < l->n_xfer_colls; k++)
        if (l->xfer_colls[k].comm_id == comm_id && l->xfer_colls[k].op == op)
            return l->xfer_colls[k].colls;
    return 0;
}

/* Rank i's parts, each with its collective's function and communicator. */
static int rank_samples(const tsa_job *job, size_t i, const tsa_comm_ranks *m, samples *v)
{
    const tsa_rank *r = &job->ranks[i];
    tsa_np_lean tmp;
    const tsa_np_lean *l = tsa_rank_np_lean(r, TSA_NPL_XFER, &tmp);
    int rc = l ? 0 : -1;
    for (size_t k = 0; l && k < l->n_xfer && !rc; k++) {
        const tsa_np_xfer_part *x = &l->xfer[k];
        sample s = {.comm_id = x->comm_id, .op = x->op, .kernel = x->kernel, .src = r->rank,
                    .dst = x->kernel ? -1 : tsa_comm_rank_global(m, x->comm_id, x->peer),
                    .ch = x->channel, .owner = i, .colls = colls_of(l, x->comm_id, x->op),
                    .ops = x->ops, .steps = x->steps, .bytes = x->bytes, .wire = x->wire_ns,
                    .wait_peer = x->wait_peer_ns};
        rc = add(v, &s);
    }
    tsa_np_lean_free(&tmp);
    return rc;
}

static void sum_into(tsa_xfer *x, const sample *s)
{
    if (s->kernel) {
        x->kernel_ns += s->wire;
        x->kernel_n += s->ops;
        return;
    }
    x->ops += s->ops;
    x->steps += s->steps;
    x->bytes += s->bytes;
    x->wire_ns += s->wire;
    x->wait_peer_ns += s->wait_peer;
}

/* Rows of one collective [b, e) of s, sorted by peer (channels 0) or by
 * channel: one row per peer pair or channel; a channel's row also sums
 * its kernel time. */
static tsa_xfer *rows(const sample *s, size_t b, size_t e, int channels, size_t *n)
{
    tsa_xfer *x = calloc(e - b + 1, sizeof *x);
    if (!x)
        return NULL;
    size_t m = 0;
    for (size_t i = b; i < e; i++) {
        if (!channels && s[i].kernel)
            continue;
        int same = m && (channels ? x[m - 1].channel == s[i].ch
                                  : x[m - 1].src == s[i].src && x[m - 1].dst == s[i].dst);
        if (!same)
            x[m++] = (tsa_xfer){.src = channels ? -1 : s[i].src, .dst = channels ? -1 : s[i].dst,
                                .channel = channels ? s[i].ch : -1};
        sum_into(&x[m - 1], &s[i]);
    }
    *n = m;
    return x;
}

/* From the calls' shapes: a lean rank keeps its calls compact. */
static uint32_t comm_size_of(const tsa_job *job, uint64_t comm_id)
{
    for (size_t i = 0; comm_id && i < job->n_ranks; i++) {
        size_t n;
        const tsa_nccl_op *shape = tsa_rank_call_shapes(&job->ranks[i], &n);
        for (size_t k = 0; k < n; k++)
            if (shape[k].comm_id == comm_id)
                return shape[k].comm_size;
    }
    return 0;
}

static int same_coll(const sample *a, const sample *b)
{
    return a->comm_id == b->comm_id && a->op == b->op;
}

/* The collectives' rows, one group at a time (s sorted by collective). */
static int build(const tsa_job *job, sample *s, size_t ns, tsa_coll_xfer **out, size_t *n)
{
    size_t cap = 0;
    for (size_t b = 0, e; b < ns; b = e) {
        for (e = b + 1; e < ns && same_coll(&s[e], &s[b]); e++)
            ;
        tsa_coll_xfer g = {.op = s[b].op, .comm_id = s[b].comm_id,
                           .comm_size = comm_size_of(job, s[b].comm_id)};
        qsort(s + b, e - b, sizeof *s, by_owner);
        const sample *last = NULL; /* the last part counted */
        for (size_t i = b; i < e; i++) {
            if (s[i].kernel)
                continue;
            g.bytes += s[i].bytes;
            g.wire_ns += s[i].wire;
            if (!last || last->owner != s[i].owner) {
                g.ranks++;
                g.colls += s[i].colls;
            }
            last = &s[i];
        }
        if (!g.colls)
            continue; /* kernel channels only: no transfer to show */
        qsort(s + b, e - b, sizeof *s, by_peer);
        g.peers = rows(s, b, e, 0, &g.n_peers);
        qsort(s + b, e - b, sizeof *s, by_channel);
        g.channels = rows(s, b, e, 1, &g.n_channels);
        if (!g.peers || !g.channels || tsa_grow((void **)out, *n, &cap, sizeof **out)) {
            free(g.peers), free(g.channels);
            return -1;
        }
        (*out)[(*n)++] = g;
    }
    return 0;
}

static int most_bytes(const void *pa, const void *pb)
{
    const tsa_coll_xfer *a = pa, *b = pb;
    return (a->bytes < b->bytes) - (a->bytes > b->bytes);
}

int tsa_coll_xfers(const tsa_job *job, tsa_coll_xfer **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    tsa_comm_ranks m;
    samples v = {0};
    if (tsa_comm_ranks_build(job, &m))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++)
        if (job->ranks[i].nprof)
            rc = rank_samples(job, i, &m, &v);
    if (!rc && v.n) {
        qsort(v.s, v.n, sizeof *v.s, by_channel); /* groups first: (comm, op) */
        rc = build(job, v.s, v.n, out, n);
    }
    if (!rc && *n)
        qsort(*out, *n, sizeof **out, most_bytes);
    tsa_comm_ranks_free(&m);
    free(v.s);
    if (rc) {
        tsa_coll_xfers_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void tsa_coll_xfers_free(tsa_coll_xfer *x, size_t n)
{
    for (size_t i = 0; x && i < n; i++) {
        free(x[i].peers);
        free(x[i].channels);
    }
    free(x);
}
