/* The plugin's view of a job (nprof_summary.h). */
#include "nprof_summary.h"

#include <stdlib.h>
#include <string.h>

#include "load/nprof_join.h"
#include "load/rank_nprof.h"
#include "load/rank_view.h"
#include "tsc_nccl_ops.h"
#include "util/vec.h"

int tsa_np_any(const tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].nprof)
            return 1;
    return 0;
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

static int by_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The q-quantile of v (sorted here); -1 when empty. */
static double quantile(double *v, size_t n, double q)
{
    if (!n)
        return -1;
    qsort(v, n, sizeof *v, by_double);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

typedef struct {
    double *v;
    size_t n, cap;
} doubles;

static int push(doubles *d, double x)
{
    if (tsa_grow((void **)&d->v, d->n, &d->cap, sizeof *d->v))
        return -1;
    d->v[d->n++] = x;
    return 0;
}

static const op_time *time_of(const op_time *t, size_t n, uint32_t op_id)
{
    op_time want = {op_id, 0};
    return n ? bsearch(&want, t, n, sizeof *t, by_op_id) : NULL;
}

/* A rank's proxy ops by op id: (op id, index), sorted. */
typedef struct { uint32_t op_id; size_t idx; } op_ref;

static int by_ref(const void *pa, const void *pb)
{
    const op_ref *a = pa, *b = pb;
    if (a->op_id != b->op_id)
        return a->op_id < b->op_id ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* The first entry of op_id in refs (sorted), or n. */
static size_t first_ref(const op_ref *refs, size_t n, uint32_t op_id)
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

/* One group of a rank's collectives without a call, [b, e) of l. */
static int add_group(tsa_np_summary *s, size_t *cap, const tsa_rank *r, const lone *l, size_t b,
                     size_t e, const op_ref *refs, size_t nrefs, const op_time *kt, size_t nkt,
                     doubles *kernel)
{
    if (tsa_grow((void **)&s->replays, s->n_replays, cap, sizeof *s->replays))
        return -1;
    tsa_np_replay *g = &s->replays[s->n_replays++];
    *g = (tsa_np_replay){.rank = r->rank, .comm_id = l[b].comm_id, .op = l[b].op,
                         .seq = l[b].seq, .colls = e - b, .kernel_ns = -1};
    kernel->n = 0;
    for (size_t i = b; i < e; i++) {
        for (size_t k = first_ref(refs, nrefs, l[i].op_id); k < nrefs && refs[k].op_id == l[i].op_id;
             k++) {
            const tsa_np_proxy *p = &r->nprof->proxies[refs[k].idx];
            g->proxy_ops++;
            g->steps += p->steps;
            g->bytes += p->bytes;
            g->wire_ns += p->wire_ns;
        }
        const op_time *t = time_of(kt, nkt, l[i].op_id);
        if (t && push(kernel, (double)t->ns))
            return -1;
    }
    g->kernel_ns = quantile(kernel->v, kernel->n, 0.5);
    return 0;
}

/* A rank's collectives without a call, grouped by (communicator,
 * function, NCCL sequence number): the replays of one captured one. */
static int add_replays(tsa_np_summary *s, size_t *cap, const tsa_rank *r, const tsa_np_join *j,
                       const op_time *kt, size_t nkt, doubles *kernel)
{
    const struct tsa_nprof *np = r->nprof;
    lone *l = malloc(sizeof *l * (np->n_colls ? np->n_colls : 1));
    op_ref *refs = malloc(sizeof *refs * (np->n_proxies ? np->n_proxies : 1));
    if (!l || !refs) {
        free(l), free(refs);
        return -1;
    }
    size_t nl = 0;
    for (size_t k = 0; k < np->n_colls; k++)
        if (j->no_call[k]) {
            const tsa_np_comm *cm = tsa_nprof_comm(np, np->colls[k].comm);
            l[nl++] = (lone){cm ? cm->comm_id : 0, np->colls[k].seq, np->colls[k].op,
                             np->colls[k].op_id};
        }
    for (size_t k = 0; k < np->n_proxies; k++)
        refs[k] = (op_ref){np->proxies[k].op_id, k};
    if (np->n_proxies)
        qsort(refs, np->n_proxies, sizeof *refs, by_ref);
    if (nl)
        qsort(l, nl, sizeof *l, by_group);
    int rc = 0;
    for (size_t b = 0, e; b < nl && !rc; b = e) {
        for (e = b + 1; e < nl && l[e].comm_id == l[b].comm_id && l[e].op == l[b].op &&
                        l[e].seq == l[b].seq;
             e++)
            ;
        rc = add_group(s, cap, r, l, b, e, refs, np->n_proxies, kt, nkt, kernel);
    }
    s->no_call += nl;
    free(l), free(refs);
    return rc;
}

/* One rank's records into the sums. */
static int add_rank(tsa_np_summary *s, size_t *cap, const tsa_rank *r, doubles *kernel_all,
                    doubles *kernel_group)
{
    const struct tsa_nprof *np = r->nprof;
    s->ranks++;
    for (size_t k = 0; k < np->n_comms; k++) {
        int v = np->comms[k].version;
        if (!s->version_min || v < s->version_min)
            s->version_min = v;
        if (v > s->version_max)
            s->version_max = v;
    }
    s->proxies += np->n_proxies;
    s->kch += np->n_kch;
    s->lost += np->lost;
    s->pxn_ops += np->pxn_ops;
    for (size_t k = 0; k < np->n_kch; k++)
        s->kch_gpu |= !np->kch[k].host_times;
    for (size_t k = 0; k < np->n_colls; k++) {
        s->ce_colls += np->colls[k].ce;
        s->p2p += np->colls[k].op == TSC_NCCL_SEND || np->colls[k].op == TSC_NCCL_RECV;
    }
    size_t nkt = 0;
    op_time *kt = kernel_times(np, &nkt);
    tsa_np_join j;
    if (!kt || tsa_nprof_join(r, &j)) {
        free(kt);
        return -1;
    }
    s->colls += j.colls;
    s->joined += j.joined;
    s->captured_calls += j.captured_calls;
    int rc = 0;
    for (size_t k = 0; k < nkt && !rc; k++)
        rc = push(kernel_all, (double)kt[k].ns);
    if (!rc)
        rc = add_replays(s, cap, r, &j, kt, nkt, kernel_group);
    tsa_np_join_free(&j);
    free(kt);
    return rc;
}

int tsa_np_summarize(const tsa_job *job, tsa_np_summary *out)
{
    memset(out, 0, sizeof *out);
    out->kernel_ns_median = out->kernel_ns_p95 = -1;
    size_t cap = 0;
    doubles all = {0}, group = {0};
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++) {
        if (!job->ranks[i].nprof)
            continue;
        /* The join reads the calls as an array: a lean rank's decoded. */
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&job->ranks[i], TSA_VIEW_CALLS, &v);
        rc = r ? add_rank(out, &cap, r, &all, &group) : -1;
        tsa_view_close(&v);
    }
    if (!rc) {
        out->kernel_ns_median = quantile(all.v, all.n, 0.5);
        out->kernel_ns_p95 = quantile(all.v, all.n, 0.95);
    }
    free(all.v);
    free(group.v);
    if (rc)
        tsa_np_summary_free(out);
    return rc;
}

void tsa_np_summary_free(tsa_np_summary *s)
{
    free(s->replays);
    memset(s, 0, sizeof *s);
    s->kernel_ns_median = s->kernel_ns_p95 = -1;
}
