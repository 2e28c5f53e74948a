/* Kernel lookup by CUPTI correlation id, for joining launches, NCCL calls
 * and GEMMs to their kernels while loading a rank (job_load.c). */
#ifndef TSA_CORR_INDEX_H
#define TSA_CORR_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "util/radix_sort.h"

typedef struct tsa_corr_index {
    uint32_t min;           /* dense form: table[id - min] = kernel index + 1, 0 none */
    size_t span;
    uint32_t *table;
    tsa_sort_key *sorted;   /* sparse form: (correlation, kernel index) by correlation */
    size_t n;
} tsa_corr_index;

/* Index the kernels' correlation ids: a direct table when the ids are
 * dense (the usual case: CUPTI numbers calls consecutively), else a sorted
 * array searched by bisection.  Returns 0, or -1 when out of memory. */
int tsa_corr_index_build(tsa_corr_index *ix, const tsa_kernel *k, size_t n);

/* Index of the first kernel (lowest array index) with this correlation id,
 * or -1. */
static inline int64_t tsa_corr_index_find(const tsa_corr_index *ix, uint64_t corr)
{
    if (ix->table) {
        uint64_t d = corr - ix->min;
        if (corr < ix->min || d >= ix->span)
            return -1;
        return (int64_t)ix->table[d] - 1;
    }
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)ix->sorted[mid].key < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n && (uint64_t)ix->sorted[lo].key == corr ? (int64_t)ix->sorted[lo].idx : -1;
}

void tsa_corr_index_free(tsa_corr_index *ix);

#endif
