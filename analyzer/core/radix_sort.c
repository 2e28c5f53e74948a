#include "radix_sort.h"

#include <stdlib.h>
#include <string.h>

int tsa_radix_sort(tsa_sort_key *keys, size_t n)
{
    if (n < 2)
        return 0;
    tsa_sort_key *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    /* Flip the sign bit so that signed order is unsigned byte order. */
    const uint64_t flip = 1ull << 63;
    size_t (*count)[256] = calloc(8, sizeof *count);
    if (!count) {
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)keys[i].key ^ flip;
        for (int b = 0; b < 8; b++)
            count[b][(k >> (8 * b)) & 0xff]++;
    }
    tsa_sort_key *src = keys, *dst = tmp;
    for (int b = 0; b < 8; b++) {
        size_t *c = count[b];
        int constant = 0;
        for (int v = 0; v < 256; v++)
            if (c[v] == n)
                constant = 1;
        if (constant)
            continue;
        size_t pos = 0;
        for (int v = 0; v < 256; v++) {
            size_t cnt = c[v];
            c[v] = pos;
            pos += cnt;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = (uint64_t)src[i].key ^ flip;
            dst[c[(k >> (8 * b)) & 0xff]++] = src[i];
        }
        tsa_sort_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *keys);
    free(count);
    free(tmp);
    return 0;
}

/* Bottom-up merge of the sorted runs starts[0..r) (starts[r] == n). */
static int merge_runs(tsa_sort_key *keys, size_t n, size_t *starts, size_t r)
{
    tsa_sort_key *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    tsa_sort_key *src = keys, *dst = tmp;
    while (r > 1) {
        size_t w = 0;
        for (size_t i = 0; i < r; i += 2) {
            size_t a = starts[i], m = starts[i + 1];
            size_t b = i + 2 <= r ? starts[i + 2 < r ? i + 2 : r] : n;
            if (i + 1 >= r) {
                m = b = n;
                memcpy(dst + a, src + a, (n - a) * sizeof *src);
            } else {
                size_t x = a, y = m, o = a;
                while (x < m && y < b)
                    dst[o++] = src[y].key < src[x].key ? src[y++] : src[x++];
                while (x < m)
                    dst[o++] = src[x++];
                while (y < b)
                    dst[o++] = src[y++];
            }
            starts[w++] = a;
        }
        starts[w] = n;
        r = w;
        tsa_sort_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *keys);
    free(tmp);
    return 0;
}

int tsa_sort_keys(tsa_sort_key *keys, size_t n)
{
    enum { MAX_RUNS = 64 };
    size_t starts[MAX_RUNS + 1];
    size_t r = 0;
    starts[r++] = 0;
    for (size_t i = 1; i < n; i++)
        if (keys[i].key < keys[i - 1].key) {
            if (r == MAX_RUNS)
                return tsa_radix_sort(keys, n);
            starts[r++] = i;
        }
    if (r == 1)
        return 0;
    starts[r] = n;
    return merge_runs(keys, n, starts, r);
}
