/* A hang pinned to its link: the proxy operations of the hung
 * collective's communicator that the writer found stalled and that never
 * ended (TSC_EV_NP_PROXY_STALL, NCCL profiler plugin in full capture),
 * read against each other.  A step is stopped on the wire when its sender
 * posted it (SendWait) and its receiver still waits for its data
 * (RecvWait): that link, direction and channel, is named.  Every other
 * rank of a ring waits for data its sender has not posted yet (it has
 * none to forward): behind the stopped link, not on it.  A sender waiting
 * for its receiver's credit (SendPeerWait) names a receiver that stopped
 * taking data. */
#include <stdlib.h>
#include <string.h>

#include "hang.h"
#include "load/comm_ranks.h"
#include "load/rank_nprof.h"
#include "tsc_format.h"
#include "util/vec.h"

/* NCCL's step states (nccl_profiler.h). */
enum { ST_SEND_GPU_WAIT = 8, ST_SEND_WAIT = 9, ST_RECV_WAIT = 10, ST_SEND_PEER_WAIT = 20 };

/* One stalled op that never ended, in global ranks. */
typedef struct open_op {
    int32_t rank, peer;
    uint8_t channel, send, state;
    uint32_t steps;
} open_op;

typedef struct open_ops {
    open_op *v;
    size_t n, cap;
} open_ops;

static int push(open_ops *o, open_op x)
{
    if (tsa_grow((void **)&o->v, o->n, &o->cap, sizeof *o->v))
        return -1;
    o->v[o->n++] = x;
    return 0;
}

/* Rank i's open ops on comm: those of its latest collective there. */
static int rank_ops(const tsa_job *job, size_t i, uint64_t comm, const tsa_comm_ranks *m,
                    open_ops *out)
{
    const struct tsa_nprof *np = job->ranks[i].nprof;
    uint32_t latest = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; np && k < np->n_stalls; k++) {
            const tsa_np_stall *s = &np->stalls[k];
            const tsa_np_comm *c = tsa_nprof_comm(np, s->comm);
            if (!c || c->comm_id != comm || tsa_np_stall_ended(np, s))
                continue;
            if (!pass && s->op_id > latest)
                latest = s->op_id;
            else if (pass && s->op_id == latest &&
                     push(out, (open_op){.rank = tsa_hang_rank_id(job, i),
                                         .peer = tsa_comm_rank_global(m, comm, s->peer),
                                         .channel = s->channel, .send = s->send,
                                         .state = s->state, .steps = s->steps}))
                return -1;
        }
    return 0;
}

static const open_op *find(const open_ops *o, int32_t rank, int32_t peer, uint8_t ch, int send)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->v[i].rank == rank && o->v[i].peer == peer && o->v[i].channel == ch &&
            o->v[i].send == send)
            return &o->v[i];
    return NULL;
}

/* Appends the link to the title (the finding's, too). */
static int title_link(tsa_hang_item *it, const char *what)
{
    size_t a = strlen(it->title), b = strlen(what);
    char *t = realloc(it->title, a + b + 1);
    if (!t)
        return -1;
    memcpy(t + a, what, b + 1);
    it->title = t;
    return 0;
}

static int add_link(tsa_hang_item *it, const open_op *snd, const open_op *rcv, int32_t src,
                    int32_t dst, uint8_t ch)
{
    tsa_hang_link *p = realloc(it->links, (it->n_links + 1) * sizeof *p);
    if (!p)
        return -1;
    it->links = p;
    p[it->n_links++] = (tsa_hang_link){.src = src, .dst = dst, .channel = ch,
                                       .step = snd ? (int64_t)snd->steps : -1,
                                       .sender_posted = snd != NULL, .receiver_waits = rcv != NULL};
    tsa_rank_list one = {0};
    int rc = tsa_rank_list_add(&one, snd ? src : dst);
    if (!rc && snd)
        rc = tsa_hang_add_group(it, &one,
                                "proxy: its send to rank %d on channel %u posted step %u and "
                                "never completed%s: the link rank %d -> rank %d, channel %u, "
                                "stopped",
                                dst, ch, snd->steps,
                                rcv ? "; the receiver waits for that data" : "", src, dst, ch);
    else if (!rc)
        rc = tsa_hang_add_group(it, &one,
                                "proxy: waits for data from rank %d on channel %u (step %u) "
                                "that rank %d's records do not show posted: the link rank %d "
                                "-> rank %d, channel %u, or rank %d, stopped",
                                src, ch, rcv->steps, src, src, dst, ch, src);
    tsa_rank_list_free(&one);
    return rc;
}

/* The ranks waiting behind the stopped links: receives whose sender has
 * not posted the step (nothing to forward yet). */
static int behind_line(tsa_hang_item *it, const open_ops *o)
{
    tsa_rank_list waiting = {0};
    int rc = 0;
    for (size_t i = 0; i < o->n && !rc; i++) {
        const open_op *x = &o->v[i];
        if (x->send || x->state != ST_RECV_WAIT)
            continue;
        int on_link = 0;
        for (size_t l = 0; l < it->n_links; l++)
            on_link |= it->links[l].dst == x->rank && it->links[l].src == x->peer &&
                       it->links[l].channel == x->channel;
        if (!on_link)
            rc = tsa_rank_list_add(&waiting, x->rank);
    }
    tsa_rank_list_sort(&waiting);
    if (!rc && waiting.n)
        rc = tsa_hang_add_group(it, &waiting,
                                "proxy: wait for data their sender has not posted (it has "
                                "nothing to forward): behind the stopped link");
    tsa_rank_list_free(&waiting);
    return rc;
}

static int pin(const tsa_job *job, const tsa_comm_ranks *m, tsa_hang_item *it)
{
    open_ops o = {0};
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++)
        rc = rank_ops(job, i, it->comm_id, m, &o);
    /* Posted and never delivered: the sender on the wire, the receiver
     * (when it recorded its side) waiting for the data. */
    for (size_t i = 0; i < o.n && !rc; i++) {
        const open_op *x = &o.v[i];
        if (x->send && x->state == ST_SEND_WAIT)
            rc = add_link(it, x, find(&o, x->peer, x->rank, x->channel, 0), x->rank, x->peer,
                          x->channel);
    }
    /* A receiver waiting for data whose sender left no record of the op. */
    for (size_t i = 0; i < o.n && !rc; i++) {
        const open_op *x = &o.v[i];
        if (!x->send && x->state == ST_RECV_WAIT && !find(&o, x->peer, x->rank, x->channel, 1))
            rc = add_link(it, NULL, x, x->peer, x->rank, x->channel);
    }
    for (size_t i = 0; i < o.n && !rc; i++) {
        const open_op *x = &o.v[i];
        tsa_rank_list one = {0};
        if (x->send && x->state == ST_SEND_PEER_WAIT)
            rc = tsa_rank_list_add(&one, x->rank) ||
                 tsa_hang_add_group(it, &one,
                                    "proxy: its send to rank %d on channel %u waits for the "
                                    "receiver's credit (step %u): rank %d stopped taking data",
                                    x->peer, x->channel, x->steps, x->peer);
        tsa_rank_list_free(&one);
    }
    if (!rc)
        rc = behind_line(it, &o);
    for (size_t l = 0; l < it->n_links && !rc; l++) {
        char buf[160];
        snprintf(buf, sizeof buf, "%s link rank %d -> rank %d, channel %u",
                 l ? "," : "; proxy steps stopped on", it->links[l].src, it->links[l].dst,
                 it->links[l].channel);
        rc = title_link(it, buf);
    }
    free(o.v);
    return rc;
}

int tsa_hang_pin_links(const tsa_job *job, tsa_hang_result *h)
{
    int any = 0;
    for (size_t i = 0; i < job->n_ranks; i++)
        any |= job->ranks[i].nprof && job->ranks[i].nprof->n_stalls;
    if (!any)
        return 0;
    tsa_comm_ranks m;
    if (tsa_comm_ranks_build(job, &m))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < h->n && !rc; i++)
        if (h->items[i].kind == TSA_HANG_HANG && h->items[i].title)
            rc = pin(job, &m, &h->items[i]);
    tsa_comm_ranks_free(&m);
    return rc;
}
