/* The what-if graph from a job's records.
 *
 * Per worker and analysed step: its communication calls become nodes (a
 * call with its own kernel on the GPU interval of that kernel; calls
 * grouped between ncclGroupStart/End without a kernel as one node that
 * ends with the group; other calls over their host interval), on the lane
 * of their stream or host thread.  Compute becomes nodes too: with GPU
 * records the runs of compute kernels on each stream, cut wherever a
 * communication call of the worker starts or ends (the points where one
 * stream can wait for another) and where the step or the phase changes;
 * without GPU records, the host time between one call and the next on a
 * thread.  Each node depends on the previous node on its lane and, with
 * GPU records, on the node of another lane that ended just before it
 * started (within WI_LINK_NS: an event wait; a later start is the host's
 * doing and stays a gap).  Collectives are matched by (communicator,
 * sequence number), sends and receives by (communicator, sender, receiver,
 * n-th message between them). */
#include <stdlib.h>
#include <string.h>

#include "passes/group_share.h"
#include "passes/kernel_phase.h"
#include "load/job_build.h"
#include "tsc_format.h"
#include "wi_internal.h"

#define WI_LINK_NS 500000      /* 0.5 ms: a cross-stream start this close is a wait */
#define WI_SIG_NAMES 64        /* kernel names hashed into a compute signature */
#define NONE32 UINT32_MAX
/* Bounds that keep every sum of the replay inside int64 on corrupt input
 * (the cross-rank pass's): times between 1933 and 2079, one operation
 * under 73 minutes.  A record outside them is left out of the graph. */
#define WI_T_MIN (-(INT64_C(1) << 60))
#define WI_T_MAX (INT64_C(1) << 61)
#define WI_SPAN_MAX (INT64_C(1) << 42)

static int plausible(int64_t s, int64_t e)
{
    return s >= WI_T_MIN && e <= WI_T_MAX && e >= s && e - s <= WI_SPAN_MAX;
}

typedef struct rnode {
    int64_t s, e;
    uint32_t lane, step;
    uint8_t kind, okind;
    uint64_t sig;
    int32_t src;
    uint32_t op_first, n_op;
    uint32_t k_first, n_k;       /* GPU compute: its kernels in rank_nodes.kern */
    uint32_t gidx;
} rnode;

typedef struct rank_nodes {
    rnode *v; size_t n, cap;
    uint32_t *ops; size_t n_ops, cap_ops;
    wi_kern *kern; size_t n_kern, cap_kern;
    int64_t *step_lo, *step_hi;  /* analysed steps, own clock */
    size_t n_steps;
    size_t next;                 /* emission cursor into v */
} rank_nodes;

/* Room for one more element (core's doubling growth). */
static int push(void **arr, size_t *n, size_t *cap, size_t elem)
{
    return tsa_grow(arr, *n, cap, elem);
}

static int usable_call(const tsa_nccl_op *o)
{
    return o->op >= TSC_NCCL_ALLREDUCE && o->op <= TSC_NCCL_RECV && o->comm_size != 1 &&
           (o->result == 0 || o->result == 7);
}

static int coll_op(uint8_t op)
{
    return op == TSC_NCCL_ALLREDUCE || op == TSC_NCCL_ALLGATHER ||
           op == TSC_NCCL_REDUCESCATTER || op == TSC_NCCL_ALLTOALL;
}

/* Step (analysed index) holding own-clock time t, or -1. */
static int32_t step_of(const rank_nodes *rn, int64_t t)
{
    size_t lo = 0, hi = rn->n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rn->step_lo[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || t >= rn->step_hi[lo - 1])
        return -1;
    return (int32_t)(lo - 1);
}

static int add_node(rank_nodes *rn, const rnode *x)
{
    if (push((void **)&rn->v, &rn->n, &rn->cap, sizeof *rn->v))
        return -1;
    rn->v[rn->n++] = *x;
    return 0;
}

static int add_op(rank_nodes *rn, uint32_t op)
{
    if (push((void **)&rn->ops, &rn->n_ops, &rn->cap_ops, sizeof *rn->ops))
        return -1;
    rn->ops[rn->n_ops++] = op;
    return 0;
}

/* Communication nodes of one rank (own clock; aligned later). */
static int comm_nodes(const tsa_rank *r, rank_nodes *rn)
{
    int64_t *done = tsa_group_done(r);
    if (!done && r->n_nccl)
        return -1;
    uint64_t last_key = 0;
    uint32_t last_lane = NONE32;
    rnode *cur = NULL;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *o = &r->nccl[i];
        if (!usable_call(o))
            continue;
        int64_t s = o->start_ns, e = o->end_ns > o->start_ns ? o->end_ns : o->start_ns;
        uint64_t key;
        uint32_t lane = o->tid;
        int grouped = o->kernel < 0 && (o->group_depth > 0 || (o->flags & TSC_NCCL_F_IN_GROUP));
        if (o->kernel >= 0 && (size_t)o->kernel < r->n_kernels &&
            o->gpu_end_ns >= o->gpu_start_ns && o->gpu_start_ns) {
            s = o->gpu_start_ns;
            e = o->gpu_end_ns;
            lane = r->kernels[o->kernel].stream | 0x80000000u;
            key = ((uint64_t)1 << 62) | (uint64_t)o->kernel;
        } else if (grouped) {
            e = done[i] > s ? done[i] : s;
            key = ((uint64_t)2 << 62) | (uint64_t)e;
        } else {
            key = ((uint64_t)3 << 62) | i;
        }
        int32_t st = plausible(s, e) ? step_of(rn, s) : -1;
        if (st < 0) {
            cur = NULL;
            continue;
        }
        if (cur && key == last_key && lane == last_lane && (uint32_t)st == cur->step) {
            if (s < cur->s)
                cur->s = s;
            if (e > cur->e)
                cur->e = e;
            cur->n_op++;
            if (add_op(rn, (uint32_t)i))
                goto fail;
            continue;
        }
        rnode x = {.s = s, .e = e, .lane = lane, .step = (uint32_t)st, .kind = WI_COMM,
                   .okind = wi_okind_of_comm(o->op), .src = (int32_t)i,
                   .op_first = (uint32_t)rn->n_ops, .n_op = 1};
        x.sig = wi_hash(wi_hash(wi_hash(0x5eed, o->op), o->bytes), o->comm_size);
        if (add_op(rn, (uint32_t)i) || add_node(rn, &x))
            goto fail;
        cur = &rn->v[rn->n - 1];
        last_key = key;
        last_lane = lane;
    }
    free(done);
    return 0;
fail:
    free(done);
    return -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static const tsa_rank *g_sort_rank;
static int by_stream_start(const void *a, const void *b)
{
    const tsa_kernel *x = &g_sort_rank->kernels[*(const uint32_t *)a];
    const tsa_kernel *y = &g_sort_rank->kernels[*(const uint32_t *)b];
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int is_compute_kernel(const tsa_kernel *k)
{
    return k->category != TSA_KCAT_COMM && k->nccl < 0;
}

/* Compute nodes from GPU kernels (see the file comment). */
static int gpu_compute_nodes(const tsa_rank *r, rank_nodes *rn, size_t n_comm)
{
    size_t nk = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        nk += is_compute_kernel(&r->kernels[i]);
    if (!nk)
        return 0;
    uint32_t *idx = malloc(nk * sizeof *idx);
    int64_t *cuts = malloc((2 * n_comm + 1) * sizeof *cuts);
    if (!idx || !cuts) {
        free(idx);
        free(cuts);
        return -1;
    }
    nk = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        if (is_compute_kernel(&r->kernels[i]))
            idx[nk++] = (uint32_t)i;
    g_sort_rank = r;
    if (nk > 1)
        qsort(idx, nk, sizeof *idx, by_stream_start);
    size_t nc = 0;
    for (size_t i = 0; i < n_comm; i++) {
        cuts[nc++] = rn->v[i].s;
        cuts[nc++] = rn->v[i].e;
    }
    if (nc > 1)
        qsort(cuts, nc, sizeof *cuts, cmp_i64);
    rnode cur;
    int open = 0, rc = 0;
    uint64_t names = 0;
    for (size_t j = 0; j < nk && !rc; j++) {
        const tsa_kernel *k = &r->kernels[idx[j]];
        int32_t st = plausible(k->start_ns, k->end_ns) ? step_of(rn, k->start_ns) : -1;
        uint8_t phase = (uint8_t)tsa_kernel_phase(r, k);
        int split = !open || st < 0 || (uint32_t)st != cur.step ||
                    cur.lane != (k->stream | 0x80000000u) || phase != cur.okind;
        if (!split && open) {
            /* a communication call started or ended since the previous kernel started */
            const tsa_kernel *p = &r->kernels[idx[j - 1]];
            size_t lo = 0, hi = nc;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cuts[mid] <= p->start_ns)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            split = lo < nc && cuts[lo] <= k->start_ns;
        }
        if (split && open) {
            cur.okind = wi_okind_of_phase(cur.okind);
            cur.sig = names;
            rc = add_node(rn, &cur);
            open = 0;
        }
        if (st < 0)
            continue;
        if (!open) {
            memset(&cur, 0, sizeof cur);
            cur.s = k->start_ns;
            cur.e = k->end_ns;
            cur.lane = k->stream | 0x80000000u;
            cur.step = (uint32_t)st;
            cur.kind = WI_COMPUTE;
            cur.okind = phase;   /* the phase until closed */
            cur.src = (int32_t)idx[j];
            cur.k_first = (uint32_t)rn->n_kern;
            names = 0xc0ffee;
            open = 1;
        }
        if (k->end_ns > cur.e)
            cur.e = k->end_ns;
        if (push((void **)&rn->kern, &rn->n_kern, &rn->cap_kern, sizeof *rn->kern)) {
            rc = -1;
            break;
        }
        rn->kern[rn->n_kern++] = (wi_kern){wi_hash_str(0x6b, tsa_rank_string(r, k->name)),
                                           k->end_ns - k->start_ns};
        cur.n_k++;
        if (cur.n_op++ < WI_SIG_NAMES)
            names = wi_hash_str(names, tsa_rank_string(r, k->name));
    }
    if (open && !rc) {
        cur.okind = wi_okind_of_phase(cur.okind);
        cur.sig = names;
        cur.n_op = 0;
        rc = add_node(rn, &cur);
    }
    for (size_t i = n_comm; i < rn->n; i++)
        rn->v[i].n_op = 0;
    free(idx);
    free(cuts);
    return rc;
}

/* Without GPU records: the host time before each call on its thread. */
static int host_compute_nodes(rank_nodes *rn, size_t n_comm)
{
    for (size_t i = 0; i < n_comm; i++) {
        const rnode *c = &rn->v[i];
        int64_t from = rn->step_lo[c->step];
        for (size_t j = i; j-- > 0;) {
            if (rn->v[j].lane != c->lane)
                continue;
            if (rn->v[j].step == c->step && rn->v[j].e > from)
                from = rn->v[j].e;
            break;
        }
        if (c->s <= from)
            continue;
        rnode x = {.s = from, .e = c->s, .lane = c->lane, .step = c->step, .kind = WI_COMPUTE,
                   .okind = TSA_OK_COMPUTE, .sig = 0x4057, .src = -1};
        if (add_node(rn, &x))
            return -1;
    }
    return 0;
}

static int by_step_start(const void *a, const void *b)
{
    const rnode *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;   /* compute before the call it leads to */
    return (x->lane > y->lane) - (x->lane < y->lane);
}

static int rank_steps(const tsa_rank *r, rank_nodes *rn)
{
    rn->step_lo = malloc((r->n_steps + 1) * sizeof *rn->step_lo);
    rn->step_hi = malloc((r->n_steps + 1) * sizeof *rn->step_hi);
    if (!rn->step_lo || !rn->step_hi)
        return -1;
    for (size_t s = 0; s < r->n_steps; s++) {
        if (r->steps[s].warmup || r->steps[s].end_ns <= r->steps[s].start_ns)
            continue;
        if (rn->n_steps && r->steps[s].start_ns < rn->step_hi[rn->n_steps - 1])
            continue;   /* overlapping windows: keep the first */
        rn->step_lo[rn->n_steps] = r->steps[s].start_ns;
        rn->step_hi[rn->n_steps] = r->steps[s].end_ns;
        rn->n_steps++;
    }
    return 0;
}

/* ---- matching ---- */

typedef struct entry {
    uint64_t comm, a, b, c;   /* sort key */
    uint32_t node;            /* graph node, NONE32 outside the analysed steps */
    int32_t rank;
    uint8_t send;
} entry;

static int by_key(const void *pa, const void *pb)
{
    const entry *x = pa, *y = pb;
    if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    if (x->c != y->c) return x->c < y->c ? -1 : 1;
    if (x->send != y->send) return x->send > y->send ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

typedef struct hubspec {
    uint32_t step, first, n;   /* into the member scratch */
} hubspec;

typedef struct p2p_counter {
    uint64_t comm;
    uint32_t src, dst;
    uint64_t next;
} p2p_counter;

/* Entries for every usable call of every rank, with its node. */
static int gather_entries(const tsa_job *job, rank_nodes *rns, entry **out, size_t *n_out)
{
    size_t cap = 0, n = 0;
    entry *v = NULL;
    for (size_t r = 0; r < job->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        rank_nodes *rn = &rns[r];
        /* op -> node of this rank */
        uint32_t *node_of = malloc((rk->n_nccl ? rk->n_nccl : 1) * sizeof *node_of);
        p2p_counter *ctr = NULL;
        size_t n_ctr = 0, cap_ctr = 0;
        if (!node_of)
            goto fail;
        for (size_t i = 0; i < rk->n_nccl; i++)
            node_of[i] = NONE32;
        for (size_t k = 0; k < rn->n; k++)
            if (rn->v[k].kind == WI_COMM)
                for (uint32_t q = 0; q < rn->v[k].n_op; q++)
                    node_of[rn->ops[rn->v[k].op_first + q]] = rn->v[k].gidx;
        for (size_t i = 0; i < rk->n_nccl; i++) {
            const tsa_nccl_op *o = &rk->nccl[i];
            if (!usable_call(o))
                continue;
            entry e = {.comm = o->comm_id, .node = node_of[i], .rank = (int32_t)r};
            if (coll_op(o->op)) {
                if (e.node == NONE32)
                    continue;
                e.a = o->seq;
            } else if ((o->op == TSC_NCCL_SEND || o->op == TSC_NCCL_RECV) && o->peer >= 0) {
                e.send = o->op == TSC_NCCL_SEND;
                uint32_t src = e.send ? o->comm_rank : (uint32_t)o->peer;
                uint32_t dst = e.send ? (uint32_t)o->peer : o->comm_rank;
                size_t c = 0;
                while (c < n_ctr && !(ctr[c].comm == o->comm_id && ctr[c].src == src && ctr[c].dst == dst))
                    c++;
                if (c == n_ctr) {
                    if (push((void **)&ctr, &n_ctr, &cap_ctr, sizeof *ctr)) {
                        free(node_of);
                        goto fail;
                    }
                    ctr[n_ctr++] = (p2p_counter){o->comm_id, src, dst, 0};
                }
                e.a = ((uint64_t)1 << 63) | src;
                e.b = dst;
                e.c = ctr[c].next++;
            } else {
                continue;
            }
            if (push((void **)&v, &n, &cap, sizeof *v)) {
                free(node_of);
                free(ctr);
                goto fail;
            }
            v[n++] = e;
        }
        free(node_of);
        free(ctr);
    }
    if (n > 1)
        qsort(v, n, sizeof *v, by_key);
    *out = v;
    *n_out = n;
    return 0;
fail:
    free(v);
    return -1;
}

static int by_hub_step(const void *a, const void *b)
{
    const hubspec *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

/* Receives that end before their send starts: impossible on a true clock.
 * shift: subtract each rank's clock offset first. */
static size_t causality_breaks(const tsa_job *job, const wi_graph *g, const entry *v, size_t n,
                               int shift)
{
    size_t bad = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (!(v[i].a >> 63) || !v[i].send || v[i + 1].send || v[i].node == NONE32 ||
            v[i + 1].node == NONE32 || v[i].comm != v[i + 1].comm || v[i].a != v[i + 1].a ||
            v[i].b != v[i + 1].b || v[i].c != v[i + 1].c)
            continue;
        const wi_node *sn = &g->nodes[v[i].node], *rv = &g->nodes[v[i + 1].node];
        int64_t ss = sn->rec_start, re = rv->rec_end;
        if (shift) {
            ss -= job->ranks[sn->rank].clock_offset_ns;
            re -= job->ranks[rv->rank].clock_offset_ns;
        }
        bad += re < ss;
    }
    return bad;
}

/* The cross-rank pass aligns clocks by the ends of collectives; where the
 * ranks' own clocks keep more messages causal (traces of one clock whose
 * collective ends differ by timer jitter), those are used. */
static void choose_clock(const tsa_job *job, wi_graph *g, const entry *v, size_t n)
{
    size_t aligned = causality_breaks(job, g, v, n, 0);
    if (!aligned || causality_breaks(job, g, v, n, 1) >= aligned)
        return;
    for (size_t i = 0; i < g->n_nodes; i++) {
        int64_t off = job->ranks[g->nodes[i].rank].clock_offset_ns;
        g->nodes[i].rec_start -= off;
        g->nodes[i].rec_end -= off;
    }
}

/* Hubs and gates from the sorted entries; transfer times of comm nodes. */
static int match(const tsa_job *job, rank_nodes *rns, wi_build *b)
{
    wi_graph *g = &b->g;
    entry *v = NULL;
    size_t n = 0;
    if (gather_entries(job, rns, &v, &n))
        return -1;
    choose_clock(job, g, v, n);
    uint32_t *mem = malloc((n ? n : 1) * sizeof *mem);
    uint8_t *gate_mem = malloc((n ? n : 1));
    hubspec *hs = NULL;
    size_t n_hs = 0, cap_hs = 0;
    int64_t *open = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *open);
    int rc = -1;
    if (!mem || !gate_mem || !open)
        goto out;
    for (size_t i = 0; i < g->n_nodes; i++)
        open[i] = g->nodes[i].rec_start;
    size_t n_mem = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].comm == v[i].comm && v[j].a == v[i].a && v[j].b == v[i].b &&
               v[j].c == v[i].c)
            j++;
        int p2p = (v[i].a >> 63) != 0;
        size_t first = n_mem;
        int ok = 1;
        if (p2p) {
            /* one send, one receive, both analysed, in one step */
            ok = j - i == 2 && v[i].send && !v[i + 1].send && v[i].node != NONE32 &&
                 v[i + 1].node != NONE32 &&
                 g->nodes[v[i].node].step == g->nodes[v[i + 1].node].step;
            if (ok) {
                const wi_node *sn = &g->nodes[v[i].node], *rv = &g->nodes[v[i + 1].node];
                if (push((void **)&b->pairs, &b->n_pairs, &b->cap_pairs, sizeof *b->pairs))
                    goto out;
                b->pairs[b->n_pairs++] = (wi_pair){v[i].rank, v[i + 1].rank, sn->rec_start};
                mem[n_mem] = v[i].node;
                gate_mem[n_mem++] = rv->rec_start <= sn->rec_end;   /* rendezvous */
                mem[n_mem] = v[i + 1].node;
                gate_mem[n_mem++] = sn->rec_start <= rv->rec_end;

            }
        } else {
            int64_t last = INT64_MIN;
            for (size_t k = i; k < j && ok; k++) {
                if (k > i && (v[k].rank == v[k - 1].rank ||
                              g->nodes[v[k].node].step != g->nodes[v[i].node].step))
                    ok = 0;
                if (g->nodes[v[k].node].rec_start > last)
                    last = g->nodes[v[k].node].rec_start;
            }
            ok = ok && j - i >= 2;
            for (size_t k = i; k < j && ok; k++) {
                mem[n_mem] = v[k].node;
                gate_mem[n_mem++] = last <= g->nodes[v[k].node].rec_end;
            }
        }
        if (ok) {
            if (push((void **)&hs, &n_hs, &cap_hs, sizeof *hs))
                goto out;
            hs[n_hs++] = (hubspec){g->nodes[mem[first]].step, (uint32_t)first,
                                   (uint32_t)(n_mem - first)};
        } else {
            n_mem = first;
        }
        i = j;
    }
    if (n_hs > 1)
        qsort(hs, n_hs, sizeof *hs, by_hub_step);
    for (size_t h = 0; h < n_hs; h++) {
        int64_t last = INT64_MIN;
        for (uint32_t k = 0; k < hs[h].n; k++)
            if (g->nodes[mem[hs[h].first + k]].rec_start > last)
                last = g->nodes[mem[hs[h].first + k]].rec_start;
        if (wi_graph_add_hub(g, hs[h].step, mem + hs[h].first, hs[h].n))
            goto out;
        for (uint32_t k = 0; k < hs[h].n; k++) {
            uint32_t node = mem[hs[h].first + k];
            if (!gate_mem[hs[h].first + k])
                continue;
            if (wi_graph_add_gate(g, node, (uint32_t)(g->n_hubs - 1)))
                goto out;
            if (last > open[node])
                open[node] = last;
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == WI_COMM) {
            int64_t x = g->nodes[i].rec_end - open[i];
            g->nodes[i].dur = x > 0 ? x : 0;
        }
    rc = 0;
out:
    free(v);
    free(mem);
    free(gate_mem);
    free(hs);
    free(open);
    return rc;
}

/* ---- emission ---- */

typedef struct lane_state {
    uint32_t lane;
    uint32_t last;       /* last node on it in this step, NONE32 */
    size_t scan;         /* cross-lane cursor into this lane's nodes */
    uint32_t *nodes; size_t n, cap;
} lane_state;

static int emit_rank_step(wi_build *b, const tsa_job *job, size_t r, rank_nodes *rn,
                          uint32_t step, lane_state **lanes, size_t *n_lanes, size_t *cap_lanes)
{
    wi_graph *g = &b->g;
    int64_t off = job->ranks[r].clock_offset_ns;
    for (size_t l = 0; l < *n_lanes; l++) {
        (*lanes)[l].last = NONE32;
        (*lanes)[l].n = 0;
        (*lanes)[l].scan = 0;
    }
    for (; rn->next < rn->n && rn->v[rn->next].step == step; rn->next++) {
        rnode *x = &rn->v[rn->next];
        size_t l = 0;
        while (l < *n_lanes && (*lanes)[l].lane != x->lane)
            l++;
        if (l == *n_lanes) {
            if (push((void **)lanes, n_lanes, cap_lanes, sizeof **lanes))
                return -1;
            memset(&(*lanes)[l], 0, sizeof **lanes);
            (*lanes)[l].lane = x->lane;
            (*lanes)[l].last = NONE32;
            (*n_lanes)++;
        }
        lane_state *ls = &(*lanes)[l];
        wi_node nd = {.rec_start = x->s + off, .rec_end = x->e + off, .dur = x->e - x->s,
                      .rank = (int32_t)r, .lane = x->lane, .step = step, .kind = x->kind,
                      .okind = x->okind, .src = x->src, .sig = x->sig,
                      .k_first = (uint32_t)b->n_kerns, .n_k = x->n_k};
        for (uint32_t q = 0; q < x->n_k; q++) {
            if (push((void **)&b->kerns, &b->n_kerns, &b->cap_kerns, sizeof *b->kerns))
                return -1;
            b->kerns[b->n_kerns++] = rn->kern[x->k_first + q];
        }
        uint32_t me = (uint32_t)g->n_nodes;
        if (wi_graph_add_node(g, &nd))
            return -1;
        x->gidx = me;
        int64_t ready = INT64_MIN;
        if (ls->last != NONE32) {
            if (wi_graph_add_dep(g, me, ls->last))
                return -1;
            ready = g->nodes[ls->last].rec_end;
        }
        /* another lane's node that ended just before this one started */
        if (!b->host_mode[r]) {
            uint32_t best = NONE32;
            int64_t best_end = INT64_MIN;
            for (size_t o = 0; o < *n_lanes; o++) {
                lane_state *os = &(*lanes)[o];
                if (o == l)
                    continue;
                while (os->scan + 1 < os->n &&
                       g->nodes[os->nodes[os->scan + 1]].rec_end <= nd.rec_start + WI_LINK_NS)
                    os->scan++;
                if (!os->n)
                    continue;
                uint32_t u = os->nodes[os->scan];
                int64_t ue = g->nodes[u].rec_end;
                if (ue <= nd.rec_start + WI_LINK_NS && ue >= nd.rec_start - WI_LINK_NS &&
                    ue > best_end)
                    best = u, best_end = ue;
            }
            if (best != NONE32 && best_end > ready) {
                if (wi_graph_add_dep(g, me, best))
                    return -1;
                ready = best_end;
            }
        }
        g->nodes[me].gap = ready == INT64_MIN || nd.rec_start <= ready ? 0 : nd.rec_start - ready;
        ls->last = me;
        if (push((void **)&ls->nodes, &ls->n, &ls->cap, sizeof *ls->nodes))
            return -1;
        ls->nodes[ls->n++] = me;
    }
    return 0;
}

int wi_build_graph(const tsa_job *job, wi_build *b)
{
    memset(b, 0, sizeof *b);
    b->n_ranks = job->n_ranks;
    rank_nodes *rns = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *rns);
    b->host_mode = calloc(job->n_ranks ? job->n_ranks : 1, 1);
    lane_state *lanes = NULL;
    size_t n_lanes = 0, cap_lanes = 0;
    int rc = -1;
    if (!rns || !b->host_mode)
        goto out;
    size_t K = SIZE_MAX;
    for (size_t r = 0; r < job->n_ranks; r++) {
        if (rank_steps(&job->ranks[r], &rns[r]))
            goto out;
        if (rns[r].n_steps < K)
            K = rns[r].n_steps;
    }
    if (!job->n_ranks || !K || K == SIZE_MAX) {
        rc = 1;
        goto out;
    }
    for (size_t r = 0; r < job->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        rank_nodes *rn = &rns[r];
        rn->n_steps = K;
        if (comm_nodes(rk, rn))
            goto out;
        size_t n_comm = rn->n;
        size_t nk = 0;
        for (size_t i = 0; i < rk->n_kernels; i++)
            nk += is_compute_kernel(&rk->kernels[i]);
        b->host_mode[r] = nk == 0;
        if (nk ? gpu_compute_nodes(rk, rn, n_comm) : host_compute_nodes(rn, n_comm))
            goto out;
        /* the ops lists stay with the comm nodes while sorting */
        if (rn->n > 1)
            qsort(rn->v, rn->n, sizeof *rn->v, by_step_start);
    }
    b->step_index = malloc(K * sizeof *b->step_index);
    if (!b->step_index)
        goto out;
    for (size_t s = 0, k = 0; s < job->ranks[0].n_steps && k < K; s++)
        if (!job->ranks[0].steps[s].warmup)
            b->step_index[k++] = (uint32_t)s;
    for (uint32_t s = 0; s < K; s++)
        for (size_t r = 0; r < job->n_ranks; r++)
            if (emit_rank_step(b, job, r, &rns[r], s, &lanes, &n_lanes, &cap_lanes))
                goto out;
    if (!b->g.n_nodes) {
        rc = 1;
        goto out;
    }
    if (match(job, rns, b) || wi_graph_finish(&b->g) || wi_graph_order(&b->g))
        goto out;
    rc = 0;
out:
    for (size_t r = 0; rns && r < job->n_ranks; r++) {
        free(rns[r].v);
        free(rns[r].ops);
        free(rns[r].kern);
        free(rns[r].step_lo);
        free(rns[r].step_hi);
    }
    free(rns);
    for (size_t l = 0; l < n_lanes; l++)
        free(lanes[l].nodes);
    free(lanes);
    return rc;
}

void wi_build_free(wi_build *b)
{
    wi_graph_free(&b->g);
    free(b->host_mode);
    free(b->kerns);
    free(b->pairs);
    free(b->step_index);
    memset(b, 0, sizeof *b);
}
