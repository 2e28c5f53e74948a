#include <stdlib.h>

#include "u64_map.h"

static size_t slot(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)(k & (cap - 1));
}

static int grow(tsr_u64_map *m)
{
    tsr_u64_map g = {.cap = m->cap ? m->cap * 2 : 64};
    g.keys = malloc(g.cap * sizeof *g.keys);
    g.vals = malloc(g.cap * sizeof *g.vals);
    g.used = calloc(g.cap, 1);
    if (!g.keys || !g.vals || !g.used) {
        tsr_u64_map_free(&g);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            tsr_u64_map_put(&g, m->keys[i], m->vals[i]);
    tsr_u64_map_free(m);
    *m = g;
    return 0;
}

int tsr_u64_map_put(tsr_u64_map *m, uint64_t key, uint64_t val)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    size_t j = slot(key, m->cap);
    while (m->used[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->used[j]) {
        m->used[j] = 1;
        m->keys[j] = key;
        m->n++;
    }
    m->vals[j] = val;
    return 0;
}

int tsr_u64_map_get(const tsr_u64_map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return 0;
    for (size_t j = slot(key, m->cap); m->used[j]; j = (j + 1) & (m->cap - 1)) {
        if (m->keys[j] == key) {
            if (val)
                *val = m->vals[j];
            return 1;
        }
    }
    return 0;
}

void tsr_u64_map_free(tsr_u64_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
}
