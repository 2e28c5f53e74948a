/* The pack buffer and its cursor (pack_buf.h). */
#include "pack_buf.h"

#include <stdlib.h>
#include <string.h>


#define NO_STRING UINT64_MAX

int tsa_put(tsa_pack_buf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        unsigned char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int tsa_put_u64(tsa_pack_buf *b, uint64_t v) { return tsa_put(b, &v, sizeof v); }

int tsa_put_str(tsa_pack_buf *b, const char *s)
{
    if (!s)
        return tsa_put_u64(b, NO_STRING);
    size_t n = strlen(s);
    return tsa_put_u64(b, n) || tsa_put(b, s, n);
}

int tsa_put_arr(tsa_pack_buf *b, const void *p, size_t n, size_t elem)
{
    return tsa_put_u64(b, n) || tsa_put(b, p, n * elem);
}

void tsa_pack_buf_free(tsa_pack_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

const void *tsa_take(tsa_cursor *c, size_t n)
{
    if (c->bad || n > c->left) {
        c->bad = 1;
        return NULL;
    }
    const void *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

void tsa_get(tsa_cursor *c, void *dst, size_t n)
{
    const void *p = tsa_take(c, n);
    if (p)
        memcpy(dst, p, n);
    else
        memset(dst, 0, n);
}

uint64_t tsa_get_u64(tsa_cursor *c)
{
    uint64_t v = 0;
    const void *p = tsa_take(c, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

char *tsa_get_str(tsa_cursor *c)
{
    uint64_t n = tsa_get_u64(c);
    if (c->bad || n == NO_STRING)
        return NULL;
    const char *s = tsa_take(c, (size_t)n);
    if (!s || n != (size_t)n)
        return c->bad = 1, NULL;
    char *copy = malloc((size_t)n + 1);
    if (!copy)
        return c->bad = 1, NULL;
    memcpy(copy, s, (size_t)n);
    copy[n] = 0;
    return copy;
}

void *tsa_get_arr(tsa_cursor *c, size_t *n, size_t elem)
{
    uint64_t count = tsa_get_u64(c);
    *n = 0;
    if (c->bad || count == 0)
        return NULL;
    if (count > c->left / elem) {
        c->bad = 1;
        return NULL;
    }
    const void *src = tsa_take(c, (size_t)count * elem);
    void *dst = src ? malloc((size_t)count * elem) : NULL;
    if (!dst) {
        c->bad = 1;
        return NULL;
    }
    memcpy(dst, src, (size_t)count * elem);
    *n = (size_t)count;
    return dst;
}

