/* Helpers shared by the sorting tests: a seedable xorshift generator and
 * the reference order (stable qsort by key, then original index). */
#ifndef TSA_TEST_SORT_CHECK_H
#define TSA_TEST_SORT_CHECK_H

#include <stdint.h>

#include "util/radix_sort.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static inline uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static inline int by_key_then_idx(const void *pa, const void *pb)
{
    const tsa_sort_key *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

#endif
