/* A small open-addressing map from 64-bit keys to 64-bit values, for the
 * joins the dump command makes (correlation id -> NCCL op). */
#ifndef TSR_U64_MAP_H
#define TSR_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsr_u64_map {
    uint64_t *keys, *vals;
    uint8_t *used;
    size_t cap, n;
} tsr_u64_map;

/* Insert or replace; 0, or -1 when out of memory. */
int tsr_u64_map_put(tsr_u64_map *m, uint64_t key, uint64_t val);
/* 1 and *val when present, else 0. */
int tsr_u64_map_get(const tsr_u64_map *m, uint64_t key, uint64_t *val);
void tsr_u64_map_free(tsr_u64_map *m);

#endif
