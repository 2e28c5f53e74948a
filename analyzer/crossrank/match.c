/* Matching: the same collective call on every rank is found by
 * (comm_id, seq), seq being each rank's own per-communicator call counter.
 * Seqs of one communicator are dense, so a counting sort by slot
 * (comm base + seq) groups a million calls in linear time without a
 * comparator.  Each member also gets its "gap": the work the rank did since
 * its previous collective ended, the quantity the straggler analysis
 * compares across ranks. */
#include <stdlib.h>
#include <string.h>

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
    uint64_t cur_calls;
    size_t cur_rank;
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

int xr_match(xr_ctx *c)
{
    tsa_job *job = c->job;
    xr_idmap map = {0};
    comm_info *comms = NULL;
    size_t comms_cap = 0;
    uint32_t *count = NULL, *fill = NULL;
    size_t *start = NULL;
    uint64_t *last_seq = NULL;   /* per comm during one rank's walk: seq + 1, 0 none */
    int rc = -1;

    /* 1. communicators and their seq ranges */
    for (size_t r = 0; r < c->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        for (size_t i = 0; i < rk->n_nccl; i++) {
            const tsa_nccl_op *o = &rk->nccl[i];
            if (!counts_in_seq(o))
                continue;
            int64_t ci = xr_idmap_get(&map, o->comm_id, 1);
            if (ci < 0)
                goto out;
            if ((size_t)ci == c->n_comms) {   /* first call seen on it */
                if (c->n_comms == comms_cap) {
                    size_t cap = comms_cap ? comms_cap * 2 : 16;
                    comm_info *nc = realloc(comms, cap * sizeof *nc);
                    if (!nc)
                        goto out;
                    comms = nc;
                    comms_cap = cap;
                }
                memset(&comms[ci], 0, sizeof comms[ci]);
                comms[ci].min_seq = comms[ci].first_seq = UINT64_MAX;
                c->n_comms++;
            }
            comm_info *ce = &comms[ci];
            if (ce->cur_rank != r || !ce->cur_calls) {
                ce->cur_rank = r;
                ce->cur_calls = 0;
                if (o->seq < ce->first_seq)
                    ce->first_seq = o->seq;
            }
            if (++ce->cur_calls > ce->rank_calls)
                ce->rank_calls = ce->cur_calls;
        }
    }
    /* Seqs count up from the ranks' first call in the dump (0, or where a
     * black-box capture window starts), so none can exceed that by much
     * more than the busiest rank's call count; a larger one is a corrupt
     * record, not a reason to allocate without bound or to give up on the
     * communicator. */
    for (size_t ci = 0; ci < c->n_comms; ci++) {
        uint64_t base = comms[ci].first_seq == UINT64_MAX ? 0 : comms[ci].first_seq;
        comms[ci].limit = base + 2 * comms[ci].rank_calls + 1024;
    }
    for (size_t r = 0; r < c->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        for (size_t i = 0; i < rk->n_nccl; i++) {
            const tsa_nccl_op *o = &rk->nccl[i];
            comm_info *ce = usable_comm(comms, &map, o);
            if (!ce)
                continue;
            if (o->seq < ce->min_seq)
                ce->min_seq = o->seq;
            if (o->seq > ce->max_seq)
                ce->max_seq = o->seq;
            ce->calls++;
        }
    }
    c->comm_ids = malloc((c->n_comms ? c->n_comms : 1) * sizeof *c->comm_ids);
    if (!c->comm_ids)
        goto out;
    for (size_t h = 0; h < map.cap; h++)
        if (map.vals[h])
            c->comm_ids[map.vals[h] - 1] = map.keys[h];

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
    count = calloc(n_slots + 1, sizeof *count);
    fill = calloc(n_slots + 1, sizeof *fill);
    start = malloc((n_slots + 1) * sizeof *start);
    last_seq = calloc(c->n_comms + 1, sizeof *last_seq);
    if (!count || !fill || !start || !last_seq)
        goto out;

    /* 3. counts per slot */
    for (size_t r = 0; r < c->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        for (size_t i = 0; i < rk->n_nccl; i++) {
            const tsa_nccl_op *o = &rk->nccl[i];
            const comm_info *ce = usable_comm(comms, &map, o);
            if (ce && ce->enabled)
                count[slot_of(ce, o->seq)]++;
        }
    }
    size_t total = 0;
    for (size_t s = 0; s < n_slots; s++) {
        start[s] = total;
        total += count[s];
    }
    c->m = malloc((total ? total : 1) * sizeof *c->m);
    if (!c->m)
        goto out;

    /* 4. gaps and placement, rank by rank so members come in rank order */
    for (size_t r = 0; r < c->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        memset(last_seq, 0, c->n_comms * sizeof *last_seq);
        int have_end = 0;
        int64_t max_end = 0;
        int64_t *done = tsa_group_done(rk);
        if (!done)
            goto out;
        for (size_t i = 0; i < rk->n_nccl; i++) {
            const tsa_nccl_op *o = &rk->nccl[i];
            if (!counts_in_seq(o))
                continue;
            size_t ci = (size_t)xr_idmap_get(&map, o->comm_id, 0);
            /* a hole in this communicator's seqs means a lost record: the
             * gap would then span two intervals of work */
            int contiguous = last_seq[ci] ? last_seq[ci] == o->seq : o->seq == 0;
            last_seq[ci] = o->seq + 1;
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
            const comm_info *ce = &comms[ci];
            if (!ce->enabled || o->seq >= ce->limit)
                continue;
            size_t slot = slot_of(ce, o->seq);
            if (fill[slot]) {
                /* one rank twice in one instance (a duplicate record): keep the first */
                if (c->m[start[slot] + fill[slot] - 1].rank == (int32_t)r)
                    continue;
            }
            xr_member *m = &c->m[start[slot] + fill[slot]++];
            m->arrive = t0;
            m->end = t1;
            m->gap = gap;
            m->rank = (int32_t)r;
            m->op = (int32_t)i;
        }
        free(done);
    }

    /* 5. instances: slots with two ranks or more; members compacted */
    size_t n_inst = 0;
    for (size_t s = 0; s < n_slots; s++)
        if (fill[s] >= 2)
            n_inst++;
    c->inst = calloc(n_inst ? n_inst : 1, sizeof *c->inst);
    if (!c->inst)
        goto out;
    uint32_t *expected = calloc(c->n_comms + 1, sizeof *expected);
    if (!expected)
        goto out;
    size_t w = 0, k = 0;
    for (size_t ci = 0; ci < c->n_comms; ci++) {
        const comm_info *ce = &comms[ci];
        if (!ce->enabled)
            continue;
        uint64_t range = ce->max_seq - ce->min_seq + 1;
        for (uint64_t q = 0; q < range; q++) {
            size_t s = ce->base + (size_t)q;
            if (fill[s] < 2)
                continue;
            xr_instance *in = &c->inst[k++];
            memmove(&c->m[w], &c->m[start[s]], fill[s] * sizeof *c->m);
            in->first = w;
            in->n = fill[s];
            in->comm = (uint32_t)ci;
            in->seq = ce->min_seq + q;
            in->step = -1;
            in->last = -1;
            w += fill[s];
            const tsa_nccl_op *o0 = &job->ranks[c->m[in->first].rank].nccl[c->m[in->first].op];
            in->op = o0->op;
            int same = 1;
            for (uint32_t j = 1; j < in->n; j++) {
                const xr_member *mj = &c->m[in->first + j];
                if (job->ranks[mj->rank].nccl[mj->op].op != in->op)
                    same = 0;
            }
            /* ranks disagreeing on what call this is: seqs out of step */
            in->symmetric = same && xr_is_symmetric_op(in->op);
            in->complete = same;   /* refined below */
            in->sig = mix(mix(ci + 1, in->op), o0->bytes);
            if (in->n > expected[ci])
                expected[ci] = in->n;
        }
    }
    for (size_t i = 0; i < k; i++)
        if (c->inst[i].n != expected[c->inst[i].comm])
            c->inst[i].complete = 0;
    free(expected);
    c->n_inst = k;
    c->n_m = w;
    rc = 0;
out:
    xr_idmap_free(&map);
    free(comms);
    free(count);
    free(fill);
    free(start);
    free(last_seq);
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
