/* A rank's plugin records to its lean part (nprof_reduce.h): here the
 * summary's part (counts, the join, kernel times, the collectives without
 * a call grouped); the network's parts are nprof_net_reduce.c's. */
#include "nprof_reduce.h"

#include <stdlib.h>
#include <string.h>

#include "nprof_join.h"
#include "nprof_net_reduce.h"
#include "rank_nprof.h"
#include "rank_view.h"
#include "tsc_nccl_ops.h"
#include "util/cmp.h"
#include "util/vec.h"

double tsa_np_quantile(double *v, size_t n, double q)
{
    if (!n)
        return -1;
    qsort(v, n, sizeof *v, tsa_cmp_double);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

/* A collective's kernel time: its longest channel (the channels run side
 * by side; the collective is done when the last one is). */
typedef struct { uint32_t op_id; uint64_t ns; } op_time;

static int by_op_id(const void *pa, const void *pb)
{
    const op_time *a = pa, *b = pb;
    return (a->op_id > b->op_id) - (a->op_id < b->op_id);
}

/* Per op id the longest channel, sorted by op id; *n entries. */
static op_time *kernel_times(const struct tsa_nprof *np, size_t *n)
{
    op_time *t = malloc(sizeof *t * (np->n_kch ? np->n_kch : 1));
    if (!t)
        return NULL;
    for (size_t i = 0; i < np->n_kch; i++)
        t[i] = (op_time){np->kch[i].op_id, tsa_np_kch_ns(&np->kch[i])};
    if (np->n_kch)
        qsort(t, np->n_kch, sizeof *t, by_op_id);
    size_t m = 0;
    for (size_t i = 0; i < np->n_kch; i++) {
        if (m && t[m - 1].op_id == t[i].op_id) {
            if (t[i].ns > t[m - 1].ns)
                t[m - 1].ns = t[i].ns;
        } else {
            t[m++] = t[i];
        }
    }
    *n = m;
    return t;
}

/* The collectives' kernel times, ascending (the job's quantiles are
 * taken over every rank's). */
static int keep_kernel_times(tsa_np_lean *l, const op_time *kt, size_t nkt)
{
    uint64_t *ns = malloc((nkt ? nkt : 1) * sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < nkt; i++)
        ns[i] = kt[i].ns;
    if (nkt)
        qsort(ns, nkt, sizeof *ns, tsa_cmp_u64);
    int rc = tsa_np_lean_set_kernel_times(l, ns, nkt);
    free(ns);
    return rc;
}

static const op_time *time_of(const op_time *t, size_t n, uint32_t op_id)
{
    op_time want = {op_id, 0};
    return n ? bsearch(&want, t, n, sizeof *t, by_op_id) : NULL;
}

/* A collective without a call: its group's key and its op id. */
typedef struct { uint64_t comm_id, seq; uint8_t op; uint32_t op_id; } lone;

static int by_group(const void *pa, const void *pb)
{
    const lone *a = pa, *b = pb;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return (a->op_id > b->op_id) - (a->op_id < b->op_id);
}

typedef struct {
    double *v;
    size_t n, cap;
} doubles;

/* One group of a rank's collectives without a call, [b, e) of l. */
static int fill_group(const struct tsa_nprof *np, const lone *l, size_t b, size_t e,
                      const tsa_np_op_ref *refs, size_t nrefs, const op_time *kt, size_t nkt,
                      doubles *kernel, tsa_np_replay *g)
{
    *g = (tsa_np_replay){.comm_id = l[b].comm_id, .op = l[b].op, .seq = l[b].seq,
                         .colls = e - b, .kernel_ns = -1};
    kernel->n = 0;
    for (size_t i = b; i < e; i++) {
        for (size_t k = tsa_np_first_ref(refs, nrefs, l[i].op_id); k < nrefs && refs[k].op_id == l[i].op_id;
             k++) {
            const tsa_np_proxy *p = &np->proxies[refs[k].idx];
            g->proxy_ops++;
            g->steps += p->steps;
            g->bytes += p->bytes;
            g->wire_ns += p->wire_ns;
        }
        const op_time *t = time_of(kt, nkt, l[i].op_id);
        if (t) {
            if (tsa_grow((void **)&kernel->v, kernel->n, &kernel->cap, sizeof *kernel->v))
                return -1;
            kernel->v[kernel->n++] = (double)t->ns;
        }
    }
    g->kernel_ns = tsa_np_quantile(kernel->v, kernel->n, 0.5);
    return 0;
}

/* The rank's collectives without a call, grouped by (communicator,
 * function, NCCL sequence number): the replays of one captured one. */
static int keep_replays(tsa_np_lean *out, const struct tsa_nprof *np, const tsa_np_join *j,
                        const op_time *kt, size_t nkt)
{
    lone *l = malloc(sizeof *l * (np->n_colls ? np->n_colls : 1));
    tsa_np_op_ref *refs = malloc(sizeof *refs * (np->n_proxies ? np->n_proxies : 1));
    tsa_np_replay *g = malloc(sizeof *g * (np->n_colls ? np->n_colls : 1));
    doubles kernel = {0};
    int rc = l && refs && g ? 0 : -1;
    size_t nl = 0, ng = 0;
    for (size_t k = 0; k < np->n_colls && !rc; k++)
        if (j->no_call[k]) {
            const tsa_np_comm *cm = tsa_nprof_comm(np, np->colls[k].comm);
            l[nl++] = (lone){cm ? cm->comm_id : 0, np->colls[k].seq, np->colls[k].op,
                             np->colls[k].op_id};
        }
    for (size_t k = 0; k < np->n_proxies && !rc; k++)
        refs[k] = (tsa_np_op_ref){np->proxies[k].op_id, k};
    if (!rc && np->n_proxies)
        qsort(refs, np->n_proxies, sizeof *refs, tsa_np_by_ref);
    if (!rc && nl)
        qsort(l, nl, sizeof *l, by_group);
    for (size_t b = 0, e; b < nl && !rc; b = e) {
        for (e = b + 1; e < nl && l[e].comm_id == l[b].comm_id && l[e].op == l[b].op &&
                        l[e].seq == l[b].seq;
             e++)
            ;
        rc = fill_group(np, l, b, e, refs, np->n_proxies, kt, nkt, &kernel, &g[ng++]);
    }
    out->no_call = nl;
    if (!rc)
        rc = tsa_np_lean_set_replays(out, g, ng);
    free(l), free(refs), free(g), free(kernel.v);
    return rc;
}

/* The summary's part: r's calls as an array (the join reads them). */
static int make_summary(const tsa_rank *r, tsa_np_lean *out)
{
    const struct tsa_nprof *np = r->nprof;
    out->proxies = np->n_proxies;
    out->kch = np->n_kch;
    for (size_t k = 0; k < np->n_kch; k++)
        out->kch_gpu |= !np->kch[k].host_times;
    for (size_t k = 0; k < np->n_colls; k++) {
        out->ce_colls += np->colls[k].ce;
        out->p2p += np->colls[k].op == TSC_NCCL_SEND || np->colls[k].op == TSC_NCCL_RECV;
    }
    size_t nkt = 0;
    op_time *kt = kernel_times(np, &nkt);
    tsa_np_join j;
    if (!kt || tsa_nprof_join(r, &j)) {
        free(kt);
        return -1;
    }
    out->colls = j.colls;
    out->joined = j.joined;
    out->captured_calls = j.captured_calls;
    int rc = keep_kernel_times(out, kt, nkt);
    if (!rc)
        rc = keep_replays(out, np, &j, kt, nkt);
    tsa_np_join_free(&j);
    free(kt);
    return rc;
}

int tsa_np_lean_make(const tsa_rank *r, unsigned parts, tsa_np_lean *out)
{
    memset(out, 0, sizeof *out);
    if (!r->nprof)
        return 0;
    int rc = 0;
    if (parts & TSA_NPL_SUMMARY) {
        tsa_rank_view v;
        const tsa_rank *rk = tsa_view_open(r, TSA_VIEW_CALLS, &v);
        rc = rk ? make_summary(rk, out) : -1;
        tsa_view_close(&v);
    }
    if (!rc && (parts & TSA_NPL_XFER))
        rc = tsa_np_reduce_xfer(r->nprof, out);
    if (!rc && (parts & TSA_NPL_LINKS))
        rc = tsa_np_reduce_links(r->nprof, out);
    if (!rc && (parts & TSA_NPL_P2P))
        rc = tsa_np_reduce_p2p(r->nprof, out);
    if (rc) {
        tsa_np_lean_free(out);
        return -1;
    }
    out->parts = parts & TSA_NPL_ALL;
    return 0;
}

const tsa_np_lean *tsa_rank_np_lean(const tsa_rank *r, unsigned parts, tsa_np_lean *tmp)
{
    memset(tmp, 0, sizeof *tmp);
    if (!r->nprof)
        return NULL;
    if (r->nprof->lean)
        return r->nprof->lean;
    return tsa_np_lean_make(r, parts, tmp) ? NULL : tmp;
}

size_t tsa_np_proxy_count(const tsa_rank *r)
{
    if (!r->nprof)
        return 0;
    return r->nprof->lean ? r->nprof->lean->proxies : r->nprof->n_proxies;
}
