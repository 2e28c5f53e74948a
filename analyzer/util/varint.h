/* Variable-length integers for the compact stores of a large job (a lean
 * rank's calls and steps, the cross-rank pass's members): 7 bits a byte,
 * low bits first, and signed values zig-zagged so that small differences
 * of either sign take one or two bytes.  Differences are taken modulo 2^64
 * (tsa_wrap_sub), so every int64 round-trips, garbage included. */
#ifndef TSA_VARINT_H
#define TSA_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "vec.h"

static inline uint64_t tsa_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t tsa_unzigzag(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

/* a - b and b + d modulo 2^64: no overflow whatever the values. */
static inline int64_t tsa_wrap_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static inline int64_t tsa_wrap_add(int64_t b, int64_t d)
{
    return (int64_t)((uint64_t)b + (uint64_t)d);
}

/* A growable byte string. */
typedef struct tsa_bytes {
    unsigned char *p;
    size_t len, cap;
} tsa_bytes;

/* Room for n (> 0) more bytes; 0, or -1 when out of memory. */
static inline int tsa_bytes_room(tsa_bytes *b, size_t n)
{
    if (b->cap - b->len >= n)
        return 0;
    return n > SIZE_MAX - b->len ? -1 : tsa_vec_reserve((void **)&b->p, &b->cap, b->len + n - 1, 1);
}

/* Appends v; 0, or -1 when out of memory. */
static inline int tsa_bytes_varint(tsa_bytes *b, uint64_t v)
{
    if (tsa_bytes_room(b, 10))
        return -1;
    while (v >= 0x80) {
        b->p[b->len++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (unsigned char)v;
    return 0;
}

static inline int tsa_bytes_svarint(tsa_bytes *b, int64_t v)
{
    return tsa_bytes_varint(b, tsa_zigzag(v));
}

/* Gives the buffer's unused tail back; the bytes stay valid. */
static inline void tsa_bytes_shrink(tsa_bytes *b)
{
    if (b->len && b->len < b->cap) {
        unsigned char *p = realloc(b->p, b->len);
        if (p) {
            b->p = p;
            b->cap = b->len;
        }
    }
}

/* Reads one value at *p (not past end), advancing *p; 0, or -1 when the
 * bytes end first or run over 10 (a damaged store). */
static inline int tsa_varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    if (*p < end && !(**p & 0x80)) {   /* one byte: the usual case */
        *v = *(*p)++;
        return 0;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70 && *p < end; shift += 7) {
        unsigned char c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    *v = 0;
    return -1;
}

static inline int tsa_svarint_get(const unsigned char **p, const unsigned char *end, int64_t *v)
{
    uint64_t u;
    int rc = tsa_varint_get(p, end, &u);
    *v = tsa_unzigzag(u);
    return rc;
}

#endif
