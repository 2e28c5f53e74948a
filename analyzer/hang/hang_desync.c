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
#include "reader/dump_reader.h"
#include "tsc_format.h"

typedef struct lane {
    const tsa_nccl_op **v;  /* this rank's calls on the comm, by seq */
    size_t n, at;
    uint64_t p2p;           /* send/recv seen so far */
} lane;

static int cmp_seq(const void *a, const void *b)
{
    const tsa_nccl_op *x = *(const tsa_nccl_op *const *)a, *y = *(const tsa_nccl_op *const *)b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int is_p2p(uint8_t op) { return tsc_nccl_op_kind(op) == TSC_NCCL_KIND_P2P; }

static int same_signature(const tsa_nccl_op *a, const tsa_nccl_op *b)
{
    return a->op == b->op && a->bytes == b->bytes && a->dtype == b->dtype && a->peer == b->peer;
}

static int fill_lane(const tsa_rank *r, uint64_t comm, lane *l)
{
    memset(l, 0, sizeof *l);
    size_t n = 0;
    for (size_t k = 0; k < r->n_nccl; k++)
        n += r->nccl[k].comm_id == comm && tsa_hang_sequenced(r->nccl[k].op);
    for (size_t k = 0; k < r->n_pending; k++)
        n += r->pending[k].comm_id == comm && tsa_hang_sequenced(r->pending[k].op);
    if (!n)
        return 0;
    l->v = malloc(n * sizeof *l->v);
    if (!l->v)
        return -1;
    for (size_t k = 0; k < r->n_nccl; k++)
        if (r->nccl[k].comm_id == comm && tsa_hang_sequenced(r->nccl[k].op))
            l->v[l->n++] = &r->nccl[k];
    for (size_t k = 0; k < r->n_pending; k++)
        if (r->pending[k].comm_id == comm && tsa_hang_sequenced(r->pending[k].op))
            l->v[l->n++] = &r->pending[k];
    qsort(l->v, l->n, sizeof *l->v, cmp_seq);
    return 0;
}

static void signature_text(const tsa_nccl_op *o, char *buf, size_t cap)
{
    int rooted = tsc_nccl_op_kind(o->op) == TSC_NCCL_KIND_ROOTED;
    const char *dt = tsr_nccl_dtype_name(o->dtype);
    size_t n = (size_t)snprintf(buf, cap, "%s %s %llu B", tsa_nccl_op_name(o->op),
                                dt ? dt : "?", (unsigned long long)o->bytes);
    if (rooted && n < cap)
        snprintf(buf + n, cap - n, " root %d", o->peer);
}

/* The ranks at this seq, one line per signature. */
static int report(tsa_hang_result *h, const tsa_job *job, const tsa_nccl_op **at,
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

static int desync_on(const tsa_job *job, tsa_hang_result *h, uint64_t comm, lane *lanes,
                     const tsa_nccl_op **at)
{
    size_t n = job->n_ranks;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = fill_lane(&job->ranks[i], comm, &lanes[i]);
    for (uint64_t seq = 0; !rc;) {
        /* The next seq any rank has, and every rank's call there. */
        uint64_t next = UINT64_MAX;
        for (size_t i = 0; i < n; i++)
            if (lanes[i].at < lanes[i].n && lanes[i].v[lanes[i].at]->seq < next)
                next = lanes[i].v[lanes[i].at]->seq;
        if (next == UINT64_MAX)
            break;
        seq = next;
        int p2p_mismatch = 0, differ = 0, any_p2p = 0;
        uint64_t p2p0 = UINT64_MAX;
        const tsa_nccl_op *ref = NULL;
        for (size_t i = 0; i < n; i++) {
            at[i] = NULL;
            if (lanes[i].at < lanes[i].n && lanes[i].v[lanes[i].at]->seq == seq)
                at[i] = lanes[i].v[lanes[i].at++];
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
    for (size_t i = 0; i < n; i++) {
        free(lanes[i].v);
        memset(&lanes[i], 0, sizeof lanes[i]);
    }
    return rc;
}

int tsa_hang_find_desyncs(const tsa_job *job, tsa_hang_result *h)
{
    size_t n = job->n_ranks;
    if (n < 2)
        return 0;
    lane *lanes = calloc(n, sizeof *lanes);
    const tsa_nccl_op **at = calloc(n, sizeof *at);
    uint64_t *comms = NULL;
    size_t n_comms = 0, cap = 0;
    int rc = lanes && at ? 0 : -1;
    /* Every communicator, once (in the order first met). */
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t k = 0; k < job->ranks[i].n_nccl && !rc; k++) {
            uint64_t c = job->ranks[i].nccl[k].comm_id;
            if (!c || !tsa_hang_sequenced(job->ranks[i].nccl[k].op))
                continue;
            size_t q = 0;
            while (q < n_comms && comms[q] != c)
                q++;
            if (q < n_comms)
                continue;
            if (tsa_grow((void **)&comms, n_comms, &cap, sizeof *comms)) {
                rc = -1;
                break;
            }
            comms[n_comms++] = c;
        }
    for (size_t q = 0; q < n_comms && !rc; q++)
        rc = desync_on(job, h, comms[q], lanes, at);
    free(comms);
    free(lanes);
    free(at);
    return rc;
}
