/* The out-of-line half of reading a trace event's fields
 * (kineto_fields.h): texts kept in the event, and the rarer forms of
 * numbers, which take a stack buffer or strtod. */
#include "kineto_fields.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kineto_text_set(kineto_text *t, const unsigned char *s, size_t len)
{
    if (len > KINETO_MAX_TEXT)
        len = KINETO_MAX_TEXT;
    if (len + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < len + 1)
            cap *= 2;
        char *p = realloc(t->s, cap);
        if (!p)
            return -1;
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s, s, len);
    t->s[len] = '\0';
    t->len = len;
    return 0;
}

void kineto_copy_small(char *dst, size_t cap, const unsigned char *s, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

void kineto_event_reset(kineto_event *ev)
{
    memset(ev, 0, offsetof(kineto_event, cat));
    ev->cat[0] = ev->coll_name[0] = ev->dtype[0] = ev->pg_name[0] = ev->in_type[0] = '\0';
    ev->name.len = ev->arg_name.len = ev->pg_ranks.len = 0;
    if (ev->name.s)
        ev->name.s[0] = '\0';
    if (ev->arg_name.s)
        ev->arg_name.s[0] = '\0';
    if (ev->pg_ranks.s)
        ev->pg_ranks.s[0] = '\0';
}

int kineto_us_to_ns(const char *text, size_t len, int64_t *ns)
{
    return kineto_us_to_ns_inline(text, len, ns);
}

int kineto_us_to_ns_rest(const char *text, size_t len, int64_t *ns)
{
    /* The text ends at a NUL (a string value may hold one), as the
     * NUL-terminated copy this once worked on did. */
    size_t n = 0;
    int exponent = 0;
    for (; n < len && text[n]; n++)
        exponent |= text[n] == 'e' || text[n] == 'E';
    if (exponent) {
        /* Exponent form is rare (tools that print doubles): use a double. */
        char buf[64];
        memcpy(buf, text, n);
        buf[n] = '\0';
        char *end;
        errno = 0;
        double us = strtod(buf, &end);
        if (*end || errno || !(us > -9.2e15 && us < 9.2e15))
            return -1;
        double v = us * 1000.0;
        if (!(v > -(double)TSA_KINETO_MAX_NS && v < (double)TSA_KINETO_MAX_NS))
            return -1;
        *ns = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
        return 0;
    }
    const char *p = text, *end = text + n;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    if (!(p < end && *p >= '0' && *p <= '9'))
        return -1;
    int64_t whole = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX / 1000 - 9) / 10)
            return -1;
        whole = whole * 10 + (*p - '0');
    }
    int64_t frac = 0;
    int digits = 0, round_up = 0;
    if (p < end && *p == '.') {
        p++;
        for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits < 3)
                frac = frac * 10 + (*p - '0');
            else if (digits == 3)
                round_up = *p >= '5';
        }
    }
    if (p != end)
        return -1;
    for (int d = digits; d < 3; d++)
        frac *= 10;
    int64_t v = whole * 1000 + frac + round_up;
    if (v > TSA_KINETO_MAX_NS)
        return -1;
    *ns = neg ? -v : v;
    return 0;
}

/* kineto_number_to_i64 for what its plain-integer path does not take. */
int kineto_number_to_i64_rest(const char *text, size_t len,
                               int64_t *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end == '.' || *end == 'e' || *end == 'E') {
        double d = strtod(buf, &end);
        if (*end || !(d > -9.2e18 && d < 9.2e18))
            return -1;
        v = (long long)d;
    } else if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

/* Numeric value from a string such as "7" or "stream 7" (Kineto writes some
 * ids as strings); -1 when there is no digit. */
int kineto_string_to_i64(const unsigned char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    while (i < len && !(s[i] >= '0' && s[i] <= '9'))
        i++;
    if (i == len)
        return -1;
    int neg = i > 0 && s[i - 1] == '-';
    int64_t v = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}
