/* The generator's memory records and their exact answers; see gen_mem.h. */
#include "gen_mem.h"

#include "tsc_format.h"

int gen_mem_enabled(const gen_options *o)
{
    return !o->host_only && (o->mem_base || o->mem_leak || o->mem_churn || o->mem_pool);
}

int gen_mem_leaks(const gen_options *o, int r)
{
    return o->mem_leak > 0 && (o->mem_leak_rank < 0 || o->mem_leak_rank == r);
}

static size_t add(gen_mem_op *out, size_t n, uint8_t kind, uint8_t source, uint8_t pool_op,
                  int64_t t, uint64_t bytes)
{
    out[n] = (gen_mem_op){.kind = kind, .source = source, .pool_op = pool_op, .t_ns = t,
                          .bytes = bytes};
    return n + 1;
}

size_t gen_mem_startup(const gen_options *o, int64_t t0, gen_mem_op out[GEN_MEM_MAX_OPS])
{
    size_t n = 0;
    if (!gen_mem_enabled(o))
        return 0;
    if (o->mem_base)
        n = add(out, n, TSC_EV_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 0, t0 + 500000000, o->mem_base);
    if (o->mem_pool)
        n = add(out, n, TSC_EV_MEM_POOL, TSC_MEM_SRC_POOL, TSC_MEM_POOL_CREATED, t0 + 600000000,
                o->mem_pool);
    return n;
}

size_t gen_mem_step(const gen_options *o, int r, int64_t begin, int64_t ce,
                    gen_mem_op out[GEN_MEM_MAX_OPS])
{
    size_t n = 0;
    if (!gen_mem_enabled(o))
        return 0;
    if (gen_mem_leaks(o, r))
        n = add(out, n, TSC_EV_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 0, begin + 1000, o->mem_leak);
    if (o->mem_churn)
        n = add(out, n, TSC_EV_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 0, begin + 2000, o->mem_churn);
    if (o->mem_pool) {
        /* Served from the pool: its size does not move. */
        uint64_t half = o->mem_pool / 2;
        n = add(out, n, TSC_EV_MEM_ALLOC, TSC_MEM_SRC_ASYNC, 0, begin + 3000, half);
        n = add(out, n, TSC_EV_MEM_POOL, TSC_MEM_SRC_POOL, TSC_MEM_POOL_USAGE, begin + 3000,
                o->mem_pool);
        n = add(out, n, TSC_EV_MEM_FREE, TSC_MEM_SRC_ASYNC, 0, begin + 4000, half);
        n = add(out, n, TSC_EV_MEM_POOL, TSC_MEM_SRC_POOL, TSC_MEM_POOL_USAGE, begin + 4000,
                o->mem_pool);
    }
    if (o->mem_churn)
        n = add(out, n, TSC_EV_MEM_FREE, TSC_MEM_SRC_MALLOC, 0, ce - 1000, o->mem_churn);
    return n;
}

void gen_mem_truth(const gen_options *o, int64_t t0, int64_t first_begin, int64_t last_begin,
                   gen_truth *t)
{
    if (!gen_mem_enabled(o))
        return;
    int leak_rank = o->mem_leak > 0 && o->mem_leak_rank >= 0 ? o->mem_leak_rank : 0;
    int leaks = gen_mem_leaks(o, leak_rank);
    t->mem_peak_rank = leak_rank;
    t->mem_peak_bytes = o->mem_base + o->mem_pool + (leaks ? o->mem_leak * (uint64_t)o->steps : 0) +
                        o->mem_churn;
    /* Growing: first reached in the last step; steady: in the first
     * step's churn, else at start-up. */
    if (leaks)
        t->mem_peak_ns = last_begin + (o->mem_churn ? 2000 : 1000);
    else if (o->mem_churn)
        t->mem_peak_ns = first_begin + 2000;
    else if (o->mem_pool)
        t->mem_peak_ns = t0 + 600000000;
    else
        t->mem_peak_ns = t0 + 500000000;
    t->mem_growth_per_step = leaks ? (int64_t)o->mem_leak : 0;
    t->mem_churn_per_step = o->mem_churn;
    t->mem_capacity_bytes = o->mem_free ? o->mem_free : o->mem_total;
}
