/* A flat byte buffer for what tscope-report-mpi processes send each other
 * (share_pack.h, stage_pack.h): values appended in a fixed order, read back
 * in the same order through a bounds-checked cursor. */
#ifndef TSA_PACK_BUF_H
#define TSA_PACK_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsa_pack_buf {
    unsigned char *data;
    size_t len, cap;
} tsa_pack_buf;

void tsa_pack_buf_free(tsa_pack_buf *b);

/* Each appends; 0, or -1 on OOM.  Strings may be NULL. */
int tsa_put(tsa_pack_buf *b, const void *p, size_t n);
int tsa_put_u64(tsa_pack_buf *b, uint64_t v);
int tsa_put_str(tsa_pack_buf *b, const char *s);
/* An array as its count and bytes. */
int tsa_put_arr(tsa_pack_buf *b, const void *p, size_t n, size_t elem);

typedef struct tsa_cursor {
    const unsigned char *p;
    size_t left;
    int bad;                   /* short or malformed input, or OOM */
} tsa_cursor;

/* NULL (and c->bad set) when fewer than n bytes are left. */
const void *tsa_take(tsa_cursor *c, size_t n);
/* n bytes into dst (zeros on failure). */
void tsa_get(tsa_cursor *c, void *dst, size_t n);
uint64_t tsa_get_u64(tsa_cursor *c);
/* A malloc'd copy, NULL for an absent string (and on failure, c->bad set). */
char *tsa_get_str(tsa_cursor *c);
/* A malloc'd copy of n elements (NULL for none); *n receives the count. */
void *tsa_get_arr(tsa_cursor *c, size_t *n, size_t elem);

#endif
