/* Reserved-memory timeline: ordering and walking a rank's memory records;
 * see memory_timeline.h. */
#include "memory_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"
#include "util/vec.h"

int tsa_rank_add_mem(tsa_rank *r, const tsa_mem_event *e)
{
    if (tsa_vec_reserve((void **)&r->mem, &r->cap_mem, r->n_mem, sizeof *r->mem))
        return -1;
    r->mem[r->n_mem++] = *e;
    return 0;
}

/* At one instant: frees (0), pool sizes (1), allocations (2). */
static int op_rank(uint8_t op)
{
    return op == TSA_MEM_FREE ? 0 : op == TSA_MEM_POOL ? 1 : 2;
}

static int by_time(const void *pa, const void *pb)
{
    const tsa_mem_event *a = pa, *b = pb;
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    return op_rank(a->op) - op_rank(b->op);
}

void tsa_mem_sort(tsa_mem_event *ev, size_t n)
{
    size_t i = 1;
    while (i < n && by_time(&ev[i - 1], &ev[i]) <= 0)
        i++;
    if (i < n)
        qsort(ev, n, sizeof *ev, by_time);
}

int tsa_mem_has_pools(const tsa_mem_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i].op == TSA_MEM_POOL)
            return 1;
    return 0;
}

void tsa_mem_walk_init(tsa_mem_walk *w, int use_pool_sizes)
{
    memset(w, 0, sizeof *w);
    w->use_pool_sizes = use_pool_sizes;
}

/* Frees of memory allocated before the capture started would go below
 * zero: the live count stops at zero instead. */
static void take(uint64_t *live, uint8_t op, uint64_t bytes)
{
    if (op == TSA_MEM_ALLOC)
        *live = bytes > UINT64_MAX - *live ? UINT64_MAX : *live + bytes;
    else
        *live = bytes > *live ? 0 : *live - bytes;
}

static void set_pool(tsa_mem_walk *w, uint64_t pool, uint64_t bytes)
{
    size_t i = 0;
    while (i < w->n_pools && w->pool_id[i] != pool)
        i++;
    if (i == w->n_pools) {
        if (w->n_pools < TSA_MEM_MAX_POOLS)
            w->n_pools++;
        else
            i = TSA_MEM_MAX_POOLS - 1; /* bounded: later pools share the last slot */
        w->pool_id[i] = pool;
        w->pool_bytes[i] = 0;
    }
    w->pool_sum -= w->pool_bytes[i];
    w->pool_bytes[i] = bytes;
    w->pool_sum = bytes > UINT64_MAX - w->pool_sum ? UINT64_MAX : w->pool_sum + bytes;
}

void tsa_mem_walk_apply(tsa_mem_walk *w, const tsa_mem_event *e)
{
    switch (e->op) {
    case TSA_MEM_ALLOC:
    case TSA_MEM_FREE:
        if (e->source == TSC_MEM_SRC_ASYNC)
            take(&w->async_live, e->op, e->bytes);
        else
            take(&w->direct, e->op, e->bytes);
        break;
    case TSA_MEM_POOL:
        set_pool(w, e->pool, e->bytes);
        break;
    default:
        break;
    }
}

uint64_t tsa_mem_walk_reserved(const tsa_mem_walk *w)
{
    uint64_t other = w->use_pool_sizes ? w->pool_sum : w->async_live;
    return other > UINT64_MAX - w->direct ? UINT64_MAX : w->direct + other;
}
