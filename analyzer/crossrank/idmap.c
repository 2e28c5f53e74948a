/* A small open-addressing map from uint64 keys to dense indices 0, 1, ...
 * in insertion order (communicator ids, host pairs). */
#include <stdlib.h>

#include "xr_internal.h"

/* ---- a small open-addressing map uint64 comm_id -> index ---- */
static size_t id_hash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static int idmap_grow(xr_idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->vals[i])
            continue;
        size_t h = id_hash(m->keys[i], cap);
        while (vals[h])
            h = (h + 1) & (cap - 1);
        keys[h] = m->keys[i];
        vals[h] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

/* Index of key, inserting it as the next index when new; -1 out of memory. */
int64_t xr_idmap_get(xr_idmap *m, uint64_t key, int insert)
{
    if (insert && (m->n + 1) * 2 > m->cap && idmap_grow(m))
        return -1;
    if (!m->cap)
        return -1;
    size_t h = id_hash(key, m->cap);
    while (m->vals[h]) {
        if (m->keys[h] == key)
            return m->vals[h] - 1;
        h = (h + 1) & (m->cap - 1);
    }
    if (!insert)
        return -1;
    m->keys[h] = key;
    m->vals[h] = (uint32_t)(++m->n);
    return (int64_t)m->n - 1;
}

void xr_idmap_free(xr_idmap *m)
{
    free(m->keys);
    free(m->vals);
}

