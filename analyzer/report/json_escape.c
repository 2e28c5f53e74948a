#include "json_escape.h"

#include <stdint.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 if the
 * bytes there are not one (overlong forms, surrogates and code points above
 * U+10FFFF count as invalid, as RFC 3629 says). */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf;   /* allowed range of the 2nd byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (avail < need)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return need;
}

static void put(char *dst, size_t cap, size_t *pos, const char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++, (*pos)++)
        if (cap && *pos < cap - 1)
            dst[*pos] = bytes[i];
}

size_t tsa_json_escape(const char *s, size_t len, char *dst, size_t cap)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t pos = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(dst, cap, &pos, esc, 2);
            i++;
        } else if (c < 0x20) {
            const char *named = NULL;
            switch (c) {
            case '\n': named = "\\n"; break;
            case '\r': named = "\\r"; break;
            case '\t': named = "\\t"; break;
            case '\b': named = "\\b"; break;
            case '\f': named = "\\f"; break;
            }
            if (named)
                put(dst, cap, &pos, named, 2);
            else {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                put(dst, cap, &pos, esc, 6);
            }
            i++;
        } else {
            size_t n = utf8_seq_len(u + i, len - i);
            if (n == 0) {
                put(dst, cap, &pos, "\\ufffd", 6);
                i++;
            } else {
                put(dst, cap, &pos, s + i, n);
                i += n;
            }
        }
    }
    if (cap)
        dst[pos < cap ? pos : cap - 1] = '\0';
    return pos;
}
