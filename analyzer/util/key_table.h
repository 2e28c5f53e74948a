/* Distinct fixed-size keys, each numbered in the order first met: the
 * dictionaries of the compact stores (a rank's call shapes, its GEMM
 * kinds) and the (communicator, seq) keys of the arrivals.  Keys are
 * compared as bytes, so a caller zeroes a struct key's padding. */
#ifndef TSA_KEY_TABLE_H
#define TSA_KEY_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsa_key_table {
    size_t size;            /* bytes a key */
    unsigned char *keys;    /* n keys, in the order first met */
    size_t n, cap;
    uint32_t *slots;        /* open addressing: key index + 1, 0 empty */
    size_t n_slots;
} tsa_key_table;

void tsa_key_table_init(tsa_key_table *t, size_t key_size);
/* The number of key (added when new); -1 when out of memory or past
 * UINT32_MAX - 1 keys. */
int64_t tsa_key_table_put(tsa_key_table *t, const void *key);
static inline const void *tsa_key_table_at(const tsa_key_table *t, size_t i)
{
    return t->keys + i * t->size;
}
/* Frees the hash slots only: the keys (t->keys) stay, to be taken. */
void tsa_key_table_drop_index(tsa_key_table *t);
void tsa_key_table_free(tsa_key_table *t);

#endif
