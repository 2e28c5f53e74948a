/* See rec_counters.h: the shared counters, apart from the recorder so that
 * the files under the recorder reach them without a circle of calls. */
#include "rec_counters.h"

_Atomic uint32_t tsc_rec_next_desc_g = 1;
_Atomic uint64_t tsc_rec_intern_gen_g;
_Atomic uint64_t tsc_rec_dropped_extra_g;

uint32_t tsc_rec_new_desc_id(void)
{
    return atomic_fetch_add_explicit(&tsc_rec_next_desc_g, 1, memory_order_relaxed);
}

uint64_t tsc_rec_intern_generation(void)
{
    return atomic_load_explicit(&tsc_rec_intern_gen_g, memory_order_relaxed);
}

void tsc_rec_count_dropped(uint64_t n)
{
    atomic_fetch_add_explicit(&tsc_rec_dropped_extra_g, n, memory_order_relaxed);
}
