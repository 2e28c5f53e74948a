#include "intern.h"

#include <string.h>

uint64_t tsc_intern_hash(uint8_t type, const void *payload, uint16_t len)
{
    /* Eight bytes per step: this runs on every recorded call (a 64-byte
     * NCCL signature is 8 multiplies), so byte-wise FNV would be too slow. */
    const unsigned char *p = payload;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)type << 56) ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, p, len);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 29;
    return h;
}

void tsc_intern_reset(tsc_intern *t)
{
    memset(t->e, 0, sizeof t->e);
    memset(t->recent, 0, sizeof t->recent);
    memset(t->recent_next, 0, sizeof t->recent_next);
    t->recent_pos = 0;
    t->recent_last = 0;
    t->used = 0;
    t->arena_used = 0;
    t->resets++;
}

/* Index of the entry for (type, payload), or -1. */
static int64_t find_index(const tsc_intern *t, uint8_t type, const void *payload,
                          uint16_t len, uint64_t hash)
{
    uint32_t mask = TSC_INTERN_SLOTS - 1;
    for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
        const tsc_intern_entry *e = &t->e[i];
        if (!e->id)
            return -1; /* the load bound guarantees an empty slot */
        if (e->hash == hash && tsc_intern_entry_matches(t, e, type, payload, len))
            return i;
    }
}

uint32_t tsc_intern_find(const tsc_intern *t, uint8_t type, const void *payload,
                         uint16_t len, uint64_t hash)
{
    int64_t i = find_index(t, type, payload, len, hash);
    return i < 0 ? 0 : t->e[i].id;
}

/* Entry `index` was just looked up in the table (or inserted): keep it
 * among the recent ones, predicted to follow the one looked up before it.
 * Recent entries always point at live entries: only a wipe empties a
 * slot, and it clears them too. */
static void remember_recent(tsc_intern *t, uint32_t index)
{
    uint32_t p = TSC_INTERN_RECENT;
    for (uint32_t k = 0; k < TSC_INTERN_RECENT; k++)
        if (t->recent[k] == index + 1) {
            p = k;
            break;
        }
    if (p == TSC_INTERN_RECENT) {
        p = t->recent_pos = (t->recent_pos + 1) % TSC_INTERN_RECENT;
        t->recent[p] = index + 1;
    }
    t->recent_next[t->recent_last] = (uint8_t)p;
    t->recent_last = p;
}

uint32_t tsc_intern_lookup_hashed(tsc_intern *t, uint8_t type, const void *payload,
                                  uint16_t len, uint64_t *hash)
{
    uint64_t h = tsc_intern_hash(type, payload, len);
    *hash = h;
    int64_t i = find_index(t, type, payload, len, h);
    if (i < 0)
        return 0;
    remember_recent(t, (uint32_t)i);
    return t->e[i].id;
}

int tsc_intern_insert(tsc_intern *t, uint8_t type, const void *payload, uint16_t len,
                      uint64_t hash, uint32_t id)
{
    if (id == 0)
        return -1; /* a uint16_t length always fits the empty arena */
    int wiped = 0;
    if (t->used >= TSC_INTERN_MAX_USED || t->arena_used + len > TSC_INTERN_ARENA) {
        tsc_intern_reset(t);
        wiped = 1;
    }
    uint32_t mask = TSC_INTERN_SLOTS - 1;
    uint32_t i = (uint32_t)hash & mask;
    while (t->e[i].id)
        i = (i + 1) & mask;
    tsc_intern_entry *e = &t->e[i];
    e->hash = hash;
    e->id = id;
    e->off = t->arena_used;
    e->len = len;
    e->type = type;
    memcpy(t->arena + t->arena_used, payload, len);
    t->arena_used += len;
    t->used++;
    remember_recent(t, i);
    return wiped;
}
