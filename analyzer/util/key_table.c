/* Distinct fixed-size keys (key_table.h). */
#include "key_table.h"

#include <stdlib.h>
#include <string.h>


void tsa_key_table_init(tsa_key_table *t, size_t key_size)
{
    memset(t, 0, sizeof *t);
    t->size = key_size;
}

/* A word at a time (keys are tens of bytes, hashed once per call of a
 * large job): multiply-xorshift mixing, the tail bytewise. */
static size_t slot_of(const tsa_key_table *t, const void *key)
{
    const unsigned char *k = key;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ t->size;
    size_t i = 0;
    for (; i + 8 <= t->size; i += 8) {
        uint64_t w;
        memcpy(&w, k + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < t->size; i++)
        h = (h ^ k[i]) * 0x100000001b3ull;
    h ^= h >> 29;
    return (size_t)h & (t->n_slots - 1);
}

static int grow_slots(tsa_key_table *t)
{
    size_t n = t->n_slots ? t->n_slots * 2 : 64;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    free(t->slots);
    t->slots = s;
    t->n_slots = n;
    for (size_t i = 0; i < t->n; i++) {
        size_t h = slot_of(t, tsa_key_table_at(t, i));
        while (s[h])
            h = (h + 1) & (n - 1);
        s[h] = (uint32_t)(i + 1);
    }
    return 0;
}

int64_t tsa_key_table_put(tsa_key_table *t, const void *key)
{
    if ((t->n + 1) * 2 > t->n_slots && (t->n >= UINT32_MAX - 1 || grow_slots(t)))
        return -1;
    size_t h = slot_of(t, key);
    while (t->slots[h]) {
        size_t i = t->slots[h] - 1;
        if (!memcmp(tsa_key_table_at(t, i), key, t->size))
            return (int64_t)i;
        h = (h + 1) & (t->n_slots - 1);
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        unsigned char *k = realloc(t->keys, cap * t->size);
        if (!k)
            return -1;
        t->keys = k;
        t->cap = cap;
    }
    memcpy(t->keys + t->n * t->size, key, t->size);
    t->slots[h] = (uint32_t)(t->n + 1);
    return (int64_t)t->n++;
}

void tsa_key_table_drop_index(tsa_key_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->n_slots = 0;
}

void tsa_key_table_free(tsa_key_table *t)
{
    free(t->keys);
    tsa_key_table_drop_index(t);
    memset(t, 0, sizeof *t);
}
