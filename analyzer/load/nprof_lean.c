/* A rank's plugin records, lean (nprof_lean.h): the byte strings and the
 * packing.  Kernel times: differences of the ascending values.  A replay
 * group: its communicator and seq as differences against the group
 * before (zig-zagged), op, collectives, proxy ops, steps, bytes, wire
 * time, then 0 or 1 and the kernel median's bits.  A link part's op: its
 * steps and time as differences against the op before (zig-zagged). */
#include "nprof_lean.h"

#include <stdlib.h>
#include <string.h>

void tsa_np_lean_free(tsa_np_lean *l)
{
    free(l->kernel.p);
    free(l->replays.p);
    free(l->xfer);
    free(l->xfer_colls);
    free(l->links);
    free(l->link_ops.p);
    free(l->p2p_ops);
    memset(l, 0, sizeof *l);
}

int tsa_np_lean_set_kernel_times(tsa_np_lean *l, const uint64_t *ns, size_t n)
{
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (tsa_bytes_varint(&l->kernel, ns[i] - prev))
            return -1;
        prev = ns[i];
    }
    l->n_kernel = n;
    tsa_bytes_shrink(&l->kernel);
    return 0;
}

int tsa_np_lean_kernel_times(const tsa_np_lean *l, uint64_t *out)
{
    const unsigned char *p = l->kernel.p, *end = p + l->kernel.len;
    uint64_t prev = 0;
    for (size_t i = 0; i < l->n_kernel; i++) {
        uint64_t d;
        if (tsa_varint_get(&p, end, &d))
            return -1;
        out[i] = prev += d;
    }
    return p == end ? 0 : -1;
}

static int put_replay(tsa_bytes *b, const tsa_np_replay *g, const tsa_np_replay *prev)
{
    uint64_t bits;
    memcpy(&bits, &g->kernel_ns, sizeof bits);
    int kernel = g->kernel_ns >= 0;
    return tsa_bytes_svarint(b, tsa_wrap_sub((int64_t)g->comm_id, (int64_t)prev->comm_id)) ||
           tsa_bytes_varint(b, g->op) ||
           tsa_bytes_svarint(b, tsa_wrap_sub((int64_t)g->seq, (int64_t)prev->seq)) ||
           tsa_bytes_varint(b, g->colls) || tsa_bytes_varint(b, g->proxy_ops) ||
           tsa_bytes_varint(b, g->steps) || tsa_bytes_varint(b, g->bytes) ||
           tsa_bytes_varint(b, g->wire_ns) || tsa_bytes_varint(b, (uint64_t)kernel) ||
           (kernel && tsa_bytes_varint(b, bits));
}

int tsa_np_lean_set_replays(tsa_np_lean *l, const tsa_np_replay *g, size_t n)
{
    tsa_np_replay prev = {0};
    for (size_t i = 0; i < n; i++) {
        if (put_replay(&l->replays, &g[i], &prev))
            return -1;
        prev = g[i];
    }
    l->n_replays = n;
    tsa_bytes_shrink(&l->replays);
    return 0;
}

int tsa_np_lean_replays(const tsa_np_lean *l, tsa_np_replay *out)
{
    const unsigned char *p = l->replays.p, *end = p + l->replays.len;
    tsa_np_replay prev = {0};
    for (size_t i = 0; i < l->n_replays; i++) {
        int64_t dc, ds;
        uint64_t op, colls, ops, steps, kernel, bits = 0;
        tsa_np_replay *g = &out[i];
        memset(g, 0, sizeof *g);
        if (tsa_svarint_get(&p, end, &dc) || tsa_varint_get(&p, end, &op) ||
            tsa_svarint_get(&p, end, &ds) || tsa_varint_get(&p, end, &colls) ||
            tsa_varint_get(&p, end, &ops) || tsa_varint_get(&p, end, &steps) ||
            tsa_varint_get(&p, end, &g->bytes) || tsa_varint_get(&p, end, &g->wire_ns) ||
            tsa_varint_get(&p, end, &kernel) || kernel > 1 ||
            (kernel && tsa_varint_get(&p, end, &bits)) || op > UINT8_MAX)
            return -1;
        g->comm_id = (uint64_t)tsa_wrap_add((int64_t)prev.comm_id, dc);
        g->seq = (uint64_t)tsa_wrap_add((int64_t)prev.seq, ds);
        g->op = (uint8_t)op;
        g->colls = (size_t)colls;
        g->proxy_ops = (size_t)ops;
        g->steps = (size_t)steps;
        if (kernel)
            memcpy(&g->kernel_ns, &bits, sizeof bits);
        else
            g->kernel_ns = -1;
        prev = *g;
    }
    return p == end ? 0 : -1;
}

int tsa_np_lean_add_link_ops(tsa_np_lean *l, tsa_np_link_part *p, const uint32_t *steps,
                             const uint64_t *t, size_t n)
{
    p->at = l->link_ops.len;
    int64_t prev_steps = 0, prev_t = 0;
    for (size_t i = 0; i < n; i++) {
        if (tsa_bytes_svarint(&l->link_ops, (int64_t)steps[i] - prev_steps) ||
            tsa_bytes_svarint(&l->link_ops, tsa_wrap_sub((int64_t)t[i], prev_t)))
            return -1;
        prev_steps = steps[i];
        prev_t = (int64_t)t[i];
    }
    p->len = l->link_ops.len - p->at;
    p->n_ops = n;
    return 0;
}

int tsa_np_link_ops(const tsa_np_lean *l, const tsa_np_link_part *p, uint32_t *steps,
                    uint64_t *t)
{
    if (p->at > l->link_ops.len || p->len > l->link_ops.len - p->at)
        return -1;
    const unsigned char *at = l->link_ops.p + p->at, *end = at + p->len;
    int64_t prev_steps = 0, prev_t = 0;
    for (uint64_t i = 0; i < p->n_ops; i++) {
        int64_t ds, dt;
        if (tsa_svarint_get(&at, end, &ds) || tsa_svarint_get(&at, end, &dt))
            return -1;
        prev_steps += ds;
        prev_t = tsa_wrap_add(prev_t, dt);
        if (prev_steps < 0 || prev_steps > UINT32_MAX)
            return -1;
        steps[i] = (uint32_t)prev_steps;
        t[i] = (uint64_t)prev_t;
    }
    return at == end ? 0 : -1;
}

static int put_bytes(tsa_pack_buf *b, const tsa_bytes *x)
{
    return tsa_put_arr(b, x->p, x->len, 1);
}

static void get_bytes(tsa_cursor *c, tsa_bytes *x)
{
    x->p = tsa_get_arr(c, &x->len, 1);
    x->cap = x->len;
}

int tsa_np_lean_put(tsa_pack_buf *b, const tsa_np_lean *l)
{
    uint64_t counts[] = {l->parts, l->ce_colls, l->p2p, l->proxies, l->kch,
                         (uint64_t)l->kch_gpu, l->colls, l->joined, l->no_call,
                         l->captured_calls, l->n_kernel, l->n_replays};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (tsa_put_u64(b, counts[i]))
            return -1;
    return put_bytes(b, &l->kernel) || put_bytes(b, &l->replays) ||
                   tsa_put_arr(b, l->xfer, l->n_xfer, sizeof *l->xfer) ||
                   tsa_put_arr(b, l->xfer_colls, l->n_xfer_colls, sizeof *l->xfer_colls) ||
                   tsa_put_arr(b, l->links, l->n_links, sizeof *l->links) ||
                   put_bytes(b, &l->link_ops) ||
                   tsa_put_arr(b, l->p2p_ops, l->n_p2p_ops, sizeof *l->p2p_ops)
               ? -1
               : 0;
}

/* Every byte string read back once: the passes then meet no damaged
 * bytes.  The counts of kept values are bounded by their bytes (a value
 * takes at least one). */
static int check(const tsa_np_lean *l)
{
    if (l->n_kernel > l->kernel.len || l->n_replays > l->replays.len)
        return -1;
    uint64_t *ns = malloc((l->n_kernel ? l->n_kernel : 1) * sizeof *ns);
    tsa_np_replay *g = malloc((l->n_replays ? l->n_replays : 1) * sizeof *g);
    int rc = !ns || !g || tsa_np_lean_kernel_times(l, ns) || tsa_np_lean_replays(l, g) ? -1 : 0;
    free(ns);
    free(g);
    for (size_t i = 0; i < l->n_links && !rc; i++) {
        const tsa_np_link_part *p = &l->links[i];
        if (p->n_ops > p->len) {
            rc = -1;
            break;
        }
        uint32_t *steps = malloc((p->n_ops ? p->n_ops : 1) * sizeof *steps);
        uint64_t *t = malloc((p->n_ops ? p->n_ops : 1) * sizeof *t);
        rc = !steps || !t || tsa_np_link_ops(l, p, steps, t) ? -1 : 0;
        free(steps);
        free(t);
    }
    return rc;
}

int tsa_np_lean_get(tsa_cursor *c, tsa_np_lean *l)
{
    memset(l, 0, sizeof *l);
    uint64_t v[12];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        v[i] = tsa_get_u64(c);
    l->parts = (unsigned)v[0];
    l->ce_colls = (size_t)v[1];
    l->p2p = (size_t)v[2];
    l->proxies = (size_t)v[3];
    l->kch = (size_t)v[4];
    l->kch_gpu = v[5] != 0;
    l->colls = (size_t)v[6];
    l->joined = (size_t)v[7];
    l->no_call = (size_t)v[8];
    l->captured_calls = (size_t)v[9];
    l->n_kernel = (size_t)v[10];
    l->n_replays = (size_t)v[11];
    get_bytes(c, &l->kernel);
    get_bytes(c, &l->replays);
    l->xfer = tsa_get_arr(c, &l->n_xfer, sizeof *l->xfer);
    l->xfer_colls = tsa_get_arr(c, &l->n_xfer_colls, sizeof *l->xfer_colls);
    l->links = tsa_get_arr(c, &l->n_links, sizeof *l->links);
    get_bytes(c, &l->link_ops);
    l->p2p_ops = tsa_get_arr(c, &l->n_p2p_ops, sizeof *l->p2p_ops);
    if (!c->bad && (l->parts & ~(unsigned)TSA_NPL_ALL || check(l)))
        c->bad = 1;
    return c->bad ? -1 : 0;
}
