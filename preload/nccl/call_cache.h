/* The descriptors of a thread's recent NCCL calls, keyed by the arguments
 * as the application passed them.
 *
 * A training step repeats the same few calls (one per gradient bucket),
 * so describing each call from scratch (a 64-byte descriptor, the
 * communicator's registry lookup, interning it by content) is wasted work
 * after the first step.  A hit here gives the descriptor id and the
 * communicator's entry from a comparison of four words.
 *
 * An entry holds only while the recorder's stamp for this thread is the
 * one it was made under (descriptor ids of the thread are wiped when its
 * table fills, a dump generation changes, a process forks) and while the
 * communicator's registry entry still holds that communicator with that
 * identity (destroyed and re-created at the same address, it would not).
 */
#ifndef TSC_CALL_CACHE_H
#define TSC_CALL_CACHE_H

#include <stdint.h>

#include "comm_registry.h"

/* shape: op | dtype << 8 | redop << 16 | group depth << 24 | peer << 32,
 * each as the descriptor records it (tsc_call_shape). */
typedef struct tsc_call_key {
    uint64_t count;
    uintptr_t comm;
    uintptr_t stream;
    uint64_t shape;
} tsc_call_key;

typedef struct tsc_call_entry {
    _Alignas(64) tsc_call_key key;
    uint64_t stamp;          /* 0: empty */
    tsc_comm_info *info;     /* never NULL in a filled entry */
    uint64_t comm_id;
    uint32_t desc;
} tsc_call_entry;

#define TSC_CALL_CACHE_WAYS 16u   /* power of two */

static inline uint64_t tsc_call_shape(uint8_t op, uint8_t dtype, uint8_t redop, uint8_t depth,
                                      int32_t peer)
{
    return (uint64_t)op | (uint64_t)dtype << 8 | (uint64_t)redop << 16 |
           (uint64_t)depth << 24 | (uint64_t)(uint32_t)peer << 32;
}

static inline tsc_call_entry *tsc_call_slot(tsc_call_entry *ways, const tsc_call_key *k)
{
    uint64_t h = (k->count ^ (uint64_t)k->comm ^ k->shape) * 0x9e3779b97f4a7c15ull;
    return &ways[h >> 60 & (TSC_CALL_CACHE_WAYS - 1)];
}

/* Whether e still answers for key under stamp. */
static inline int tsc_call_hit(const tsc_call_entry *e, const tsc_call_key *key, uint64_t stamp)
{
    return e->stamp == stamp && e->key.count == key->count && e->key.comm == key->comm &&
           e->key.stream == key->stream && e->key.shape == key->shape &&
           atomic_load_explicit(&e->info->key, memory_order_relaxed) == key->comm &&
           e->info->comm_id == e->comm_id;
}

#endif
