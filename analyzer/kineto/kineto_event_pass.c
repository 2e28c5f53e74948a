/* One trace event object read in one pass, straight into a kineto_event.
 *
 * Token by token, an event costs a handler call per key and per value,
 * each finding its place again on the parser's context stack; here the
 * place is where the code is (the event's members, its args, an args
 * array, the first input's shape), so a member costs its key's lookup,
 * its value's lexing and the field's setter (kineto_fields.h, the same
 * ones the token path calls, in the same order: the same event).
 *
 * It takes only the usual form: the whole object in the buffer, no
 * escape in any string, containers nested at most SKIP_DEPTH deep.  For
 * anything else it answers 0 having handed nothing over, and the caller
 * reads the object token by token, which decides about errors. */
#include "kineto_fields.h"
#include "kineto_lex.h"

#define SKIP_DEPTH 32

static int pass_enabled = 1;

void kineto_event_pass_set_enabled(int on)
{
    pass_enabled = on;
}

#define INLINE static inline __attribute__((always_inline))

/* The string token at b[*pos] ('"') when it has no escape and ends in
 * b[0..len): its body in *s, *n, and *pos moved past it; 0 when not. */
INLINE int plain_string(const unsigned char *b, size_t len, size_t *pos,
                               const unsigned char **s, size_t *n)
{
    const unsigned char *body = b + *pos + 1;
    size_t avail = len - *pos - 1;
    long m = klex_short_string(body, avail);
    size_t i = m >= 0 ? (size_t)m : klex_plain_run(body, avail);
    if (i == avail || body[i] != '"')
        return 0;
    *s = body;
    *n = i;
    *pos += i + 2;
    return 1;
}

/* The number at b[*pos] (its first byte '-' or a digit) into *v, read
 * as klex_number reads it, and its value on the way when it has one of
 * the usual forms (kineto_fields.h); 0 when it is not a JSON number or
 * may go on past b[0..len). */
INLINE int read_number(const unsigned char *b, size_t len, size_t *pos, kscalar *v)
{
    const unsigned char *start = b + *pos, *end = b + len, *p = start;
    int neg = *p == '-';
    p += neg;
    if (p == end)
        return 0;
    const unsigned char *digits = p;
    uint64_t whole = 0, frac = 0;   /* may wrap: used only where short enough */
    unsigned d;
    if (*p == '0')
        p++;
    else if (klex_is_digit(*p))
        for (; p < end && (d = (unsigned)(*p - '0')) < 10; p++)
            whole = whole * 10 + d;
    else
        return 0;
    size_t n_whole = (size_t)(p - digits);
    long n_frac = -1;   /* no fraction */
    if (p < end && *p == '.') {
        const unsigned char *f = ++p;
        for (; p < end && (d = (unsigned)(*p - '0')) < 10; p++)
            frac = frac * 10 + d;
        if (p == f)
            return 0;
        n_frac = p - f;
    }
    int exponent = p < end && (*p == 'e' || *p == 'E');
    if (exponent) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const unsigned char *e = p;
        while (p < end && klex_is_digit(*p))
            p++;
        if (p == e)
            return 0;
    }
    if (p == end)
        return 0;
    v->num = (const char *)start;
    v->num_len = (size_t)(p - start);
    v->int_ok = !neg && n_frac < 0 && !exponent && n_whole <= 18;
    v->int_val = (int64_t)whole;
    /* Kineto writes microseconds with three decimals */
    v->us_ok = !exponent && n_whole <= 15 && (n_frac < 0 || n_frac == 3);
    int64_t us = (int64_t)whole * 1000 + (n_frac == 3 ? (int64_t)frac : 0);
    v->us_ns = neg ? -us : us;
    *pos = (size_t)(p - b);
    return 1;
}

/* The scalar at b[*pos] into *v, *pos moved past it; 0 when it is not one
 * of the usual form, or not all in b[0..len). */
INLINE int read_scalar(const unsigned char *b, size_t len, size_t *pos, kscalar *v)
{
    unsigned char c = b[*pos];
    v->num = NULL;
    v->str = NULL;
    v->num_len = v->str_len = 0;
    v->int_ok = v->us_ok = false;
    if (c == '"')
        return plain_string(b, len, pos, &v->str, &v->str_len);
    if (c == '-' || klex_is_digit(c))
        return read_number(b, len, pos, v);
    const char *word = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
    size_t n = word ? strlen(word) : 0;
    if (!word || len - *pos < n || memcmp(b + *pos, word, n))
        return 0;
    *pos += n;
    return 1;
}

/* After a member or element: *pos moved to the next one's first byte (1)
 * or past the container's close (2); 0 when neither follows. */
INLINE int next_item(const unsigned char *b, size_t len, size_t *pos, unsigned char close)
{
    size_t p = klex_skip_space(b, *pos, len);
    if (p == len)
        return 0;
    if (b[p] == close) {
        *pos = p + 1;
        return 2;
    }
    if (b[p] != ',')
        return 0;
    p = klex_skip_space(b, p + 1, len);
    if (p == len)
        return 0;
    *pos = p;
    return 1;
}

/* Past '{' or '[' at b[*pos]: *pos at the first item (1), or past an empty
 * container's close (2); 0 when the buffer ends. */
INLINE int first_item(const unsigned char *b, size_t len, size_t *pos, unsigned char close)
{
    size_t p = klex_skip_space(b, *pos + 1, len);
    if (p == len)
        return 0;
    *pos = b[p] == close ? p + 1 : p;
    return b[p] == close ? 2 : 1;
}

/* A member's key and colon at b[*pos]: *pos at its value's first byte. */
INLINE int read_key(const unsigned char *b, size_t len, size_t *pos, key_id *key)
{
    const unsigned char *k;
    size_t n, p = *pos;
    if (b[p] != '"' || !plain_string(b, len, &p, &k, &n))
        return 0;
    /* a key of KINETO_MAX_KEY bytes or more is none of those read */
    *key = n >= KINETO_MAX_KEY ? K_OTHER : kineto_key_of(k, n);
    p = klex_skip_space(b, p, len);
    if (p == len || b[p] != ':')
        return 0;
    p = klex_skip_space(b, p + 1, len);
    if (p == len)
        return 0;
    *pos = p;
    return 1;
}

/* Any value at b[*pos], read over and kept nowhere (what tscope does not
 * read). */
static int skip_value(const unsigned char *b, size_t len, size_t *pos, int depth)
{
    unsigned char c = b[*pos];
    if (c != '{' && c != '[') {
        kscalar v;
        return read_scalar(b, len, pos, &v);
    }
    if (depth == SKIP_DEPTH)
        return 0;
    unsigned char close = c == '{' ? '}' : ']';
    int more = first_item(b, len, pos, close);
    while (more == 1) {
        key_id key;
        if ((c == '{' && !read_key(b, len, pos, &key)) || !skip_value(b, len, pos, depth + 1))
            return 0;
        more = next_item(b, len, pos, close);
    }
    return more == 2;
}

/* args["Input Dims"][0] at b[*pos] ('['): the first input's shape. */
static int read_dims(kineto_event *ev, const unsigned char *b, size_t len, size_t *pos)
{
    int more = first_item(b, len, pos, ']');
    while (more == 1) {
        kscalar v;
        if (b[*pos] == '[' || b[*pos] == '{') {
            if (!skip_value(b, len, pos, 3))
                return 0;
        } else if (!read_scalar(b, len, pos, &v))
            return 0;
        else
            kfield_dim(ev, &v);
        more = next_item(b, len, pos, ']');
    }
    return more == 2;
}

/* An args array that tscope reads (grid, block, Input Dims, Input type)
 * at b[*pos] ('['), under key. */
static int read_args_array(kineto_event *ev, key_id key, const unsigned char *b, size_t len,
                           size_t *pos)
{
    unsigned index = 0;
    int more = first_item(b, len, pos, ']');
    while (more == 1) {
        unsigned char c = b[*pos];
        kscalar v;
        if (c == '[' && kfield_is_dims(key, index)) {
            if (!read_dims(ev, b, len, pos))
                return 0;
        } else if (c == '[' || c == '{') {
            if (!skip_value(b, len, pos, 2))
                return 0;
        } else if (!read_scalar(b, len, pos, &v))
            return 0;
        else
            kfield_args_item(ev, key, index, &v);
        index++;
        more = next_item(b, len, pos, ']');
    }
    return more == 2;
}

/* The object at b[*pos] ('{'): the event's own members (in_args 0) or its
 * args' (1). */
static int read_members(kineto_event *ev, int in_args, const unsigned char *b, size_t len,
                        size_t *pos)
{
    int more = first_item(b, len, pos, '}');
    while (more == 1) {
        key_id key;
        if (!read_key(b, len, pos, &key))
            return 0;
        unsigned char c = b[*pos];
        if (c == '{' || c == '[') {
            int ok;
            if (!in_args && c == '{' && key == K_ARGS)
                ok = read_members(ev, 1, b, len, pos);
            else if (in_args && c == '[' && kfield_is_args_array(key))
                ok = read_args_array(ev, key, b, len, pos);
            else
                ok = skip_value(b, len, pos, 1);
            if (!ok)
                return 0;
        } else {
            kscalar v;
            if (!read_scalar(b, len, pos, &v))
                return 0;
            /* -1: out of memory; the token path meets it again and says so */
            int oom = in_args ? kfield_args(ev, key, &v) : kfield_event(ev, key, &v);
            if (oom)
                return 0;
        }
        more = next_item(b, len, pos, '}');
    }
    return more == 2;
}

size_t kineto_event_pass(kineto_event *ev, const unsigned char *b, size_t len)
{
    if (!pass_enabled || !len || b[0] != '{')
        return 0;
    kineto_event_reset(ev);
    size_t pos = 0;
    return read_members(ev, 0, b, len, &pos) ? pos : 0;
}
