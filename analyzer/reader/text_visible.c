/* Visible text for terminals and text files (text_visible.h). */
#include "text_visible.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8_clean.h"

/* One character of the input: `len` bytes, kept as they are when
 * `shown` is 0, else shown as `shown` bytes of replacement text. */
typedef struct piece {
    size_t len, shown;
    unsigned code;     /* the byte to escape, or '?' for invalid UTF-8 */
} piece;

static piece next_piece(const unsigned char *s)
{
    size_t n = tsr_utf8_seq_len((const char *)s);
    if (!n)
        return (piece){1, 1, '?'};
    if (n == 1 && (s[0] < 0x20 || s[0] == 0x7f))
        return (piece){1, 4, s[0]};             /* \xNN */
    if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
        return (piece){2, 6, s[1]};             /* \u00NN */
    return (piece){n, 0, 0};
}

int tsr_text_is_visible(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        piece c = next_piece(p);
        if (c.shown)
            return 0;
        p += c.len;
    }
    return 1;
}

char *tsr_text_visible_dup(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 1;
    for (size_t i = 0; p[i];) {
        piece c = next_piece(p + i);
        out += c.shown ? c.shown : c.len;
        i += c.len;
    }
    char *v = malloc(out), *w = v;
    if (!v)
        return NULL;
    for (size_t i = 0; p[i];) {
        piece c = next_piece(p + i);
        if (!c.shown)
            memcpy(w, p + i, c.len);
        else if (c.shown == 1)
            *w = '?';
        else
            snprintf(w, c.shown + 1, c.shown == 6 ? "\\u%04x" : "\\x%02x", c.code);
        w += c.shown ? c.shown : c.len;
        i += c.len;
    }
    *w = '\0';
    return v;
}

/* Keeps v in this thread's ring of format arguments (freeing the oldest). */
static const char *ring_keep(char *v)
{
    enum { RING = 8 };
    static _Thread_local char *ring[RING];
    static _Thread_local unsigned next;
    if (!v)
        return "?";
    unsigned k = next++ % RING;
    free(ring[k]);
    ring[k] = v;
    return v;
}

const char *tsr_vis(const char *s)
{
    if (!s)
        return "";
    return tsr_text_is_visible(s) ? s : ring_keep(tsr_text_visible_dup(s));
}

const char *tsr_fit(const char *s, size_t max_bytes)
{
    if (!s)
        return "";
    if (strnlen(s, max_bytes + 1) <= max_bytes)
        return s;
    size_t cut = max_bytes;
    /* s[cut] is the first byte left out: never the middle of a character */
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    return ring_keep(strndup(s, cut));
}

int tsr_text_make_visible(char **s)
{
    if (!*s || tsr_text_is_visible(*s))
        return 0;
    char *v = tsr_text_visible_dup(*s);
    if (!v)
        return -1;
    free(*s);
    *s = v;
    return 0;
}
