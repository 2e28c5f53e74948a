/* The network's parts of a rank's lean plugin records (nprof_net_reduce.h).
 * Each sorts what it keeps by its key and sums a key's run, so a part's
 * figures do not depend on the records' order. */
#include "nprof_net_reduce.h"

#include <stdlib.h>
#include <string.h>

#include "tsc_nccl_ops.h"
#include "util/cmp.h"
#include "util/vec.h"

static uint64_t comm_id_of(const struct tsa_nprof *np, uint16_t idx)
{
    const tsa_np_comm *cm = tsa_nprof_comm(np, idx);
    return cm ? cm->comm_id : 0;
}

/* Gives an array's unused tail back (it is kept for the whole analysis). */
static void *fit(void *p, size_t n, size_t elem)
{
    void *q = n ? realloc(p, n * elem) : NULL;
    if (!n) {
        free(p);
        return NULL;
    }
    return q ? q : p;
}

/* ------------------------------------------------------ transfer tables */

/* A rank's collectives sorted by op id only, and looked up with bsearch,
 * as the tables have always found a proxy op's collective. */
static int by_op_id(const void *pa, const void *pb)
{
    const tsa_np_op_ref *a = pa, *b = pb;
    return (a->op_id > b->op_id) - (a->op_id < b->op_id);
}

/* One sender-side proxy op or GPU-timed kernel channel, with its
 * collective. */
typedef struct {
    tsa_np_xfer_part p;
    uint32_t op_id;
} xsample;

static int by_part(const void *pa, const void *pb)
{
    const xsample *a = pa, *b = pb;
    int c = tsa_order_u64(a->p.comm_id, b->p.comm_id);
    c = c ? c : tsa_order_i64(a->p.op, b->p.op);
    c = c ? c : tsa_order_i64(a->p.kernel, b->p.kernel);
    c = c ? c : tsa_order_i64(a->p.peer, b->p.peer);
    return c ? c : tsa_order_i64(a->p.channel, b->p.channel);
}

static int by_coll(const void *pa, const void *pb)
{
    const xsample *a = pa, *b = pb;
    int c = tsa_order_u64(a->p.comm_id, b->p.comm_id);
    c = c ? c : tsa_order_i64(a->p.op, b->p.op);
    c = c ? c : tsa_order_i64(a->p.kernel, b->p.kernel);
    return c ? c : tsa_order_u64(a->op_id, b->op_id);
}

static size_t xfer_samples(const struct tsa_nprof *np, const tsa_np_op_ref *refs, xsample *s)
{
    size_t n = 0;
    for (size_t k = 0; k < np->n_proxies + np->n_kch; k++) {
        int kernel = k >= np->n_proxies;
        const tsa_np_proxy *p = kernel ? NULL : &np->proxies[k];
        const tsa_np_kch *x = kernel ? &np->kch[k - np->n_proxies] : NULL;
        if (p && (!p->is_send || p->pxn || !p->have_wait || p->peer < 0))
            continue;
        if (x && x->host_times)
            continue;
        tsa_np_op_ref want = {p ? p->op_id : x->op_id, 0};
        const tsa_np_op_ref *hit =
            np->n_colls ? bsearch(&want, refs, np->n_colls, sizeof *refs, by_op_id) : NULL;
        if (!hit)
            continue;
        const tsa_np_coll *c = &np->colls[hit->idx];
        xsample *o = &s[n++];
        *o = (xsample){.p = {.comm_id = comm_id_of(np, c->comm), .op = c->op,
                             .kernel = (uint8_t)kernel, .peer = -1},
                       .op_id = c->op_id};
        if (p) {
            o->p.peer = p->peer;
            o->p.channel = p->channel;
            o->p.ops = 1;
            o->p.steps = p->steps;
            o->p.bytes = p->bytes;
            o->p.wire_ns = p->wire_ns;
            o->p.wait_peer_ns = p->wait_peer_ns;
        } else {
            o->p.channel = x->channel;
            o->p.ops = 1;
            o->p.wire_ns = x->gpu_ns; /* the channel's kernel time */
        }
    }
    return n;
}

static int same_part(const tsa_np_xfer_part *a, const tsa_np_xfer_part *b)
{
    return a->comm_id == b->comm_id && a->op == b->op && a->kernel == b->kernel &&
           a->peer == b->peer && a->channel == b->channel;
}

/* s sorted by part: one part per key, summed. */
static int keep_parts(tsa_np_lean *out, const xsample *s, size_t n)
{
    out->xfer = malloc((n ? n : 1) * sizeof *out->xfer);
    if (!out->xfer)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        tsa_np_xfer_part *x = m ? &out->xfer[m - 1] : NULL;
        if (!x || !same_part(x, &s[i].p)) {
            out->xfer[m++] = s[i].p;
            continue;
        }
        x->ops += s[i].p.ops;
        x->steps += s[i].p.steps;
        x->bytes += s[i].p.bytes;
        x->wire_ns += s[i].p.wire_ns;
        x->wait_peer_ns += s[i].p.wait_peer_ns;
    }
    out->n_xfer = m;
    out->xfer = fit(out->xfer, m, sizeof *out->xfer);
    return 0;
}

/* s sorted by collective: the distinct op ids of the proxy ops per
 * (communicator, op). */
static int keep_colls(tsa_np_lean *out, const xsample *s, size_t n)
{
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].p.kernel)
            continue;
        tsa_np_xfer_colls *g = out->n_xfer_colls ? &out->xfer_colls[out->n_xfer_colls - 1] : NULL;
        if (!g || g->comm_id != s[i].p.comm_id || g->op != s[i].p.op) {
            if (tsa_grow((void **)&out->xfer_colls, out->n_xfer_colls, &cap,
                         sizeof *out->xfer_colls))
                return -1;
            out->xfer_colls[out->n_xfer_colls++] =
                (tsa_np_xfer_colls){.comm_id = s[i].p.comm_id, .op = s[i].p.op, .colls = 1};
        } else if (s[i].op_id != s[i - 1].op_id) {
            g->colls++;
        }
    }
    out->xfer_colls = fit(out->xfer_colls, out->n_xfer_colls, sizeof *out->xfer_colls);
    return 0;
}

int tsa_np_reduce_xfer(const struct tsa_nprof *np, tsa_np_lean *out)
{
    tsa_np_op_ref *refs = malloc(sizeof *refs * (np->n_colls ? np->n_colls : 1));
    size_t want = np->n_proxies + np->n_kch;
    xsample *s = malloc(sizeof *s * (want ? want : 1));
    if (!refs || !s) {
        free(refs), free(s);
        return -1;
    }
    for (size_t k = 0; k < np->n_colls; k++)
        refs[k] = (tsa_np_op_ref){np->colls[k].op_id, k};
    if (np->n_colls)
        qsort(refs, np->n_colls, sizeof *refs, by_op_id);
    size_t n = xfer_samples(np, refs, s);
    int rc = 0;
    if (n)
        qsort(s, n, sizeof *s, by_coll);
    rc = keep_colls(out, s, n);
    if (!rc && n)
        qsort(s, n, sizeof *s, by_part);
    if (!rc)
        rc = keep_parts(out, s, n);
    free(refs), free(s);
    return rc;
}

/* ---------------------------------------------------------------- links */

/* One proxy op with steps, by its link part's key, then its time. */
typedef struct {
    uint64_t comm_id;
    int32_t peer;
    uint8_t channel, send;
    uint32_t steps;
    uint64_t t, bytes, wire, gpu;
} lsample;

static int by_link(const void *pa, const void *pb)
{
    const lsample *a = pa, *b = pb;
    int c = tsa_order_u64(a->comm_id, b->comm_id);
    c = c ? c : tsa_order_i64(a->peer, b->peer);
    c = c ? c : tsa_order_i64(a->channel, b->channel);
    c = c ? c : tsa_order_i64(a->send, b->send);
    c = c ? c : tsa_order_u64(a->t, b->t);
    return c ? c : tsa_order_u64(a->steps, b->steps);
}

static int same_link(const lsample *a, const lsample *b)
{
    return a->comm_id == b->comm_id && a->peer == b->peer && a->channel == b->channel &&
           a->send == b->send;
}

/* The link part of s[b, e) (one key). */
static int keep_link(tsa_np_lean *out, const lsample *s, size_t b, size_t e, uint32_t *steps,
                     uint64_t *t)
{
    tsa_np_link_part *p = &out->links[out->n_links];
    *p = (tsa_np_link_part){.comm_id = s[b].comm_id, .peer = s[b].peer,
                            .channel = s[b].channel, .send = s[b].send};
    for (size_t i = b; i < e; i++) {
        steps[i - b] = s[i].steps;
        t[i - b] = s[i].t;
        p->bytes += s[i].bytes;
        p->wire_ns += s[i].wire;
        p->steps += s[i].steps;
        p->gpu_ns += s[i].gpu;
    }
    if (tsa_np_lean_add_link_ops(out, p, steps, t, e - b))
        return -1;
    out->n_links++;
    return 0;
}

int tsa_np_reduce_links(const struct tsa_nprof *np, tsa_np_lean *out)
{
    size_t n = 0, cap = np->n_proxies ? np->n_proxies : 1;
    lsample *s = malloc(cap * sizeof *s);
    uint32_t *steps = malloc(cap * sizeof *steps);
    uint64_t *t = malloc(cap * sizeof *t);
    out->links = malloc(cap * sizeof *out->links);
    int rc = s && steps && t && out->links ? 0 : -1;
    for (size_t k = 0; k < np->n_proxies && !rc; k++) {
        const tsa_np_proxy *p = &np->proxies[k];
        /* PXN: another process's op, its peer in a communicator unknown here */
        if (!p->have_wait || !p->steps || p->peer < 0 || p->pxn)
            continue;
        s[n++] = (lsample){.comm_id = comm_id_of(np, p->comm), .peer = p->peer,
                           .channel = p->channel, .send = p->is_send, .steps = p->steps,
                           .t = p->is_send ? p->wire_ns : p->wait_peer_ns, .bytes = p->bytes,
                           .wire = p->wire_ns, .gpu = p->wait_gpu_ns};
    }
    if (!rc && n)
        qsort(s, n, sizeof *s, by_link);
    for (size_t b = 0, e; b < n && !rc; b = e) {
        for (e = b + 1; e < n && same_link(&s[e], &s[b]); e++)
            ;
        rc = keep_link(out, s, b, e, steps, t);
    }
    if (!rc) {
        out->links = fit(out->links, out->n_links, sizeof *out->links);
        tsa_bytes_shrink(&out->link_ops);
    }
    free(s), free(steps), free(t);
    return rc;
}

/* ------------------------------------------------------------ link cause */

int tsa_np_by_ref(const void *pa, const void *pb)
{
    const tsa_np_op_ref *a = pa, *b = pb;
    if (a->op_id != b->op_id)
        return a->op_id < b->op_id ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

size_t tsa_np_first_ref(const tsa_np_op_ref *refs, size_t n, uint32_t op_id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (refs[mid].op_id < op_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 when the first collective with op id (in the records' order: the link
 * cause has always taken that one) is a send or recv. */
static int is_p2p(const struct tsa_nprof *np, const tsa_np_op_ref *refs, size_t n,
                  uint32_t op_id)
{
    size_t at = op_id ? tsa_np_first_ref(refs, n, op_id) : n;
    if (at == n || refs[at].op_id != op_id)
        return 0;
    uint8_t op = np->colls[refs[at].idx].op;
    return op == TSC_NCCL_SEND || op == TSC_NCCL_RECV;
}

int tsa_np_reduce_p2p(const struct tsa_nprof *np, tsa_np_lean *out)
{
    tsa_np_op_ref *refs = malloc(sizeof *refs * (np->n_colls ? np->n_colls : 1));
    if (!refs)
        return -1;
    for (size_t k = 0; k < np->n_colls; k++)
        refs[k] = (tsa_np_op_ref){np->colls[k].op_id, k};
    if (np->n_colls)
        qsort(refs, np->n_colls, sizeof *refs, tsa_np_by_ref);
    size_t cap = 0;
    int rc = 0;
    for (size_t k = 0; k < np->n_proxies && !rc; k++) {
        const tsa_np_proxy *p = &np->proxies[k];
        if (!p->have_wait || p->pxn || !p->steps || !is_p2p(np, refs, np->n_colls, p->op_id))
            continue;
        if (tsa_grow((void **)&out->p2p_ops, out->n_p2p_ops, &cap, sizeof *out->p2p_ops)) {
            rc = -1;
            break;
        }
        out->p2p_ops[out->n_p2p_ops++] = (tsa_np_p2p_op){
            .comm_id = comm_id_of(np, p->comm), .peer = p->peer, .channel = p->channel,
            .send = p->is_send, .steps = p->steps, .start_ns = p->start_ns,
            .t_ns = p->is_send ? p->wire_ns : p->wait_peer_ns};
    }
    if (!rc)
        out->p2p_ops = fit(out->p2p_ops, out->n_p2p_ops, sizeof *out->p2p_ops);
    free(refs);
    return rc;
}
