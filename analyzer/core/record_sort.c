/* Stable sort of model records by start time: the keys are sorted apart
 * (run merge for the few sorted runs that per-thread chunks produce, radix
 * sort otherwise, radix_sort.c), then the records are gathered once into
 * a new array, sequentially written. */
#include "record_sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem_hint.h"
#include "radix_sort.h"

static int64_t start_of(const char *base, size_t i, size_t elem)
{
    int64_t v;
    memcpy(&v, base + i * elem, sizeof v);
    return v;
}

/* out[k] = base[keys[k].idx]; the model's record sizes get a copy of
 * constant size, which the compiler inlines (a memcpy call per record of
 * run-time size costs more than the copy). */
#define GATHER_CASE(size)                                                   \
    case size:                                                              \
        for (size_t k = 0; k < n; k++)                                      \
            memcpy(out + k * (size), base + keys[k].idx * (size), (size));  \
        break;

static void gather(char *out, const char *base, const tsa_sort_key *keys, size_t n,
                   size_t elem)
{
    switch (elem) {
    GATHER_CASE(16) GATHER_CASE(24) GATHER_CASE(32) GATHER_CASE(40)
    GATHER_CASE(48) GATHER_CASE(56) GATHER_CASE(64) GATHER_CASE(72)
    GATHER_CASE(80) GATHER_CASE(88) GATHER_CASE(96)
    default:
        for (size_t k = 0; k < n; k++)
            memcpy(out + k * elem, base + keys[k].idx * elem, elem);
        break;
    }
}

int tsa_sort_records(void **arr, size_t *cap, size_t n, size_t elem, size_t **perm_out)
{
    if (perm_out)
        *perm_out = NULL;
    const char *base = *arr;
    size_t i = 1;
    while (i < n && start_of(base, i - 1, elem) <= start_of(base, i, elem))
        i++;
    if (i >= n)
        return 0;
    tsa_sort_key *keys = malloc(n * sizeof *keys);
    char *out = malloc(n * elem);
    size_t *perm = perm_out ? malloc(n * sizeof *perm) : NULL;
    if (!keys || !out || (perm_out && !perm))
        goto oom;
    tsa_hint_huge(out, n * elem);
    for (size_t k = 0; k < n; k++) {
        keys[k].key = start_of(base, k, elem);
        keys[k].idx = k;
    }
    if (tsa_sort_keys(keys, n))
        goto oom;
    gather(out, base, keys, n, elem);
    if (perm)
        for (size_t k = 0; k < n; k++)
            perm[keys[k].idx] = k;
    free(keys);
    free(*arr);
    *arr = out;
    *cap = n;
    if (perm_out)
        *perm_out = perm;
    return 0;
oom:
    free(keys);
    free(out);
    free(perm);
    return -1;
}
