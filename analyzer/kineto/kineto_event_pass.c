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

/* Each step takes the next byte p (never past end) and gives the byte
 * after what it read, or NULL when what is there is not of the usual
 * form or not all before end.  Positions go by value, so that they stay
 * in registers. */
typedef const unsigned char *at;

INLINE at spaces(at p, at end)
{
    while (p < end && *p <= ' ' && klex_is_space(*p))
        p++;
    return p;
}

/* The string token at p ('"') with no escape: its body in *s, *n. */
INLINE at plain_string(at p, at end, const unsigned char **s, size_t *n)
{
    at body = p + 1;
    size_t avail = (size_t)(end - body);
    long m = klex_short_string(body, avail);
    size_t i = m >= 0 ? (size_t)m : klex_plain_run(body, avail);
    if (i == avail || body[i] != '"')
        return NULL;
    *s = body;
    *n = i;
    return body + i + 1;
}

/* The number at p (its first byte '-' or a digit) into *v. */
INLINE at read_number(at p, at end, kscalar *v)
{
    size_t n;
    /* no token bound here: the caller keeps the whole object within it */
    if (klex_number(p, (size_t)(end - p), 0, &n, &v->digits) || !n)
        return NULL;
    v->num = (const char *)p;
    v->num_len = n;
    return p + n;
}

/* The scalar at p into *v. */
INLINE at read_scalar(at p, at end, kscalar *v)
{
    unsigned char ch = *p;
    v->str = NULL;
    v->str_len = 0;
    if (ch == '-' || klex_is_digit(ch))
        return read_number(p, end, v);
    v->num = NULL;
    v->num_len = 0;
    v->digits.whole = v->digits.frac = 0;
    v->digits.form = 0;
    if (ch == '"')
        return plain_string(p, end, &v->str, &v->str_len);
    const char *word = ch == 't' ? "true" : ch == 'f' ? "false" : ch == 'n' ? "null" : NULL;
    size_t n = word ? strlen(word) : 0;
    if (!word || (size_t)(end - p) < n || memcmp(p, word, n))
        return NULL;
    return p + n;
}

/* After a member or element: *more is 1 with p at the next one's first
 * byte, or 0 past the container's close. */
INLINE at next_item(at p, at end, unsigned char close, int *more)
{
    /* Kineto's own ", " before a token first: one test of three bytes */
    if (end - p > 2 && p[0] == ',' && p[1] == ' ' && p[2] > ' ') {
        *more = 1;
        return p + 2;
    }
    p = spaces(p, end);
    if (p == end)
        return NULL;
    if (*p == close) {
        *more = 0;
        return p + 1;
    }
    if (*p != ',')
        return NULL;
    *more = 1;
    p = spaces(p + 1, end);
    return p < end ? p : NULL;
}

/* Past '{' or '[' at p: *more is 1 with p at the first item, or 0 past an
 * empty container's close. */
INLINE at first_item(at p, at end, unsigned char close, int *more)
{
    p = spaces(p + 1, end);
    if (p == end)
        return NULL;
    *more = *p != close;
    return *more ? p : p + 1;
}

/* A member's key and colon at p: p at its value's first byte. */
INLINE at read_key(at p, at end, key_id *key)
{
    const unsigned char *k;
    size_t n;
    if (*p != '"' || !(p = plain_string(p, end, &k, &n)))
        return NULL;
    /* a key of KINETO_MAX_KEY bytes or more is none of those read */
    *key = n >= KINETO_MAX_KEY ? K_OTHER : kineto_key_of(k, n);
    /* Kineto's own ": " before a token first */
    if (end - p > 2 && p[0] == ':' && p[1] == ' ' && p[2] > ' ')
        return p + 2;
    p = spaces(p, end);
    if (p == end || *p != ':')
        return NULL;
    p = spaces(p + 1, end);
    return p < end ? p : NULL;
}

/* Any value at p, read over and kept nowhere (what tscope does not
 * read). */
static at skip_value(at p, at end, int depth)
{
    unsigned char open = *p;
    if (open != '{' && open != '[') {
        kscalar v;
        return read_scalar(p, end, &v);
    }
    if (depth == SKIP_DEPTH)
        return NULL;
    unsigned char close = open == '{' ? '}' : ']';
    int more;
    p = first_item(p, end, close, &more);
    while (p && more) {
        key_id key;
        if (open == '{' && !(p = read_key(p, end, &key)))
            return NULL;
        if (!(p = skip_value(p, end, depth + 1)))
            return NULL;
        p = next_item(p, end, close, &more);
    }
    return p;
}

/* args["Input Dims"][0] at p ('['): the first input's shape. */
static at read_dims(kineto_event *ev, at p, at end)
{
    int more;
    p = first_item(p, end, ']', &more);
    while (p && more) {
        kscalar v;
        if (*p == '[' || *p == '{')
            p = skip_value(p, end, 3);
        else if ((p = read_scalar(p, end, &v)))
            kfield_dim(ev, &v);
        if (!p)
            return NULL;
        p = next_item(p, end, ']', &more);
    }
    return p;
}

/* An args array that tscope reads (grid, block, Input Dims, Input type)
 * at p ('['), under key. */
static at read_args_array(kineto_event *ev, key_id key, at p, at end)
{
    unsigned index = 0;
    int more;
    p = first_item(p, end, ']', &more);
    while (p && more) {
        kscalar v;
        if (*p == '[' && kfield_is_dims(key, index))
            p = read_dims(ev, p, end);
        else if (*p == '[' || *p == '{')
            p = skip_value(p, end, 2);
        else if ((p = read_scalar(p, end, &v)))
            kfield_args_item(ev, key, index, &v);
        if (!p)
            return NULL;
        index++;
        p = next_item(p, end, ']', &more);
    }
    return p;
}

static at read_args(kineto_event *ev, at p, at end);

/* The object at p ('{'): the event's own members (in_args 0) or its
 * args' (1).  Inline in the two callers, each with its in_args. */
INLINE at read_members(kineto_event *ev, int in_args, at p, at end)
{
    int more;
    p = first_item(p, end, '}', &more);
    while (p && more) {
        key_id key;
        if (!(p = read_key(p, end, &key)))
            return NULL;
        unsigned char ch = *p;
        if (ch == '{' || ch == '[') {
            if (!in_args && ch == '{' && key == K_ARGS)
                p = read_args(ev, p, end);
            else if (in_args && ch == '[' && kfield_is_args_array(key))
                p = read_args_array(ev, key, p, end);
            else
                p = skip_value(p, end, 1);
        } else {
            kscalar v;
            /* a setter's -1 is out of memory: the token path meets it
             * again and says so */
            if ((p = read_scalar(p, end, &v)) &&
                (in_args ? kfield_args(ev, key, &v) : kfield_event(ev, key, &v)))
                p = NULL;
        }
        if (!p)
            return NULL;
        p = next_item(p, end, '}', &more);
    }
    return p;
}

static at read_args(kineto_event *ev, at p, at end)
{
    return read_members(ev, 1, p, end);
}

size_t kineto_event_pass(kineto_event *ev, const unsigned char *b, size_t len)
{
    if (!pass_enabled || !len || b[0] != '{')
        return 0;
    kineto_event_reset(ev);
    at p = read_members(ev, 0, b, b + len);
    return p ? (size_t)(p - b) : 0;
}
