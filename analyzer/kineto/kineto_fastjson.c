/* A strict streaming JSON reader for the usual case, a well-formed trace.
 * It drives the same handlers as the yajl parse (kineto_parse.c) but lexes
 * straight out of its read buffer, hands strings without escapes over in
 * place, and scans string bodies sixteen bytes at a time: yajl's lexer and
 * its token buffering were a third of the load.
 *
 * It accepts only plain RFC 8259 JSON with an object or array at the top.
 * Anything else (malformed or unusual text, a lone UTF-16 surrogate, a
 * bound of kineto.h reached, a read error, a handler that stops) makes it
 * give up, and the caller parses the input again from the start with
 * yajl, which then gives the same cuts, byte offsets and messages as it
 * always did.  What was handed over before giving up was well-formed JSON
 * that yajl hands over in the same order (kineto_parse.c skips the events
 * already delivered). */
#include "kineto_internal.h"
#include "kineto_lex.h"

#include <stdlib.h>
#include <string.h>

#define FAST_READ (256u << 10)   /* bytes asked of each read at least */

typedef enum need {
    NEED_VALUE,
    NEED_VALUE_OR_CLOSE,   /* just after '[' */
    NEED_KEY,
    NEED_KEY_OR_CLOSE,     /* just after '{' */
    NEED_COLON,
    NEED_COMMA_OR_CLOSE,
    NEED_NOTHING,          /* the top-level value is complete */
} need;

typedef struct fast {
    const kineto_json_sink *sink;
    void *ctx;
    kineto_read_fn read;
    void *src;
    unsigned char *buf;
    size_t cap, len, pos;      /* buf[0..len) holds input, pos is the next byte */
    uint64_t before;           /* input bytes before buf[0] */
    int eof;
    uint64_t max_bytes, max_token;
    unsigned char *stack;      /* 'm' (object) or 'a' (array) per open container */
    size_t depth, cap_stack;
    unsigned char *text;       /* a string with escapes, decoded */
    size_t cap_text;
} fast;

enum { MORE = KLEX_MORE, END = -1, GIVE_UP = KLEX_GIVE_UP };

/* Drop buf[0..from), read more after what is left.  MORE when bytes came,
 * END at the end of the input, GIVE_UP on a read error or a bound. */
static int refill(fast *f, size_t from)
{
    if (f->eof)
        return END;
    size_t keep = f->len - from;
    memmove(f->buf, f->buf + from, keep);
    f->before += from;
    f->pos -= from;
    f->len = keep;
    if (f->cap - keep < FAST_READ) {
        /* One token longer than the buffer: only up to the token bound. */
        size_t cap = f->cap * 2;
        if (f->max_token && cap > f->max_token + 4 * (uint64_t)FAST_READ)
            return GIVE_UP;
        unsigned char *b = realloc(f->buf, cap);
        if (!b)
            return GIVE_UP;
        f->buf = b;
        f->cap = cap;
    }
    long n = f->read(f->src, f->buf + keep, f->cap - keep);
    if (n < 0)
        return GIVE_UP;
    if (n == 0) {
        f->eof = 1;
        return END;
    }
    f->len += (size_t)n;
    if (f->max_bytes && f->before + f->len > f->max_bytes)
        return GIVE_UP;
    return MORE;
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The 16-bit value of the four hex digits at h, -1 when one is not hex. */
static long hex4(const unsigned char *h)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_value(h[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Decode the escapes of the string body s[0..n) (checked by lex_string)
 * into f->text; its length, or -1 (out of memory, or a UTF-16 surrogate,
 * which yajl decodes in its own ways: left to it). */
static long decode(fast *f, const unsigned char *s, size_t n)
{
    if (n + 1 > f->cap_text) {
        unsigned char *t = realloc(f->text, n + 1);
        if (!t)
            return -1;
        f->text = t;
        f->cap_text = n + 1;
    }
    unsigned char *o = f->text;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            *o++ = s[i];
            continue;
        }
        unsigned char e = s[++i];
        switch (e) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            long c = hex4(s + i + 1);
            i += 4;
            if (c >= 0xD800 && c <= 0xDFFF)
                return -1;
            /* UTF-8 is never longer than the six bytes of "\uXXXX" */
            if (c < 0x80)
                *o++ = (unsigned char)c;
            else if (c < 0x800) {
                *o++ = (unsigned char)(0xC0 | c >> 6);
                *o++ = (unsigned char)(0x80 | (c & 0x3F));
            } else {
                *o++ = (unsigned char)(0xE0 | c >> 12);
                *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
                *o++ = (unsigned char)(0x80 | (c & 0x3F));
            }
            break;
        }
        default: /* '"', '\\', '/' stand for themselves */
            *o++ = e;
            break;
        }
    }
    return (long)(o - f->text);
}

/* The string token at buf[pos] ('"'): its body s[0..*n), decoded when it
 * has escapes, and pos moved past it; *got is 1 for a plain string, 2 for
 * one with escapes, 0 when the token is not all in the buffer yet.
 * GIVE_UP: not a JSON string, or longer than the bound. */
static inline int lex_string(fast *f, const unsigned char **s, size_t *n, int *got)
{
    const unsigned char *b = f->buf + f->pos + 1;
    size_t avail = f->len - f->pos - 1, i = 0;
    int escapes = 0;
    *got = 0;
    for (;;) {
        i += klex_plain_run(b + i, avail - i);
        if (f->max_token && i >= f->max_token)
            return GIVE_UP;
        if (i == avail)
            return MORE;
        if (b[i] == '"')
            break;
        if (b[i] < 0x20)
            return GIVE_UP;
        /* a backslash: one of the JSON escapes */
        if (i + 1 >= avail)
            return MORE;
        unsigned char e = b[i + 1];
        if (e == 'u') {
            if (i + 6 > avail)
                return MORE;
            if (hex4(b + i + 2) < 0)
                return GIVE_UP;
            i += 6;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                   e == 'r' || e == 't')
            i += 2;
        else
            return GIVE_UP;
        escapes = 1;
    }
    if (escapes) {
        long m = decode(f, b, i);
        if (m < 0)
            return GIVE_UP;
        *s = f->text;
        *n = (size_t)m;
    } else {
        *s = b;
        *n = i;
    }
    f->pos += i + 2;
    *got = 1 + escapes;
    return MORE;
}

/* lex_string, reading more when the token runs past the buffer (then
 * *got is 0 and the caller lexes it again). */
static int next_string(fast *f, const unsigned char **s, size_t *n, int *got)
{
    if (lex_string(f, s, n, got))
        return GIVE_UP;
    return !*got && refill(f, f->pos) ? GIVE_UP : MORE;
}

static int push(fast *f, unsigned char kind)
{
    if (f->depth == f->cap_stack) {
        size_t cap = f->cap_stack ? f->cap_stack * 2 : 64;
        unsigned char *s = realloc(f->stack, cap);
        if (!s)
            return GIVE_UP;
        f->stack = s;
        f->cap_stack = cap;
    }
    f->stack[f->depth++] = kind;
    return MORE;
}

/* The string token at b[pos] ('"') when klex_short_string takes it: its body
 * at *s, length *n, and the position after it; 0 when not (then
 * lex_string decides). */
static inline size_t short_token(const unsigned char *b, size_t pos, size_t len,
                                 const unsigned char **s, size_t *n)
{
    long m = klex_short_string(b + pos + 1, len - pos - 1);
    if (m < 0)
        return 0;
    *s = b + pos + 1;
    *n = (size_t)m;
    return pos + (size_t)m + 2;
}

/* The string token at (*b)[*pos] ('"'): short_token's way when it can
 * (short_ok: no token bound at or under 16), else next_string's, which may
 * refill the buffer (then *got is 0 and the caller lexes again).  The
 * caller's buffer, position and length are updated. */
static inline int string_token(fast *f, int short_ok, const unsigned char **b, size_t *pos,
                               size_t *len, const unsigned char **s, size_t *n, int *got)
{
    size_t after = short_ok ? short_token(*b, *pos, *len, s, n) : 0;
    *got = 1;
    if (after) {
        *pos = after;
        return MORE;
    }
    f->pos = *pos;
    if (next_string(f, s, n, got))
        return GIVE_UP;
    *b = f->buf;
    *pos = f->pos;
    *len = f->len;
    return MORE;
}

/* The bytes from pos on that an object offered whole to the sink may
 * take: the buffer's, within the token bound (an object inside it holds
 * no token past the bound). */
static inline size_t object_room(const fast *f, size_t pos, size_t len)
{
    size_t room = len - pos;
    return f->max_token && f->max_token < room ? (size_t)f->max_token : room;
}

/* The whole document; MORE (all read, well-formed) or GIVE_UP.
 *
 * The buffer, its length and the position live in locals (registers)
 * across the handlers' calls; f->pos is set before a helper that reads
 * or refills the buffer (SAVE) and they are read back after it (LOAD).
 * The usual sequences, a key, its colon and the value's first byte, a
 * comma and the next key, go on without a turn of the loop; anything
 * else (whitespace at the end of the buffer, a token cut by it) takes
 * the loop's top, which refills. */
static int run(fast *f)
{
    const kineto_json_sink *k = f->sink;
    void *ctx = f->ctx;
    const unsigned char *b = f->buf;
    size_t pos = f->pos, len = f->len;
    int in_map = 0;   /* the innermost open container is an object */
    /* strings under 16 bytes cannot pass a token bound over 16 */
    const int short_ok = !f->max_token || f->max_token > 16;
    need st = NEED_VALUE;
    int taken;
    size_t used;
#define SAVE() (f->pos = pos)
#define LOAD() (b = f->buf, pos = f->pos, len = f->len)
    for (;;) {
        pos = klex_skip_space(b, pos, len);
        if (pos == len) {
            SAVE();
            int r = refill(f, pos);
            LOAD();
            if (r == END)
                return st == NEED_NOTHING ? MORE : GIVE_UP;
            if (r == GIVE_UP)
                return GIVE_UP;
            continue;
        }
        unsigned char c = b[pos];
    token:   /* c == b[pos] starts the next token, st says what may come */
        switch (st) {
        case NEED_VALUE:
        case NEED_VALUE_OR_CLOSE:
            if (c == '"') {
                const unsigned char *s;
                size_t n;
                int got;
                if (string_token(f, short_ok, &b, &pos, &len, &s, &n, &got))
                    return GIVE_UP;
                if (!got)
                    continue;
                if (!f->depth)
                    return GIVE_UP;   /* a bare scalar document: left to yajl */
                if (!k->scalar(ctx, NULL, 0, s, n))
                    return GIVE_UP;
            } else if (c == '-' || klex_is_digit(c)) {
                size_t n;
                klex_num digits;   /* not used: the handler reads the text */
                if (klex_number(b + pos, len - pos, f->max_token, &n, &digits))
                    return GIVE_UP;
                if (!n) {
                    SAVE();
                    if (refill(f, pos))
                        return GIVE_UP;
                    LOAD();
                    continue;
                }
                if (!f->depth)
                    return GIVE_UP;
                if (!k->scalar(ctx, (const char *)b + pos, n, NULL, 0))
                    return GIVE_UP;
                pos += n;
            } else if (c == '{' && f->depth && k->object &&
                       (taken = k->object(ctx, b + pos, object_room(f, pos, len), &used))) {
                if (taken < 0)
                    return GIVE_UP;
                pos += used;   /* the whole object, read by the sink in one pass */
            } else if (c == '{' || c == '[') {
                SAVE();
                if (push(f, c == '{' ? 'm' : 'a') || !k->open(ctx, c == '{'))
                    return GIVE_UP;
                pos++;
                in_map = c == '{';
                st = in_map ? NEED_KEY_OR_CLOSE : NEED_VALUE_OR_CLOSE;
                pos = klex_skip_space(b, pos, len);
                if (pos < len) {
                    c = b[pos];
                    goto token;
                }
                continue;
            } else if (c == ']' && st == NEED_VALUE_OR_CLOSE) {
                break;   /* an empty array: closed below */
            } else if (c == 't' || c == 'f' || c == 'n') {
                const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
                size_t n = strlen(word);
                if (len - pos < n) {
                    SAVE();
                    if (refill(f, pos))
                        return GIVE_UP;
                    LOAD();
                    continue;
                }
                if (!f->depth || memcmp(b + pos, word, n) || !k->scalar(ctx, NULL, 0, NULL, 0))
                    return GIVE_UP;
                pos += n;
            } else
                return GIVE_UP;
            if (!f->depth) {
                st = NEED_NOTHING;
                continue;
            }
            /* after a value: its comma or the container's close, most
             * often the very next byte */
            st = NEED_COMMA_OR_CLOSE;
            if (pos < len) {
                c = b[pos];
                goto token;
            }
            continue;
        case NEED_KEY:
        case NEED_KEY_OR_CLOSE:
            if (c == '}' && st == NEED_KEY_OR_CLOSE)
                break;   /* an empty object */
            if (c != '"')
                return GIVE_UP;
            {
                const unsigned char *s;
                size_t n;
                int got;
                if (string_token(f, short_ok, &b, &pos, &len, &s, &n, &got))
                    return GIVE_UP;
                if (!got)
                    continue;
                if (!k->key(ctx, s, n, got == 2))
                    return GIVE_UP;
            }
            /* the colon and the value's first byte, when they are there */
            pos = klex_skip_space(b, pos, len);
            if (pos < len && b[pos] == ':') {
                pos = klex_skip_space(b, pos + 1, len);
                st = NEED_VALUE;
                if (pos < len) {
                    c = b[pos];
                    goto token;
                }
            } else
                st = NEED_COLON;
            continue;
        case NEED_COLON:
            if (c != ':')
                return GIVE_UP;
            pos++;
            st = NEED_VALUE;
            continue;
        case NEED_COMMA_OR_CLOSE:
            if (c == ',') {
                st = in_map ? NEED_KEY : NEED_VALUE;
                pos = klex_skip_space(b, pos + 1, len);
                if (pos < len) {
                    c = b[pos];
                    goto token;
                }
                continue;
            }
            if (c == (in_map ? '}' : ']'))
                break;
            /* whitespace before the comma or close: the loop skips it */
            if (klex_is_space(c))
                continue;
            return GIVE_UP;
        case NEED_NOTHING:
            return GIVE_UP;   /* more than one value: left to yajl */
        }
        /* c closes the innermost container */
        f->depth--;
        pos++;
        SAVE();
        if (!k->close(ctx))
            return GIVE_UP;
        if (!f->depth) {
            st = NEED_NOTHING;
            continue;
        }
        in_map = f->stack[f->depth - 1] == 'm';
        st = NEED_COMMA_OR_CLOSE;
        if (pos < len) {
            c = b[pos];
            goto token;
        }
    }
#undef SAVE
#undef LOAD
}

int kineto_fast_json(kineto_read_fn read, void *src, const kineto_json_sink *sink, void *ctx,
                     uint64_t max_bytes, uint64_t max_token, uint64_t *bytes)
{
    fast f;
    memset(&f, 0, sizeof f);
    f.sink = sink;
    f.ctx = ctx;
    f.read = read;
    f.src = src;
    f.max_bytes = max_bytes;
    f.max_token = max_token;
    f.cap = 2 * FAST_READ;
    int rc = GIVE_UP;
    /* Bounds this small are tests of the bounds: yajl's path handles them. */
    if ((!max_token || max_token >= 8) && (f.buf = malloc(f.cap)))
        rc = run(&f);
    *bytes = f.before + f.len;
    free(f.buf);
    free(f.stack);
    free(f.text);
    return rc == MORE ? 0 : 1;
}

int kineto_fast_json_text(const unsigned char *text, size_t len, const kineto_json_sink *sink,
                          void *ctx, uint64_t max_token, uint64_t *bytes)
{
    fast f;
    memset(&f, 0, sizeof f);
    f.sink = sink;
    f.ctx = ctx;
    f.max_token = max_token;
    /* All the input is there: lexed in place, never refilled (refill
     * answers END), so never written to. */
    f.buf = (unsigned char *)text;
    f.cap = f.len = len;
    f.eof = 1;
    int rc = !max_token || max_token >= 8 ? run(&f) : GIVE_UP;
    *bytes = len;
    free(f.stack);
    free(f.text);
    return rc == MORE ? 0 : 1;
}
