/* DIST.HANG at communicator creation: ranks entered ncclCommInitRank* for
 * a communicator and never left.  Creation returns on no rank until every
 * member has joined, so the ranks to look at are the members that never
 * entered it (dead, hung earlier, or waiting on another communicator).
 *
 * The communicator's members are known only when it spans the world
 * (comm_size = world size): then every rank with a dump that neither
 * entered nor completed it is missing (or exited, when its process ended
 * by itself), and the world's ranks without a dump are "no data".  For a
 * smaller communicator only the number that never came is known.
 *
 * A job stopped while it was still creating its communicators also leaves
 * ranks inside: it is a hang when a member never came while the others
 * waited TSA_HANG_MIN_NS, when ranks waited TSA_INIT_HANG_NS (creation at
 * scale takes seconds, not minutes), or when the TSCOPE_HANG_S watchdog
 * saw it live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "hang.h"
#include "load/rank_view.h"
#include "tsc_format.h"

#define TSA_HANG_MIN_NS 1000000000ll
#define TSA_INIT_HANG_NS 60000000000ll

static int is_rank_init(uint8_t op)
{
    return tsc_nccl_op_kind(op) == TSC_NCCL_KIND_INIT;
}

/* The rank's init call on comm still in flight, NULL none. */
static const tsa_nccl_op *stuck_in(const tsa_rank *r, uint64_t comm)
{
    for (size_t k = 0; k < r->n_pending; k++)
        if (r->pending[k].comm_id == comm && is_rank_init(r->pending[k].op))
            return &r->pending[k];
    return NULL;
}

/* 1 when r's init call on comm returned, 0 when not, -1 on OOM. */
static int joined(const tsa_rank *r, uint64_t comm)
{
    tsa_call_iter it;
    if (tsa_call_iter_open(&it, r))
        return -1;
    int yes = 0;
    for (const tsa_nccl_op *o; !yes && (o = tsa_call_iter_next(&it));)
        yes = o->comm_id == comm && is_rank_init(o->op);
    tsa_call_iter_close(&it);
    return yes;
}

/* What the hang's title and lines are made of. */
typedef struct init_wait {
    const tsa_nccl_op *call;   /* one stuck rank's call */
    size_t stuck, joined;
    int64_t longest;
    int watchdog;
} init_wait;

static int measure(const tsa_job *job, uint64_t comm, init_wait *w)
{
    memset(w, 0, sizeof *w);
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        const tsa_nccl_op *p = stuck_in(r, comm);
        if (!p) {
            int j = joined(r, comm);
            if (j < 0)
                return -1;
            w->joined += (size_t)j;
            continue;
        }
        w->stuck++;
        if (!w->call)
            w->call = p;
        int64_t end = r->end.last_ns > r->last_ns ? r->end.last_ns : r->last_ns;
        if (end - p->start_ns > w->longest)
            w->longest = end - p->start_ns;
        w->watchdog |= (p->flags & TSA_NCCL_F_WATCHDOG) != 0;
    }
    return 0;
}

/* The ranks inside it, then (world-sized) those with a dump that never
 * came: missing, or exited when their process ended by itself. */
static int sort_ranks(const tsa_job *job, uint64_t comm, int world, tsa_hang_item *it)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        int stuck = stuck_in(r, comm) != NULL, in = stuck ? 0 : joined(r, comm);
        if (in < 0)
            return -1;
        tsa_rank_list *l = stuck                        ? &it->stuck
                           : in || !world               ? NULL
                           : tsa_end_by_itself(&r->end) ? &it->exited
                                                        : &it->missing;
        if (l && tsa_rank_list_add(l, tsa_hang_rank_id(job, i)))
            return -1;
    }
    tsa_rank_list_sort(&it->stuck);
    tsa_rank_list_sort(&it->missing);
    tsa_rank_list_sort(&it->exited);
    return 0;
}

static int lines(const tsa_hang_result *h, tsa_hang_item *it, const init_wait *w,
                 uint32_t size, int world)
{
    size_t came = w->stuck + w->joined;
    int rc = tsa_hang_add_group(it, &it->stuck, "stuck: entered it, never left (up to %.1f s)%s",
                                (double)w->longest / 1e9,
                                w->watchdog ? "; reported live by the TSCOPE_HANG_S watchdog"
                                            : "");
    if (!rc && it->missing.n)
        rc = tsa_hang_add_group(it, &it->missing, "missing: never entered it");
    if (!rc && it->exited.n)
        rc = tsa_hang_add_group(it, &it->exited, "exited before entering it");
    if (!rc && world && h->no_data.n) {
        for (size_t i = 0; i < h->no_data.n && !rc; i++)
            rc = tsa_rank_list_add(&it->no_data, h->no_data.v[i]);
        if (!rc)
            rc = tsa_hang_add_group(it, &h->no_data, "no data: no dump (node lost?)");
    }
    if (!rc && !world && size > came) {
        tsa_rank_list none = {0};
        rc = tsa_hang_add_group(it, &none, "never entered it: %zu of its %u members (which "
                                "ones: the dumps do not say)", (size_t)size - came, size);
    }
    return rc;
}

static int init_hang_on(const tsa_job *job, tsa_hang_result *h, uint64_t comm)
{
    init_wait w;
    if (measure(job, comm, &w))
        return -1;
    uint32_t size = w.call->comm_size;
    int world = h->world_size > 0 && size == (uint32_t)h->world_size;
    size_t came = w.stuck + w.joined;
    int someone_absent = size > came;
    if (!(w.watchdog || w.longest >= TSA_INIT_HANG_NS ||
          (someone_absent && w.longest >= TSA_HANG_MIN_NS)))
        return 0; /* a job stopped while creating its communicators */
    tsa_hang_item *it = tsa_hang_new_item(h, TSA_HANG_HANG);
    if (!it)
        return -1;
    uint8_t op = w.call->op;
    it->op = op;
    it->comm_id = comm;
    it->seq = 0;
    it->in_flight_ns = w.longest;
    it->watchdog = w.watchdog;
    if (sort_ranks(job, comm, world, it) || lines(h, it, &w, size, world))
        return -1;
    /* Who never came: ranks with a dump first, else the world's ranks
     * without one (a rank that never called NCCL writes no dump). */
    char st[256], nd[256], who[300];
    tsa_rank_list_format(&it->stuck, st, sizeof st);
    if (it->missing.n)
        tsa_rank_list_format(&it->missing, who, sizeof who);
    else if (it->no_data.n)
        snprintf(who, sizeof who, "%s (no dump)",
                 tsa_rank_list_format(&it->no_data, nd, sizeof nd));
    else
        snprintf(who, sizeof who, "%s", someone_absent ? "some members" : "no rank");
    if (asprintf(&it->title,
                 "communicator %016llx (%u ranks) was never created: %s stuck in %s for %.1f "
                 "s; %s%s%s",
                 (unsigned long long)comm, size, st, tsa_nccl_op_name(op),
                 (double)w.longest / 1e9, who,
                 someone_absent ? " never entered it" : " missing",
                 it->exited.n ? "; some had already exited" : "") < 0) {
        it->title = NULL;
        return -1;
    }
    return 0;
}

int tsa_hang_find_init_stalls(const tsa_job *job, tsa_hang_result *h)
{
    uint64_t *seen = NULL;
    size_t n_seen = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++) {
        const tsa_rank *r = &job->ranks[i];
        for (size_t k = 0; k < r->n_pending && !rc; k++) {
            const tsa_nccl_op *p = &r->pending[k];
            if (!is_rank_init(p->op) || !p->comm_id)
                continue;
            size_t q = 0;
            while (q < n_seen && seen[q] != p->comm_id)
                q++;
            if (q < n_seen)
                continue;
            if (tsa_grow((void **)&seen, n_seen, &cap, sizeof *seen)) {
                rc = -1;
                break;
            }
            seen[n_seen++] = p->comm_id;
            rc = init_hang_on(job, h, p->comm_id);
        }
    }
    free(seen);
    return rc;
}
