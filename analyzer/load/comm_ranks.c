/* Communicator ranks to global ranks (comm_ranks.h). */
#include "comm_ranks.h"

#include <stdlib.h>

#include "rank_view.h"
#include "util/vec.h"

static int by_comm_rank(const void *pa, const void *pb)
{
    const tsa_comm_rank *a = pa, *b = pb;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    return (a->comm_rank > b->comm_rank) - (a->comm_rank < b->comm_rank);
}

int tsa_comm_ranks_build(const tsa_job *job, tsa_comm_ranks *out)
{
    size_t cap = 0;
    *out = (tsa_comm_ranks){0};
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        uint64_t last = 0;
        size_t n;
        /* The shapes hold every (communicator, rank) pair of the calls, and
         * a lean rank keeps no array of calls. */
        const tsa_nccl_op *shape = tsa_rank_call_shapes(r, &n);
        for (size_t k = 0; k < n; k++) {
            const tsa_nccl_op *o = &shape[k];
            if (!o->comm_id || o->comm_id == last || o->comm_rank == UINT32_MAX)
                continue;
            last = o->comm_id;
            if (tsa_grow((void **)&out->map, out->n, &cap, sizeof *out->map)) {
                tsa_comm_ranks_free(out);
                return -1;
            }
            out->map[out->n++] = (tsa_comm_rank){o->comm_id, o->comm_rank, r->rank};
        }
    }
    if (out->n)
        qsort(out->map, out->n, sizeof *out->map, by_comm_rank);
    return 0;
}

void tsa_comm_ranks_free(tsa_comm_ranks *m)
{
    free(m->map);
    *m = (tsa_comm_ranks){0};
}

int tsa_comm_rank_global(const tsa_comm_ranks *m, uint64_t comm_id, int comm_rank)
{
    tsa_comm_rank want = {comm_id, (uint32_t)comm_rank, 0};
    const tsa_comm_rank *hit =
        comm_id && m->n ? bsearch(&want, m->map, m->n, sizeof *m->map, by_comm_rank) : NULL;
    return hit ? hit->global : comm_rank;
}
