#include "comm_id.h"

#include <string.h>

/* A 64-bit FNV-1a then a final avalanche: unique ids are random bytes, so
 * the only requirement is determinism across processes and machines (no
 * seed, explicit byte order) and a negligible collision rate. */
static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t mix_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i)); /* little-endian on any host */
    return mix_bytes(h, b, 8);
}

static uint64_t finish(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h ? h : 1; /* 0 means "no communicator" in the dump */
}

#define SEED 0xcbf29ce484222325ull

uint64_t tsc_comm_id_from_unique_ids(const void *ids, size_t n, size_t id_bytes)
{
    uint64_t h = mix_bytes(SEED, "init", 4);
    h = mix_u64(h, n);
    return finish(mix_bytes(h, ids, n * id_bytes));
}

uint64_t tsc_comm_id_split(uint64_t parent, uint64_t split_index, int color)
{
    uint64_t h = mix_bytes(SEED, "split", 5);
    h = mix_u64(h, parent);
    h = mix_u64(h, split_index);
    return finish(mix_u64(h, (uint64_t)(int64_t)color));
}

uint64_t tsc_comm_id_shrink(uint64_t parent, uint64_t shrink_index)
{
    uint64_t h = mix_bytes(SEED, "shrink", 6);
    h = mix_u64(h, parent);
    return finish(mix_u64(h, shrink_index));
}

uint64_t tsc_comm_id_local(const char *host, uint32_t pid, uint64_t counter)
{
    uint64_t h = mix_bytes(SEED, "local", 5);
    h = mix_bytes(h, host ? host : "", host ? strlen(host) + 1 : 1);
    h = mix_u64(h, pid);
    return finish(mix_u64(h, counter));
}
