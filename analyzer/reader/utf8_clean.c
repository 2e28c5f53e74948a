/* JSON output must be valid UTF-8 for strict consumers (Python's json on
 * bytes), but dump strings are whatever the traced process had: kernel
 * names, command lines, thread names.  Invalid sequences become '?'. */
#include <stdlib.h>
#include <string.h>

#include "utf8_clean.h"

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t valid_seq(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned cp, min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        n = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

size_t tsr_utf8_seq_len(const char *s)
{
    return valid_seq((const unsigned char *)s);
}

int tsr_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n;
    while (*p && (n = valid_seq(p)) != 0)
        p += n;
    return *p == 0;
}

char *tsr_utf8_clean_dup(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), i = 0, n;
    char *clean = malloc(len + 1);
    if (!clean)
        return NULL;
    while (i < len) {
        n = valid_seq(p + i);
        if (n) {
            memcpy(clean + i, s + i, n);
            i += n;
        } else {
            clean[i++] = '?';
        }
    }
    clean[len] = 0;
    return clean;
}

cJSON *tsr_json_add_text(cJSON *o, const char *key, const char *s)
{
    if (!s)
        return cJSON_AddNullToObject(o, key);
    if (tsr_utf8_valid(s)) /* the common case: nothing to clean */
        return cJSON_AddStringToObject(o, key, s);
    char *clean = tsr_utf8_clean_dup(s);
    cJSON *item = clean ? cJSON_AddStringToObject(o, key, clean) : NULL;
    free(clean);
    return item;
}
