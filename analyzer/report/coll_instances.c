#include "coll_instances.h"

#include <stdlib.h>

#include "tsc_format.h"

static int is_symmetric(uint8_t op)
{
    return tsc_nccl_op_is_collective(op);
}

static uint64_t mix(uint64_t comm, uint64_t seq, uint8_t op)
{
    uint64_t h = comm ^ (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)op << 56);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static tsa_coll_slot *find(const tsa_coll_instances *ci, uint64_t comm, uint64_t seq, uint8_t op)
{
    if (!ci->n_slots)
        return NULL;
    size_t mask = ci->n_slots - 1, i = (size_t)mix(comm, seq, op) & mask;
    while (ci->slots[i].used) {
        tsa_coll_slot *s = &ci->slots[i];
        if (s->comm_id == comm && s->seq == seq && s->op == op)
            return s;
        i = (i + 1) & mask;
    }
    return &ci->slots[i];   /* the empty slot where it would go */
}

int tsa_coll_instances_build(tsa_coll_instances *ci, const tsa_job *job)
{
    ci->slots = NULL;
    ci->n_slots = 0;
    size_t total = 0;
    for (size_t r = 0; r < job->n_ranks; r++)
        total += job->ranks[r].n_nccl;
    size_t n = 64;
    while (n < total * 2)
        n *= 2;
    ci->slots = calloc(n, sizeof *ci->slots);
    if (!ci->slots)
        return -1;
    ci->n_slots = n;
    for (size_t r = 0; r < job->n_ranks; r++) {
        const tsa_rank *rk = &job->ranks[r];
        for (size_t i = 0; i < rk->n_nccl; i++) {
            const tsa_nccl_op *op = &rk->nccl[i];
            if (!is_symmetric(op->op))
                continue;
            tsa_coll_slot *s = find(ci, op->comm_id, op->seq, op->op);
            int64_t start = op->gpu_start_ns + rk->clock_offset_ns;
            if (!s->used) {
                s->used = 1;
                s->comm_id = op->comm_id;
                s->seq = op->seq;
                s->op = op->op;
                s->latest_start = start;
            } else if (start > s->latest_start)
                s->latest_start = start;
            s->ranks++;
        }
    }
    return 0;
}

void tsa_coll_instances_split(const tsa_coll_instances *ci, const tsa_rank *r,
                              const tsa_nccl_op *op, int64_t *wait_ns, int64_t *transfer_ns)
{
    int64_t start = op->gpu_start_ns + r->clock_offset_ns;
    int64_t end = op->gpu_end_ns + r->clock_offset_ns;
    const tsa_coll_slot *s = is_symmetric(op->op) ? find(ci, op->comm_id, op->seq, op->op) : NULL;
    if (!s || !s->used || s->ranks < 2) {
        *wait_ns = 0;
        *transfer_ns = end - start > 0 ? end - start : 0;
        return;
    }
    int64_t latest = s->latest_start;
    if (latest > end)   /* clocks not aligned well enough: all of it is waiting */
        latest = end;
    *wait_ns = latest - start > 0 ? latest - start : 0;
    *transfer_ns = end - latest > 0 ? end - latest : 0;
}

void tsa_coll_instances_free(tsa_coll_instances *ci)
{
    free(ci->slots);
    ci->slots = NULL;
    ci->n_slots = 0;
}
