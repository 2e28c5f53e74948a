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

/* Arrays interleaving a few sorted streams (one per GPU stream, say) have
 * many short runs but split into a few non-decreasing subsequences
 * ("lanes"): each key joins the lane whose last key is the largest not
 * above it.  The lanes are then merged, ties going to the key that came
 * first.  Returns 0 sorted, 1 when more than MAX_LANES are needed (keys
 * untouched), -1 on OOM. */
enum { MAX_LANES = 8 };

static int merge_lanes(tsa_sort_key *keys, size_t n)
{
    uint8_t *lane = malloc(n);
    if (!lane)
        return -1;
    int64_t last[MAX_LANES];
    size_t cnt[MAX_LANES];
    size_t nl = 0, top = 0; /* top: the lane with the largest last key */
    for (size_t i = 0; i < n; i++) {
        int64_t key = keys[i].key;
        size_t best = MAX_LANES;
        if (nl && last[top] <= key) {
            best = top;
        } else {
            for (size_t l = 0; l < nl; l++)
                if (last[l] <= key && (best == MAX_LANES || last[l] > last[best]))
                    best = l;
            if (best == MAX_LANES) {
                if (nl == MAX_LANES) {
                    free(lane);
                    return 1;
                }
                best = nl++;
                cnt[best] = 0;
            }
        }
        last[best] = key;
        cnt[best]++;
        lane[i] = (uint8_t)best;
        if (key >= last[top])
            top = best;
    }
    tsa_sort_key *tmp = malloc(n * sizeof *tmp);
    size_t *pos = malloc(n * sizeof *pos);
    if (!tmp || !pos) {
        free(lane);
        free(tmp);
        free(pos);
        return -1;
    }
    size_t head[MAX_LANES], end[MAX_LANES];
    for (size_t l = 0, o = 0; l < nl; l++) {
        head[l] = o;
        o += cnt[l];
        end[l] = head[l];
    }
    for (size_t i = 0; i < n; i++) {
        size_t o = end[lane[i]]++;
        tmp[o] = keys[i];
        pos[o] = i;
    }
    free(lane);
    for (size_t k = 0; k < n; k++) {
        size_t b = MAX_LANES;
        for (size_t l = 0; l < nl; l++) {
            if (head[l] == end[l])
                continue;
            if (b == MAX_LANES || tmp[head[l]].key < tmp[head[b]].key ||
                (tmp[head[l]].key == tmp[head[b]].key && pos[head[l]] < pos[head[b]]))
                b = l;
        }
        keys[k] = tmp[head[b]++];
    }
    free(tmp);
    free(pos);
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
            if (r == MAX_RUNS) {
                int rc = merge_lanes(keys, n);
                return rc == 1 ? tsa_radix_sort(keys, n) : rc;
            }
            starts[r++] = i;
        }
    if (r == 1)
        return 0;
    starts[r] = n;
    return merge_runs(keys, n, starts, r);
}
