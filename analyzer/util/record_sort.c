/* Stable sort of model records by start time.  Records usually arrive
 * nearly in order (a kernel a few places late behind the other stream's),
 * so they are first fixed in place by insertion: no second copy of the
 * array and no sort keys.  When that would move too much (several long
 * sorted runs: one per producing thread's chunk), the keys are sorted
 * apart (run merge or radix sort, radix_sort.c) and the records gathered
 * once into a new array, sequentially written. */
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

/* Insertion fix-up limits: a record moves back at most MAX_SHIFT places
 * (a memmove within the cache) and all moves together shift at most
 * n / 2 + 64 records; beyond that the gather sort below is cheaper.  The
 * generated jobs' kernels (a communication kernel every few hundred,
 * written up to ~60 places late) shift about n / 8 in all. */
enum { MAX_SHIFT = 256, MAX_ELEM = 256 };

/* Sorts base[0..n) in place by insertion from `from` (the first record
 * below its predecessor), stable: a record moves back only past larger
 * keys.  inv, when given, gets the same moves (inv[p] = the input index
 * of the record now at p; filled with the identity here on the first
 * move).  Returns 0 sorted, 1 gave up (the array is still a stable
 * rearrangement of the input, so any stable sort of it gives the stable
 * sort of the input), -1 out of memory (nothing moved). */
static int fix_in_place(char *base, size_t n, size_t elem, size_t from, size_t **inv)
{
    if (elem > MAX_ELEM)
        return 1;
    size_t budget = n / 2 + 64;
    char tmp[MAX_ELEM];
    for (size_t i = from; i < n; i++) {
        int64_t key = start_of(base, i, elem);
        if (start_of(base, i - 1, elem) <= key)
            continue;
        size_t j = i - 1;
        while (j > 0 && i - j < MAX_SHIFT && start_of(base, j - 1, elem) > key)
            j--;
        if ((j > 0 && start_of(base, j - 1, elem) > key) || i - j > budget)
            return 1;
        budget -= i - j;
        if (inv && !*inv) {
            *inv = malloc(n * sizeof **inv);
            if (!*inv)
                return -1;
            for (size_t k = 0; k < n; k++)
                (*inv)[k] = k;
        }
        memcpy(tmp, base + i * elem, elem);
        memmove(base + (j + 1) * elem, base + j * elem, (i - j) * elem);
        memcpy(base + j * elem, tmp, elem);
        if (inv) {
            size_t origin = (*inv)[i];
            memmove(*inv + j + 1, *inv + j, (i - j) * sizeof **inv);
            (*inv)[j] = origin;
        }
    }
    return 0;
}

/* a[p] = origin of position p  ->  a[origin] = p, following each cycle
 * once (the top bit marks entries already written; n < 2^63). */
static size_t *invert_in_place(size_t *a, size_t n)
{
    const size_t done = (size_t)1 << (sizeof(size_t) * 8 - 1);
    for (size_t i = 0; i < n; i++) {
        if (a[i] & done)
            continue;
        size_t p = i, o = a[i];
        do {
            size_t next = a[o];
            a[o] = p | done;
            p = o;
            o = next;
        } while (p != i);
    }
    for (size_t i = 0; i < n; i++)
        a[i] &= ~done;
    return a;
}

int tsa_sort_records(void **arr, size_t *cap, size_t n, size_t elem, size_t **perm_out)
{
    if (perm_out)
        *perm_out = NULL;
    char *base = *arr;
    size_t i = 1;
    while (i < n && start_of(base, i - 1, elem) <= start_of(base, i, elem))
        i++;
    if (i >= n)
        return 0;
    size_t *inv = NULL; /* input index of each position after the fix-up */
    int fixed = fix_in_place(base, n, elem, i, perm_out ? &inv : NULL);
    if (fixed < 0)
        return -1;
    if (fixed == 0) {
        if (perm_out)
            *perm_out = inv ? invert_in_place(inv, n) : NULL;
        return 0;
    }
    size_t *perm = NULL;
    if (perm_out) {
        perm = malloc(n * sizeof *perm);
        if (!perm)
            goto oom;
    }
    tsa_sort_key *keys = malloc(n * sizeof *keys);
    char *out = malloc(n * elem);
    if (!keys || !out) {
        free(keys);
        free(out);
        goto oom;
    }
    tsa_hint_huge(out, n * elem);
    for (size_t k = 0; k < n; k++) {
        keys[k].key = start_of(base, k, elem);
        keys[k].idx = k;
    }
    if (tsa_sort_keys(keys, n)) {
        free(keys);
        free(out);
        goto oom;
    }
    gather(out, base, keys, n, elem);
    if (perm)
        for (size_t k = 0; k < n; k++)
            perm[inv ? inv[keys[k].idx] : keys[k].idx] = k;
    free(keys);
    free(inv);
    free(*arr);
    *arr = out;
    *cap = n;
    if (perm_out)
        *perm_out = perm;
    return 0;
oom:
    /* Records may have moved in place: the array is a stable partial sort,
     * but links into it would be stale, so the caller must give up. */
    free(inv);
    free(perm);
    return -1;
}
