/* Growable arrays: one helper so every "append and grow by doubling" site
 * (the model builders, the loaders, the renderers) handles overflow and
 * out-of-memory the same way. */
#ifndef TSA_VIEWS_VEC_H
#define TSA_VIEWS_VEC_H

#include <stdint.h>
#include <stdlib.h>

#include "mem_hint.h"

/* Make room for element n in *items (capacity *cap): one more after n
 * elements, or index n of a table indexed by a number that can jump ahead
 * (an interned string's).  Returns 0, or -1 when out of memory (the array
 * is left as it was). */
static inline int tsa_vec_reserve(void **items, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap : 32;
    while (ncap <= n) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / elem)
        return -1;
    void *p = ncap * elem >= TSA_HUGE_HINT_MIN ? tsa_realloc_huge(*items, *cap * elem, ncap * elem)
                                               : realloc(*items, ncap * elem);
    if (!p)
        return -1;
    *items = p;
    *cap = ncap;
    return 0;
}

/* The same, argument order of the model builders (tsa_grow(arr, n, cap,
 * elem): room for element n). */
static inline int tsa_grow(void **arr, size_t n, size_t *cap, size_t elem)
{
    return tsa_vec_reserve(arr, cap, n, elem);
}

/* Append a value: TSA_VEC_PUSH(arr, n, cap, value) evaluates to 0 or -1. */
#define TSA_VEC_PUSH(arr, n, cap, value)                                         \
    (tsa_vec_reserve((void **)&(arr), &(cap), (n), sizeof *(arr)) ? -1         \
                                                                  : ((arr)[(n)++] = (value), 0))

#endif
