/* DIST.HANG: a collective some ranks entered and never left.
 *
 * Per rank, the calls "in flight" when its dump ended: each call entered
 * and never left (tsa_rank.pending) and, for a GroupEnd that never
 * returned, the collectives of its group.  Per communicator with calls in
 * flight, the hang point is the lowest sequence number S in flight; each
 * rank that called anything on the communicator is then stuck (in flight at
 * S), missing (never entered S and still alive or stopped from outside),
 * exited (never entered S and its process ended by itself) or past it.  A
 * job stopped mid-step also leaves calls in flight, for a moment: it is a
 * hang only when a stuck rank was inside for at least TSA_HANG_MIN_NS and
 * twice its mean step, or the TSCOPE_HANG_S watchdog saw it live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "hang.h"
#include "load/rank_view.h"
#include "model/self_cost.h"
#include "tsc_format.h"

#define TSA_HANG_MIN_NS 1000000000ll

typedef struct flight {
    uint64_t comm, seq;
    tsa_nccl_op op;             /* a copy: a lean rank's calls are decoded for a moment */
    int64_t start_ns;
    int watchdog;
} flight;

typedef struct flights {
    flight *v;
    size_t n, cap;
} flights;

static int push(flights *f, const tsa_nccl_op *op, int64_t start, int watchdog)
{
    if (tsa_grow((void **)&f->v, f->n, &f->cap, sizeof *f->v))
        return -1;
    f->v[f->n++] = (flight){op->comm_id, op->seq, *op, start, watchdog};
    return 0;
}

/* The grouped calls a GroupEnd that never returned was launching: calls of
 * its thread inside a group since the thread's last completed GroupEnd. */
static int group_members(const tsa_rank *lean, const tsa_nccl_op *ge, flights *out)
{
    int wd = (ge->flags & TSA_NCCL_F_WATCHDOG) != 0;
    tsa_rank_view v;
    const tsa_rank *r = tsa_view_open(lean, TSA_VIEW_CALLS, &v);
    int rc = r ? 0 : -1;
    for (size_t k = r ? r->n_nccl : 0; k-- > 0 && !rc;) {
        const tsa_nccl_op *o = &r->nccl[k];
        if (o->tid != ge->tid || o->start_ns > ge->start_ns)
            continue;
        if (o->op == TSC_NCCL_GROUP_END)
            break;
        if ((o->flags & TSC_NCCL_F_IN_GROUP) && tsa_hang_sequenced(o->op) && o->comm_id &&
            push(out, o, ge->start_ns, wd))
            rc = -1;
    }
    tsa_view_close(&v);
    return rc;
}

static int rank_flights(const tsa_rank *r, flights *out)
{
    out->n = 0;
    for (size_t p = 0; p < r->n_pending; p++) {
        const tsa_nccl_op *o = &r->pending[p];
        if (o->op == TSC_NCCL_GROUP_END) {
            if (group_members(r, o, out))
                return -1;
        } else if (tsa_hang_sequenced(o->op) && o->comm_id &&
                   push(out, o, o->start_ns, (o->flags & TSA_NCCL_F_WATCHDOG) != 0)) {
            return -1;
        }
    }
    return 0;
}

/* Into *mean; -1 on OOM. */
static int mean_step_ns(const tsa_rank *lean, int64_t *mean)
{
    tsa_rank_view v;
    const tsa_rank *r = tsa_view_open(lean, TSA_VIEW_STEPS, &v);
    int64_t sum = 0;
    for (size_t s = 0; r && s < r->n_steps; s++)
        sum += r->steps[s].end_ns - r->steps[s].start_ns;
    *mean = r && r->n_steps ? sum / (int64_t)r->n_steps : 0;
    tsa_view_close(&v);
    return r ? 0 : -1;
}

/* What one rank did on communicator C around its hang point S. */
typedef struct member {
    int32_t rank;
    int is_member;
    int has_last_done;
    tsa_nccl_op last_done;         /* highest completed sequenced call on C */
    const flight *at_s;            /* in flight at S */
    int past;                      /* completed S or in flight beyond it */
    int64_t in_flight_ns;
} member;

/* -1 on OOM. */
static int look_at(const tsa_job *job, size_t i, const flights *fl, uint64_t comm,
                   uint64_t S, member *m)
{
    const tsa_rank *r = &job->ranks[i];
    memset(m, 0, sizeof *m);
    m->rank = tsa_hang_rank_id(job, i);
    tsa_call_iter it;
    if (tsa_call_iter_open(&it, r))
        return -1;
    for (const tsa_nccl_op *o; (o = tsa_call_iter_next(&it));) {
        if (o->comm_id != comm || !tsa_hang_sequenced(o->op))
            continue;
        m->is_member = 1;
        if (!m->has_last_done || o->seq > m->last_done.seq) {
            m->last_done = *o;
            m->has_last_done = 1;
        }
    }
    tsa_call_iter_close(&it);
    if (m->has_last_done && m->last_done.seq >= S)
        m->past = 1;
    for (size_t k = 0; k < fl->n; k++) {
        if (fl->v[k].comm != comm)
            continue;
        m->is_member = 1;
        if (fl->v[k].seq == S && !m->at_s)
            m->at_s = &fl->v[k];
        else if (fl->v[k].seq > S)
            m->past = 1;
    }
    if (m->at_s) {
        int64_t end = r->end.last_ns > r->last_ns ? r->end.last_ns : r->last_ns;
        m->in_flight_ns = end > m->at_s->start_ns ? end - m->at_s->start_ns : 0;
    }
    return 0;
}

static void call_text(const tsa_nccl_op *o, char *buf, size_t cap)
{
    if (o)
        snprintf(buf, cap, "%s seq %llu", tsa_nccl_op_name(o->op), (unsigned long long)o->seq);
    else
        snprintf(buf, cap, "none on this communicator");
}

/* Never entered S: missing (exited = 0) or exited (1)? */
static int outside(const member *m, const tsa_rank *r, int exited)
{
    return m->is_member && !m->at_s && !m->past && tsa_end_by_itself(&r->end) == exited;
}

/* Missing and exited ranks, one line per (what they last did). */
static int group_lines(tsa_hang_item *it, const member *ms, size_t n, const tsa_job *job,
                       int exited)
{
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (done[i] || !outside(&ms[i], &job->ranks[i], exited))
            continue;
        char last[96], how[64];
        call_text(ms[i].has_last_done ? &ms[i].last_done : NULL, last, sizeof last);
        tsa_end_describe(&job->ranks[i].end, how, sizeof how);
        tsa_rank_list g = {0};
        for (size_t j = i; j < n && !rc; j++) {
            if (done[j] || !outside(&ms[j], &job->ranks[j], exited))
                continue;
            char l2[96], h2[64];
            call_text(ms[j].has_last_done ? &ms[j].last_done : NULL, l2, sizeof l2);
            tsa_end_describe(&job->ranks[j].end, h2, sizeof h2);
            if (strcmp(l2, last) || (exited && strcmp(h2, how)))
                continue;
            done[j] = 1;
            rc = tsa_rank_list_add(&g, ms[j].rank) ||
                 tsa_rank_list_add(exited ? &it->exited : &it->missing, ms[j].rank);
        }
        if (!rc && exited)
            rc = tsa_hang_add_group(it, &g, "exited (%s) after their last call: %s", how, last);
        else if (!rc)
            rc = tsa_hang_add_group(it, &g, "missing: never entered it; last call: %s", last);
        tsa_rank_list_free(&g);
    }
    free(done);
    return rc;
}

static int no_data_line(tsa_hang_item *it, const tsa_hang_result *h, uint32_t comm_size,
                        size_t members)
{
    if (comm_size <= members)
        return 0;
    /* A world-sized communicator: its missing members are the world's
     * ranks without a dump.  Otherwise only their number is known. */
    if (h->world_size > 0 && comm_size == (uint32_t)h->world_size && h->no_data.n) {
        for (size_t i = 0; i < h->no_data.n; i++)
            if (tsa_rank_list_add(&it->no_data, h->no_data.v[i]))
                return -1;
        return tsa_hang_add_group(it, &h->no_data, "no data: no dump (node lost?)");
    }
    tsa_rank_list none = {0};
    return tsa_hang_add_group(it, &none, "no data: %zu member(s) of the communicator left no dump",
                              (size_t)comm_size - members);
}

/* The hang at the lowest in-flight seq of communicator comm, if it is one. */
static int hang_on(const tsa_job *job, tsa_hang_result *h, flights *per_rank, uint64_t comm)
{
    uint64_t S = UINT64_MAX;
    for (size_t i = 0; i < job->n_ranks; i++)
        for (size_t k = 0; k < per_rank[i].n; k++)
            if (per_rank[i].v[k].comm == comm && per_rank[i].v[k].seq < S)
                S = per_rank[i].v[k].seq;
    member *ms = calloc(job->n_ranks, sizeof *ms);
    if (!ms)
        return -1;
    const tsa_nccl_op *call = NULL;
    int64_t longest = 0, threshold = TSA_HANG_MIN_NS;
    int watchdog = 0;
    size_t members = 0;
    uint32_t comm_size = 0;
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++) {
        if (look_at(job, i, &per_rank[i], comm, S, &ms[i])) {
            rc = -1;
            break;
        }
        members += ms[i].is_member;
        if (!ms[i].at_s)
            continue;
        if (!call)
            call = &ms[i].at_s->op;
        comm_size = ms[i].at_s->op.comm_size;
        watchdog |= ms[i].at_s->watchdog;
        if (ms[i].in_flight_ns > longest)
            longest = ms[i].in_flight_ns;
        int64_t mean;
        rc = mean_step_ns(&job->ranks[i], &mean);
        if (2 * mean > threshold)
            threshold = 2 * mean;
    }
    if (rc || !call || (longest < threshold && !watchdog))
        goto out; /* a job stopped mid-step, not a hang */
    tsa_hang_item *it = tsa_hang_new_item(h, TSA_HANG_HANG);
    if (!it) {
        rc = -1;
        goto out;
    }
    it->op = call->op;
    it->comm_id = comm;
    it->seq = S;
    it->in_flight_ns = longest;
    it->watchdog = watchdog;
    for (size_t i = 0; i < job->n_ranks && !rc; i++)
        if (ms[i].at_s)
            rc = tsa_rank_list_add(&it->stuck, ms[i].rank);
    if (!rc)
        rc = tsa_hang_add_group(it, &it->stuck, "stuck: entered it, never left (up to %.1f s)%s",
                                (double)longest / 1e9,
                                watchdog ? "; reported live by the TSCOPE_HANG_S watchdog" : "");
    if (!rc)
        rc = group_lines(it, ms, job->n_ranks, job, 0);
    if (!rc)
        rc = group_lines(it, ms, job->n_ranks, job, 1);
    if (!rc)
        rc = no_data_line(it, h, comm_size, members);
    tsa_rank_list_sort(&it->missing);
    tsa_rank_list_sort(&it->exited);
    char st[256], mi[256];
    tsa_rank_list_format(&it->stuck, st, sizeof st);
    tsa_rank_list_format(&it->missing, mi, sizeof mi);
    if (!rc && asprintf(&it->title,
                        "%s seq %llu on comm %016llx never completed: %s stuck inside for "
                        "%.1f s; %s%s%s",
                        tsa_nccl_op_name(call->op), (unsigned long long)S,
                        (unsigned long long)comm, st, (double)longest / 1e9,
                        it->missing.n ? mi : "no rank missing",
                        it->missing.n ? " never entered it" : "",
                        it->exited.n ? "; some had already exited" : "") < 0) {
        it->title = NULL;
        rc = -1;
    }
out:
    free(ms);
    return rc;
}

/* Stuck on GPU: host calls that returned but whose kernels never
 * completed (CUPTI data only); added to the communicator's hang or as a
 * hang of its own. */
static int gpu_hang_on(const tsa_job *job, const tsa_rank *r, tsa_hang_result *h, size_t i,
                       uint64_t comm, const tsa_nccl_op **calls)
{
    size_t n = 0;
    for (size_t j = 0; j < r->n_nccl; j++)
        if (r->nccl[j].comm_id == comm && tsa_hang_sequenced(r->nccl[j].op) &&
            tsa_self_cost_kernels_traced(&r->self_cost, r->nccl[j].start_ns))
            calls[n++] = &r->nccl[j]; /* after a step to light: no kernel to wait for */
    long at = tsa_gpu_first_unfinished(calls, n);
    if (at < 0)
        return 0;
    tsa_hang_item *it = NULL;
    for (size_t x = 0; x < h->n && !it; x++)
        if (h->items[x].kind == TSA_HANG_HANG && h->items[x].comm_id == comm)
            it = &h->items[x];
    if (!it) {
        if (!(it = tsa_hang_new_item(h, TSA_HANG_HANG)))
            return -1;
        it->op = calls[at]->op;
        it->comm_id = comm;
        it->seq = calls[at]->seq;
        it->on_gpu = 1;
        if (asprintf(&it->title, "%s seq %llu on comm %016llx: stuck on GPU (the host call "
                     "returned, its kernel never completed)", tsa_nccl_op_name(it->op),
                     (unsigned long long)it->seq, (unsigned long long)comm) < 0) {
            it->title = NULL;
            return -1;
        }
    }
    tsa_rank_list one = {0};
    int rc = tsa_rank_list_add(&one, tsa_hang_rank_id(job, i)) ||
             tsa_rank_list_add(&it->stuck, tsa_hang_rank_id(job, i)) ||
             tsa_hang_add_group(it, &one, "stuck on GPU: %s seq %llu returned on the host, its "
                                "NCCL kernel never completed", tsa_nccl_op_name(calls[at]->op),
                                (unsigned long long)calls[at]->seq);
    tsa_rank_list_free(&one);
    tsa_rank_list_sort(&it->stuck);
    return rc ? -1 : 0;
}

/* Stuck on GPU: host calls that returned but whose kernels never
 * completed (CUPTI data only); added to the communicator's hang or as a
 * hang of its own.  Each communicator of each rank with kernel records. */
static int gpu_hangs(const tsa_job *job, tsa_hang_result *h)
{
    int rc = 0;
    uint64_t *comms = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++) {
        /* every call linked: none can be stuck on the GPU */
        if (!tsa_rank_kernel_count(&job->ranks[i]) || !job->ranks[i].n_nccl ||
            tsa_rank_calls_all_linked(&job->ranks[i]))
            continue;
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&job->ranks[i], TSA_VIEW_CALLS, &v);
        if (!r) {
            tsa_view_close(&v);
            rc = -1;
            break;
        }
        size_t n_comms = 0;
        for (size_t k = 0; k < r->n_nccl && !rc; k++) {
            uint64_t c = r->nccl[k].comm_id;
            if (!c || !tsa_hang_sequenced(r->nccl[k].op))
                continue;
            size_t q = 0;
            while (q < n_comms && comms[q] != c)
                q++;
            if (q == n_comms) {
                rc = tsa_grow((void **)&comms, n_comms, &cap, sizeof *comms);
                if (!rc)
                    comms[n_comms++] = c;
            }
        }
        const tsa_nccl_op **calls = rc ? NULL : malloc(r->n_nccl * sizeof *calls);
        if (!calls)
            rc = -1;
        for (size_t q = 0; q < n_comms && !rc; q++)
            rc = gpu_hang_on(job, r, h, i, comms[q], calls);
        free(calls);
        tsa_view_close(&v);
    }
    free(comms);
    return rc;
}

int tsa_hang_find_hangs(const tsa_job *job, tsa_hang_result *h)
{
    flights *per_rank = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *per_rank);
    if (!per_rank)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++)
        rc = rank_flights(&job->ranks[i], &per_rank[i]);
    /* Each communicator with a call in flight, once. */
    for (size_t i = 0; i < job->n_ranks && !rc; i++)
        for (size_t k = 0; k < per_rank[i].n && !rc; k++) {
            uint64_t comm = per_rank[i].v[k].comm;
            int seen = 0;
            for (size_t j = 0; j <= i && !seen; j++)
                for (size_t q = 0; q < (j == i ? k : per_rank[j].n) && !seen; q++)
                    seen = per_rank[j].v[q].comm == comm;
            if (!seen)
                rc = hang_on(job, h, per_rank, comm);
        }
    if (!rc)
        rc = gpu_hangs(job, h);
    for (size_t i = 0; i < job->n_ranks; i++)
        free(per_rank[i].v);
    free(per_rank);
    return rc;
}
