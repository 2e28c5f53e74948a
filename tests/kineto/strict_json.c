/* Strict JSON check (strict_json.h): a recursive-descent recogniser. */
#include "strict_json.h"

#include <string.h>

#include "reader/record_json.h"

#define MAX_NESTING 512

typedef struct scan {
    const unsigned char *s;
    size_t len, pos;
    int depth;
} scan;

static void skip_ws(scan *c)
{
    while (c->pos < c->len && strchr(" \t\r\n", c->s[c->pos]) && c->s[c->pos])
        c->pos++;
}

static int digits(scan *c)
{
    size_t start = c->pos;
    while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9')
        c->pos++;
    return c->pos > start ? 0 : -1;
}

static int number(scan *c)
{
    if (c->s[c->pos] == '-')
        c->pos++;
    if (c->pos < c->len && c->s[c->pos] == '0')
        c->pos++;
    else if (digits(c))
        return -1;
    if (c->pos < c->len && c->s[c->pos] == '.') {
        c->pos++;
        if (digits(c))
            return -1;
    }
    if (c->pos < c->len && (c->s[c->pos] == 'e' || c->s[c->pos] == 'E')) {
        c->pos++;
        if (c->pos < c->len && (c->s[c->pos] == '+' || c->s[c->pos] == '-'))
            c->pos++;
        if (digits(c))
            return -1;
    }
    return 0;
}

static int hex4(scan *c)
{
    for (int i = 0; i < 4; i++, c->pos++)
        if (c->pos >= c->len || !strchr("0123456789abcdefABCDEF", c->s[c->pos]) ||
            !c->s[c->pos])
            return -1;
    return 0;
}

static int string(scan *c)
{
    c->pos++;   /* the opening quote */
    while (c->pos < c->len) {
        unsigned char ch = c->s[c->pos];
        if (ch == '"') {
            c->pos++;
            return 0;
        }
        if (ch < 0x20)
            return -1;
        if (ch == '\\') {
            c->pos++;
            if (c->pos >= c->len)
                return -1;
            ch = c->s[c->pos];
            if (ch == 'u') {
                c->pos++;
                if (hex4(c))
                    return -1;
                continue;
            }
            if (!strchr("\"\\/bfnrt", ch) || !ch)
                return -1;
            c->pos++;
            continue;
        }
        c->pos++;
    }
    return -1;
}

static int literal(scan *c, const char *word)
{
    size_t n = strlen(word);
    if (c->len - c->pos < n || memcmp(c->s + c->pos, word, n))
        return -1;
    c->pos += n;
    return 0;
}

static int value(scan *c);

static int container(scan *c, char close, int is_object)
{
    if (++c->depth > MAX_NESTING)
        return -1;
    c->pos++;
    skip_ws(c);
    if (c->pos < c->len && c->s[c->pos] == (unsigned char)close) {
        c->pos++;
        c->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(c);
        if (is_object) {
            if (c->pos >= c->len || c->s[c->pos] != '"' || string(c))
                return -1;
            skip_ws(c);
            if (c->pos >= c->len || c->s[c->pos] != ':')
                return -1;
            c->pos++;
        }
        if (value(c))
            return -1;
        skip_ws(c);
        if (c->pos >= c->len)
            return -1;
        if (c->s[c->pos] == ',') {
            c->pos++;
            continue;
        }
        if (c->s[c->pos] != (unsigned char)close)
            return -1;
        c->pos++;
        c->depth--;
        return 0;
    }
}

static int value(scan *c)
{
    skip_ws(c);
    if (c->pos >= c->len)
        return -1;
    switch (c->s[c->pos]) {
    case '{': return container(c, '}', 1);
    case '[': return container(c, ']', 0);
    case '"': return string(c);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default: return number(c);
    }
}

int strict_json_check(const char *text, size_t len, size_t *at)
{
    scan c = {(const unsigned char *)text, len, 0, 0};
    /* UTF-8 first, over the exact bytes (an embedded NUL is a fault too) */
    for (size_t i = 0; i < len;) {
        size_t n = text[i] ? tsr_utf8_seq_len(text + i) : 0;
        if (!n || i + n > len) {
            *at = i;
            return -1;
        }
        i += n;
    }
    int rc = value(&c);
    skip_ws(&c);
    if (rc || c.pos != len) {
        *at = c.pos;
        return -1;
    }
    return 0;
}
