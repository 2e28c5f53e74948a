/* Matching: the same collective call on every rank is found by
 * (comm_id, seq), seq being each rank's own per-communicator call counter.
 * Seqs of one communicator are dense, so a counting sort by slot
 * (comm base + seq) groups a million calls in linear time without a
 * comparator.  Each member also gets its "gap": the work the rank did since
 * its previous collective ended, the quantity the straggler analysis
 * compares across ranks.
 *
 * Members are kept compact (members.c), each instance's growing in a chain
 * of blocks as the ranks are placed; ranks are read one at a time (a lean
 * rank's calls decoded, rank_view.h). */
#include <stdlib.h>
#include <string.h>

#include "load/rank_view.h"
#include "model/self_cost.h"
#include "passes/group_share.h"
#include "xr_internal.h"
#include "tsc_format.h"

/* ---- which calls take part ---- */

/* Calls counted in a communicator's seq: collectives and point-to-point. */
static int counts_in_seq(const tsa_nccl_op *o)
{
    return o->comm_id != 0 && tsc_nccl_op_is_sequenced(o->op);
}

/* The GPU interval when the call's kernel was linked: on the GPU the call
 * really waits for its peers; the host call may return at once. */
static void call_times(const tsa_nccl_op *o, int64_t *t0, int64_t *t1)
{
    if ((o->gpu_start_ns || o->gpu_end_ns) && o->gpu_end_ns >= o->gpu_start_ns) {
        *t0 = o->gpu_start_ns;
        *t1 = o->gpu_end_ns;
    } else {
        *t0 = o->start_ns;
        *t1 = o->end_ns >= o->start_ns ? o->end_ns : o->start_ns;
    }
}

static int plausible(const tsa_nccl_op *o)
{
    int64_t t0, t1;
    call_times(o, &t0, &t1);
    return t0 >= XR_T_MIN && t1 <= XR_T_MAX && t1 - t0 <= XR_SPAN_MAX;
}

static int usable_call(const tsa_nccl_op *o)
{
    /* 0 = ncclSuccess, 7 = ncclInProgress (non-blocking communicators) */
    if (o->result != 0 && o->result != 7)
        return 0;
    if (!counts_in_seq(o) || !xr_is_blame_op(o->op))
        return 0;
    if (o->comm_size == 1)
        return 0;
    return plausible(o);
}

typedef struct comm_info {
    uint64_t min_seq, max_seq;
    uint64_t calls;         /* usable calls over all ranks */
    uint64_t limit;         /* seqs at or above it are corrupt: ignored */
    uint64_t first_seq;     /* the lowest seq a rank's first call on it has */
    uint64_t rank_calls;    /* the busiest rank's calls counted in seq */
    size_t base;            /* first slot */
    int enabled;
} comm_info;

/* The communicator of a usable call whose seq is below the communicator's
 * limit; NULL for any other call. */
static comm_info *usable_comm(comm_info *comms, xr_idmap *map, const tsa_nccl_op *o)
{
    if (!usable_call(o))
        return NULL;
    comm_info *ce = &comms[xr_idmap_get(map, o->comm_id, 0)];
    return o->seq < ce->limit ? ce : NULL;
}

/* The slot of seq in an enabled communicator. */
static size_t slot_of(const comm_info *ce, uint64_t seq)
{
    return ce->base + (size_t)(seq - ce->min_seq);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

/* Where the slots stand while ranks are placed in them, rank by rank. */
typedef struct slot_state {
    uint32_t fill;          /* members placed */
    uint32_t first, last;   /* their chain of blocks (members.c); none for one member */
    xr_member prev;         /* the last one ({-1} before the first) */
    uint64_t bytes0;        /* the first member's call: bytes, op, step */
    uint8_t op0, same;      /* same: every member's op is op0 */
    int32_t step0;
} slot_state;

typedef struct placing {
    xr_ctx *c;
    comm_info *comms;
    xr_idmap *map;
    slot_state *slots;
    uint64_t *last_seq;     /* per comm during one rank's walk: seq + 1, 0 none */
} placing;

/* Step index of a rank's call, -1 when outside any step or in warm-up. */
static int32_t step_of_call(const tsa_rank *rk, size_t op)
{
    size_t lo = 0, hi = rk->n_steps;
    while (lo < hi) {   /* last step whose first_nccl <= op */
        size_t mid = lo + (hi - lo) / 2;
        if (rk->steps[mid].first_nccl <= op)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return -1;
    const tsa_step *s = &rk->steps[lo - 1];
    if (op >= s->first_nccl + s->n_nccl || s->warmup)
        return -1;
    return (int32_t)(lo - 1);
}

/* A slot's first member waits in its state: a call no other rank made
 * (a communicator with one rank present) then takes no block. */
static int place(placing *pl, slot_state *st, const xr_member *m, const tsa_rank *rk,
                 size_t i)
{
    const tsa_nccl_op *o = &rk->nccl[i];
    struct xr_blocks *b = &pl->c->blocks;
    const xr_member none = {.rank = -1};
    if (!st->fill) {
        st->op0 = o->op;
        st->bytes0 = o->bytes;
        st->same = 1;
        st->step0 = step_of_call(rk, i);
    } else {
        if (o->op != st->op0)
            st->same = 0;
        if (st->fill == 1 && xr_member_add(b, &st->first, &st->last, &st->prev, &none))
            return -1;
        if (xr_member_add(b, &st->first, &st->last, m, &st->prev))
            return -1;
    }
    st->prev = *m;
    st->fill++;
    return 0;
}

/* Gaps and placement of one rank's calls, in rank order across the ranks
 * so members come in rank order. */
static int place_rank(placing *pl, const tsa_rank *rk, size_t r)
{
    xr_ctx *c = pl->c;
    memset(pl->last_seq, 0, c->n_comms * sizeof *pl->last_seq);
    int have_end = 0;
    int64_t max_end = 0;
    int64_t *done = tsa_group_done(rk);
    if (!done)
        return -1;
    for (size_t i = 0; i < rk->n_nccl; i++) {
        const tsa_nccl_op *o = &rk->nccl[i];
        if (!counts_in_seq(o))
            continue;
        size_t ci = (size_t)xr_idmap_get(pl->map, o->comm_id, 0);
        /* a hole in this communicator's seqs means a lost record: the
         * gap would then span two intervals of work */
        int contiguous = pl->last_seq[ci] ? pl->last_seq[ci] == o->seq : o->seq == 0;
        pl->last_seq[ci] = o->seq + 1;
        if (!usable_call(o))
            continue;
        int64_t t0, t1;
        call_times(o, &t0, &t1);
        if (done[i] > t1 && t1 == o->end_ns)
            t1 = done[i]; /* a grouped call completes with its group */
        int64_t gap = XR_GAP_UNKNOWN;
        if (have_end && contiguous)
            gap = t0 > max_end ? t0 - max_end : 0;
        if (gap != XR_GAP_UNKNOWN && gap > XR_SPAN_MAX)
            gap = XR_GAP_UNKNOWN;   /* an hour-long pause is not step work */
        if (!have_end || t1 > max_end)
            max_end = t1;
        have_end = 1;
        const comm_info *ce = &pl->comms[ci];
        if (!ce->enabled || o->seq >= ce->limit)
            continue;
        slot_state *st = &pl->slots[slot_of(ce, o->seq)];
        /* one rank twice in one instance (a duplicate record): keep the first */
        if (st->fill && st->prev.rank == (int32_t)r)
            continue;
        xr_member m = {t0, t1, gap, (int32_t)r};
        if (place(pl, st, &m, rk, i)) {
            free(done);
            return -1;
        }
    }
    free(done);
    return 0;
}

static int place_all(placing *pl)
{
    tsa_job *job = pl->c->job;
    for (size_t r = 0; r < pl->c->n_ranks; r++) {
        tsa_rank_view v;
        const tsa_rank *rk = tsa_view_open(&job->ranks[r], TSA_VIEW_CALLS | TSA_VIEW_STEPS, &v);
        int rc = rk ? place_rank(pl, rk, r) : -1;
        tsa_view_close(&v);
        if (rc)
            return -1;
    }
    return 0;
}


/* A rank whose own-cost budget stepped to light has no kernels from then
 * on, and the analysis window ends before it (passes/records_cut.c): its
 * first call from then on ends each communicator's seqs, on every rank. */
static int cut_at_light(const xr_ctx *c, const tsa_job *job, xr_idmap *map, comm_info *comms)
{
    for (size_t r = 0; r < c->n_ranks; r++) {
        int64_t at, resume;
        if (!tsa_self_cost_thinned(&job->ranks[r].self_cost, TSC_COST_WHAT_LIGHT, &at, &resume))
            continue;
        tsa_call_iter it;
        if (tsa_call_iter_open(&it, &job->ranks[r]))
            return -1;
        for (const tsa_nccl_op *o; (o = tsa_call_iter_next(&it));) {
            int64_t ci = o->start_ns >= at ? xr_idmap_get(map, o->comm_id, 0) : -1;
            if (ci >= 0 && (size_t)ci < c->n_comms && o->seq < comms[ci].limit)
                comms[ci].limit = o->seq;
        }
        tsa_call_iter_close(&it);
    }
    return 0;
}
/* 1. communicators and their seq ranges */
static int find_comms(xr_ctx *c, xr_idmap *map, comm_info **comms_out)
{
    tsa_job *job = c->job;
    comm_info *comms = NULL;
    size_t comms_cap = 0;
    int rc = 0;
    /* each rank's first seq and number of calls per communicator: its
     * summary (load/seq_summary.h), no call read */
    for (size_t r = 0; r < c->n_ranks && !rc; r++) {
        tsa_seq_summary tmp;
        const tsa_seq_summary *sum = tsa_rank_seqs(&job->ranks[r], &tmp);
        if (!sum)
            rc = -1;
        for (size_t k = 0; sum && k < sum->n_comms && !rc; k++) {
            const tsa_comm_seqs *cs = &sum->comms[k];
            if (!cs->comm_id)
                continue;
            int64_t ci = xr_idmap_get(map, cs->comm_id, 1);
            if (ci < 0) {
                rc = -1;
                break;
            }
            if ((size_t)ci == c->n_comms) {   /* first call seen on it */
                if (c->n_comms == comms_cap) {
                    size_t cap = comms_cap ? comms_cap * 2 : 16;
                    comm_info *nc = realloc(comms, cap * sizeof *nc);
                    if (!nc) {
                        rc = -1;
                        break;
                    }
                    comms = nc;
                    comms_cap = cap;
                }
                memset(&comms[ci], 0, sizeof comms[ci]);
                comms[ci].min_seq = comms[ci].first_seq = UINT64_MAX;
                c->n_comms++;
            }
            comm_info *ce = &comms[ci];
            if (cs->first_seq < ce->first_seq)
                ce->first_seq = cs->first_seq;
            if (cs->calls > ce->rank_calls)
                ce->rank_calls = cs->calls;
        }
        tsa_seq_summary_free(&tmp);
    }
    *comms_out = comms;
    if (rc)
        return -1;
    /* Seqs count up from the ranks' first call in the dump (0, or where a
     * black-box capture window starts), so none can exceed that by much
     * more than the busiest rank's call count; a larger one is a corrupt
     * record, not a reason to allocate without bound or to give up on the
     * communicator. */
    for (size_t ci = 0; ci < c->n_comms; ci++) {
        uint64_t base = comms[ci].first_seq == UINT64_MAX ? 0 : comms[ci].first_seq;
        comms[ci].limit = base + 2 * comms[ci].rank_calls + 1024;
    }
    if (cut_at_light(c, job, map, comms))
        return -1;
    for (size_t r = 0; r < c->n_ranks; r++) {
        tsa_call_iter it;
        if (tsa_call_iter_open(&it, &job->ranks[r]))
            return -1;
        for (const tsa_nccl_op *o; (o = tsa_call_iter_next(&it));) {
            comm_info *ce = usable_comm(comms, map, o);
            if (!ce)
                continue;
            if (o->seq < ce->min_seq)
                ce->min_seq = o->seq;
            if (o->seq > ce->max_seq)
                ce->max_seq = o->seq;
            ce->calls++;
        }
        tsa_call_iter_close(&it);
    }
    c->comm_ids = malloc((c->n_comms ? c->n_comms : 1) * sizeof *c->comm_ids);
    if (!c->comm_ids)
        return -1;
    for (size_t h = 0; h < map->cap; h++)
        if (map->vals[h])
            c->comm_ids[map->vals[h] - 1] = map->keys[h];
    return 0;
}

int xr_match(xr_ctx *c)
{
    xr_idmap map = {0};
    comm_info *comms = NULL;
    placing pl = {.c = c, .map = &map};
    int rc = -1;

    if (find_comms(c, &map, &comms))
        goto out;
    pl.comms = comms;

    /* 2. one slot per seq of each communicator */
    size_t n_slots = 0;
    for (size_t ci = 0; ci < c->n_comms; ci++) {
        comm_info *ce = &comms[ci];
        ce->base = n_slots;
        if (!ce->calls)
            continue;
        uint64_t range = ce->max_seq - ce->min_seq + 1;
        ce->enabled = 1;
        n_slots += (size_t)range;
    }
    pl.slots = calloc(n_slots + 1, sizeof *pl.slots);
    pl.last_seq = calloc(c->n_comms + 1, sizeof *pl.last_seq);
    if (!pl.slots || !pl.last_seq)
        goto out;

    /* 3. the members, rank by rank */
    if (place_all(&pl))
        goto out;

    /* 4. instances: slots with two ranks or more */
    size_t n_inst = 0;
    for (size_t s = 0; s < n_slots; s++)
        if (pl.slots[s].fill >= 2)
            n_inst++;
    c->inst = calloc(n_inst ? n_inst : 1, sizeof *c->inst);
    if (!c->inst)
        goto out;
    uint32_t *expected = calloc(c->n_comms + 1, sizeof *expected);
    if (!expected)
        goto out;
    size_t k = 0, members = 0;
    for (size_t ci = 0; ci < c->n_comms; ci++) {
        const comm_info *ce = &comms[ci];
        if (!ce->enabled)
            continue;
        uint64_t range = ce->max_seq - ce->min_seq + 1;
        for (uint64_t q = 0; q < range; q++) {
            const slot_state *st = &pl.slots[ce->base + (size_t)q];
            if (st->fill < 2)
                continue;
            xr_instance *in = &c->inst[k++];
            in->first = st->first;
            in->n = st->fill;
            in->comm = (uint32_t)ci;
            in->seq = ce->min_seq + q;
            in->step = -1;
            in->model_step = st->step0;
            in->last = -1;
            members += st->fill;
            in->op = st->op0;
            /* ranks disagreeing on what call this is: seqs out of step */
            in->symmetric = st->same && xr_is_symmetric_op(in->op);
            in->complete = st->same;   /* refined below */
            in->sig = mix(mix(ci + 1, in->op), st->bytes0);
            if (in->n > expected[ci])
                expected[ci] = in->n;
        }
    }
    for (size_t i = 0; i < k; i++)
        if (c->inst[i].n != expected[c->inst[i].comm])
            c->inst[i].complete = 0;
    free(expected);
    c->n_inst = k;
    c->n_m = members;
    rc = 0;
out:
    xr_idmap_free(&map);
    free(comms);
    free(pl.slots);
    free(pl.last_seq);
    return rc;
}

size_t xr_largest_instance(const xr_ctx *c)
{
    size_t max_n = 1;
    for (size_t k = 0; k < c->n_inst; k++)
        if (c->inst[k].n > max_n)
            max_n = c->inst[k].n;
    return max_n;
}

xr_member *xr_scratch_members(const xr_ctx *c)
{
    return malloc(xr_largest_instance(c) * sizeof(xr_member));
}
