/* Stable LSD radix sort of (int64 key, index) pairs, for sorting millions
 * of records by start time in linear time.  Byte positions on which every
 * key agrees (the high bytes of nearby timestamps) are skipped, so a
 * typical run takes four or five passes. */
#ifndef TSA_RADIX_SORT_H
#define TSA_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsa_sort_key {
    int64_t key;
    size_t idx;
} tsa_sort_key;

/* Sorts keys[0..n) by key, ties in input order.  -1 on OOM (unsorted). */
int tsa_radix_sort(tsa_sort_key *keys, size_t n);

/* The same, choosing the method: arrays made of a few sorted runs (one per
 * producing thread's chunk) are merged run by run; arrays interleaving a
 * few sorted streams are split into them and merged; others radix sorted. */
int tsa_sort_keys(tsa_sort_key *keys, size_t n);

#endif
