/* Kernel lookup by correlation id (corr_index.h). */
#include "corr_index.h"

#include <stdlib.h>
#include <string.h>

int tsa_corr_index_build(tsa_corr_index *ix, const tsa_kernel *k, size_t n)
{
    memset(ix, 0, sizeof *ix);
    if (!n)
        return 0;
    uint32_t lo = k[0].correlation, hi = k[0].correlation;
    for (size_t i = 1; i < n; i++) {
        if (k[i].correlation < lo)
            lo = k[i].correlation;
        if (k[i].correlation > hi)
            hi = k[i].correlation;
    }
    size_t span = (size_t)(hi - lo) + 1;
    if (n < UINT32_MAX && span <= 4 * n + 1024) {
        ix->table = calloc(span, sizeof *ix->table);
        if (!ix->table)
            return -1;
        ix->min = lo;
        ix->span = span;
        /* Backwards, so that the first kernel of a repeated id wins. */
        for (size_t i = n; i-- > 0;)
            ix->table[k[i].correlation - lo] = (uint32_t)(i + 1);
        return 0;
    }
    ix->sorted = malloc(n * sizeof *ix->sorted);
    if (!ix->sorted)
        return -1;
    for (size_t i = 0; i < n; i++) {
        ix->sorted[i].key = k[i].correlation;
        ix->sorted[i].idx = i;
    }
    if (tsa_sort_keys(ix->sorted, n)) {
        free(ix->sorted);
        ix->sorted = NULL;
        return -1;
    }
    ix->n = n;
    return 0;
}

void tsa_corr_index_free(tsa_corr_index *ix)
{
    free(ix->table);
    free(ix->sorted);
    memset(ix, 0, sizeof *ix);
}
