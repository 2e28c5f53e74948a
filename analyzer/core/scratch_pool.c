/* Scratch buffer pool (scratch_pool.h). */
#include "scratch_pool.h"

#include <stdlib.h>

#include "mem_hint.h"

enum { KEPT_MAX = 8 };
#define MIN_KEPT ((size_t)1 << 20)

static struct {
    int open;
    void *p[KEPT_MAX];
    size_t size[KEPT_MAX];
    size_t n;
} pool;

void tsa_scratch_open(void)
{
    pool.open = 1;
}

void tsa_scratch_close(void)
{
    for (size_t i = 0; i < pool.n; i++)
        free(pool.p[i]);
    pool.n = 0;
    pool.open = 0;
}

void *tsa_scratch_take(size_t bytes, size_t *got)
{
    size_t best = pool.n;
    for (size_t i = 0; i < pool.n; i++)
        if (pool.size[i] >= bytes && (best == pool.n || pool.size[i] < pool.size[best]))
            best = i;
    if (best < pool.n) {
        void *p = pool.p[best];
        if (got)
            *got = pool.size[best];
        pool.n--;
        pool.p[best] = pool.p[pool.n];
        pool.size[best] = pool.size[pool.n];
        return p;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (p && got)
        *got = bytes;
    tsa_hint_huge(p, bytes);
    return p;
}

void tsa_scratch_give(void *p, size_t bytes)
{
    if (!p)
        return;
    if (!pool.open || bytes < MIN_KEPT) {
        free(p);
        return;
    }
    if (pool.n == KEPT_MAX) {
        /* Full: the smallest of the kept buffers and p goes. */
        size_t small = 0;
        for (size_t i = 1; i < pool.n; i++)
            if (pool.size[i] < pool.size[small])
                small = i;
        if (pool.size[small] >= bytes) {
            free(p);
            return;
        }
        free(pool.p[small]);
        pool.p[small] = p;
        pool.size[small] = bytes;
        return;
    }
    pool.p[pool.n] = p;
    pool.size[pool.n] = bytes;
    pool.n++;
}
