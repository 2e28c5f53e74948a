/* FNV-1a 64 over bytes, from a given start value. */
#ifndef TSA_HASH_H
#define TSA_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t tsa_fnv1a_from(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The standard FNV-1a 64: the batch's shard of a job, whose value must
 * never change (it decides which shard analyses a job; pinned by
 * tests/kineto/test_batch_shard.c). */
static inline uint64_t tsa_fnv1a(const char *s, size_t len)
{
    return tsa_fnv1a_from(0xcbf29ce484222325ull, s, len);
}

/* The names' hash of the model builders (string interning, the Kineto
 * importer's communicator ids): FNV-1a from another start value, kept as
 * it always was because communicator ids in outputs derive from it. */
static inline uint64_t tsa_name_hash(const char *s, size_t len)
{
    return tsa_fnv1a_from(1469598103934665603ull, s, len);
}

#endif
