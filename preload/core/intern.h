/* Per-thread descriptor interning: (type, payload bytes) -> descriptor id.
 * Owned by one thread, so no locking.  Bounded: a small open-addressing
 * table and a byte arena; when either is full the table is wiped and the
 * descriptors are defined again under new ids as they recur, which keeps
 * memory fixed however many distinct signatures a job produces. */
#ifndef TSC_INTERN_H
#define TSC_INTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TSC_INTERN_SLOTS 1024u        /* power of two */
#define TSC_INTERN_MAX_USED 768u      /* 75% load, then reset */
#define TSC_INTERN_ARENA (64u << 10)  /* payload bytes kept for comparison */
#define TSC_INTERN_RECENT 16u         /* recently used entries followed */

typedef struct tsc_intern_entry {
    uint64_t hash;
    uint32_t id;        /* 0: empty */
    uint32_t off;       /* payload offset in the arena */
    uint16_t len;
    uint8_t type;
    uint8_t pad[5];
} tsc_intern_entry;

typedef struct tsc_intern {
    uint32_t used;
    uint32_t arena_used;
    uint64_t resets;
    /* The entries looked up last (index + 1, 0: none), replaced
     * round-robin at recent_pos.  recent_next[p] is the position looked up
     * right after position p the last time, recent_last the last one: a
     * job repeating one signature, or cycling through up to
     * TSC_INTERN_RECENT of them (gradient buckets), finds each with one
     * comparison of the payload instead of hashing it. */
    uint32_t recent[TSC_INTERN_RECENT];
    uint8_t recent_next[TSC_INTERN_RECENT];
    uint32_t recent_pos;
    uint32_t recent_last;
    tsc_intern_entry e[TSC_INTERN_SLOTS];
    unsigned char arena[TSC_INTERN_ARENA];
} tsc_intern;

uint64_t tsc_intern_hash(uint8_t type, const void *payload, uint16_t len);
void tsc_intern_reset(tsc_intern *t);
/* 0 when not interned. */
uint32_t tsc_intern_find(const tsc_intern *t, uint8_t type, const void *payload,
                         uint16_t len, uint64_t hash);
/* Remembers (type, payload) -> id, wiping the table first when full.
 * Returns 1 when it wiped the table, 0 otherwise, -1 when the payload can
 * never fit (then nothing is remembered). */
int tsc_intern_insert(tsc_intern *t, uint8_t type, const void *payload, uint16_t len,
                      uint64_t hash, uint32_t id);

/* The hash-table half of tsc_intern_lookup: 0 when not interned, and
 * *hash is the payload's hash either way. */
uint32_t tsc_intern_lookup_hashed(tsc_intern *t, uint8_t type, const void *payload,
                                  uint16_t len, uint64_t *hash);

/* Equal bytes, a word at a time.  NCCL signatures, the common payload,
 * are 64 bytes: compared without branches (vectorised where the compiler
 * can). */
static inline int tsc_intern_same_bytes(const unsigned char *a, const unsigned char *b,
                                        uint16_t len)
{
    if (len == 64) {
        uint64_t diff = 0;
        for (int i = 0; i < 64; i += 8) {
            uint64_t x, y;
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            diff |= x ^ y;
        }
        return diff == 0;
    }
    for (; len >= 8; a += 8, b += 8, len -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return 0;
    }
    unsigned diff = 0;
    for (; len; len--)
        diff |= (unsigned)(*a++ ^ *b++);
    return diff == 0;
}

static inline int tsc_intern_entry_matches(const tsc_intern *t, const tsc_intern_entry *e,
                                           uint8_t type, const void *payload, uint16_t len)
{
    return e->type == type && e->len == len &&
           tsc_intern_same_bytes(t->arena + e->off, payload, len);
}

/* The id of the entry at recent position p when it holds (type, payload),
 * else 0. */
static inline uint32_t tsc_intern_recent_id(const tsc_intern *t, uint32_t p, uint8_t type,
                                            const void *payload, uint16_t len)
{
    uint32_t r = t->recent[p];
    if (!r)
        return 0;
    const tsc_intern_entry *e = &t->e[r - 1];
    return e->id && tsc_intern_entry_matches(t, e, type, payload, len) ? e->id : 0;
}

/* The recorder's lookup: the entry predicted to come next (inline, one
 * comparison, no hashing), then the hash table.  0 when not interned;
 * then *hash holds the payload's hash for tsc_intern_insert.  Same answer
 * as tsc_intern_find, only faster on a repeated pattern. */
static inline uint32_t tsc_intern_lookup(tsc_intern *t, uint8_t type, const void *payload,
                                         uint16_t len, uint64_t *hash)
{
    uint32_t p = t->recent_next[t->recent_last];
    uint32_t id = tsc_intern_recent_id(t, p, type, payload, len);
    if (__builtin_expect(id != 0, 1)) {
        t->recent_last = p;
        return id;
    }
    return tsc_intern_lookup_hashed(t, type, payload, len, hash);
}

#endif
