/* Per-thread descriptor interning: (type, payload bytes) -> descriptor id.
 * Owned by one thread, so no locking.  Bounded: a small open-addressing
 * table and a byte arena; when either is full the table is wiped and the
 * descriptors are defined again under new ids as they recur, which keeps
 * memory fixed however many distinct signatures a job produces. */
#ifndef TSC_INTERN_H
#define TSC_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define TSC_INTERN_SLOTS 1024u        /* power of two */
#define TSC_INTERN_MAX_USED 768u      /* 75% load, then reset */
#define TSC_INTERN_ARENA (64u << 10)  /* payload bytes kept for comparison */

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

#endif
