#include "arrivals.h"

#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "load/rank_view.h"
#include "util/key_table.h"
#include "util/sat_math.h"
#include "util/vec.h"

static int by_key(const void *pa, const void *pb)
{
    const tsa_arrival *a = pa, *b = pb;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

int tsa_counts_for_arrival(const tsa_nccl_op *op)
{
    return tsa_nccl_is_collective(op->op) && op->comm_size > 1 && op->comm_id;
}

/* The latest arrival per (communicator, seq), each key once: memory grows
 * with the job's distinct collectives, not with its calls. */
static int note_arrivals(const tsa_rank *r, tsa_key_table *keys, int64_t **latest, size_t *cap)
{
    tsa_call_iter it;
    if (tsa_call_iter_open(&it, r))
        return -1;
    int rc = 0;
    for (const tsa_nccl_op *op; !rc && (op = tsa_call_iter_next(&it));) {
        if (!tsa_counts_for_arrival(op))
            continue;
        uint64_t key[2] = {op->comm_id, op->seq};
        size_t known = keys->n;
        int64_t k = tsa_key_table_put(keys, key);
        if (k < 0 || ((size_t)k == known && tsa_vec_reserve((void **)latest, cap, known,
                                                             sizeof **latest))) {
            rc = -1;
            break;
        }
        int64_t t = tsa_sat_add(op->gpu_start_ns, r->clock_offset_ns);
        if ((size_t)k == known || t > (*latest)[k])
            (*latest)[k] = t;
    }
    tsa_call_iter_close(&it);
    return rc;
}

int tsa_arrivals_build(const tsa_job *job, tsa_arrivals *out)
{
    memset(out, 0, sizeof *out);
    tsa_key_table keys;
    tsa_key_table_init(&keys, 2 * sizeof(uint64_t));
    int64_t *latest = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++)
        rc = note_arrivals(&job->ranks[i], &keys, &latest, &cap);
    size_t n = keys.n;
    tsa_arrival *a = !rc && n ? malloc(n * sizeof *a) : NULL;
    if (!rc && n && !a)
        rc = -1;
    for (size_t k = 0; a && k < n; k++) {
        const uint64_t *key = tsa_key_table_at(&keys, k);
        a[k] = (tsa_arrival){key[0], key[1], latest[k]};
    }
    tsa_key_table_free(&keys);
    free(latest);
    if (rc)
        return -1;
    if (a)
        qsort(a, n, sizeof *a, by_key);
    out->v = a;
    out->n = n;
    return 0;
}

int64_t tsa_arrivals_latest(const tsa_arrivals *a, uint64_t comm_id, uint64_t seq)
{
    size_t lo = 0, hi = a->n;
    tsa_arrival key = {.comm_id = comm_id, .seq = seq};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_key(&a->v[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->n && a->v[lo].comm_id == comm_id && a->v[lo].seq == seq)
        return a->v[lo].latest;
    return INT64_MIN;
}

void tsa_arrivals_free(tsa_arrivals *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}

