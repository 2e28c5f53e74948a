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
    t->used = 0;
    t->arena_used = 0;
    t->resets++;
}

uint32_t tsc_intern_find(const tsc_intern *t, uint8_t type, const void *payload,
                         uint16_t len, uint64_t hash)
{
    uint32_t mask = TSC_INTERN_SLOTS - 1;
    for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
        const tsc_intern_entry *e = &t->e[i];
        if (!e->id)
            return 0; /* the load bound guarantees an empty slot */
        if (e->hash == hash && e->type == type && e->len == len &&
            !memcmp(t->arena + e->off, payload, len))
            return e->id;
    }
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
    return wiped;
}
