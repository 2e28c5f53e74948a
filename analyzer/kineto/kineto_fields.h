/* The fields of a trace event tscope reads, shared by the two ways an
 * event is read: token by token (kineto_parse.c, behind either JSON
 * reader) and in one pass over a whole event object (kineto_event_pass.c).
 * Which key a name is, how each value is converted and where it is kept
 * are decided here once, so both ways give the same event.
 *
 * The per-token parts are inline (each runs for every value of a trace);
 * kineto_fields.c holds the rest. */
#ifndef TSA_KINETO_FIELDS_H
#define TSA_KINETO_FIELDS_H

#include <stdint.h>
#include <string.h>

#include "kineto_internal.h"
#include "kineto_lex.h"

#define KINETO_MAX_KEY 48               /* longer keys are none of those read */
#define KINETO_MAX_TEXT (64u << 10)     /* longer names are cut: bounded memory */

typedef enum key_id {
    K_OTHER,            /* a key tscope does not read */
    K_PH,
    K_TS,
    K_CAT,
    K_PID,
    K_TID,
    K_DUR,
    K_SEQ_UPPER,
    K_SEQ,
    K_NAME,
    K_RANK,
    K_ARGS,
    K_GRID,
    K_BYTES,
    K_BLOCK,
    K_DTYPE,
    K_PG_ID,
    K_STREAM,
    K_DEVICE,
    K_DST_RANK,
    K_SRC_RANK,
    K_DEVICE_ID,
    K_WORLD_SIZE,
    K_GROUP_SIZE,
    K_INPUT_DIMS,
    K_INPUT_TYPE,
    K_TRACEEVENTS,
    K_CORRELATION,
    K_DEVICE_TYPE,
    K_IN_MSG_NELEMS,
    K_TOTALGLOBALMEM,
    K_COMPUTEMAJOR,
    K_COMPUTEMINOR,
    K_OUT_MSG_NELEMS,
    K_TOTAL_RESERVED,
    K_DISTRIBUTEDINFO,
    K_COLLECTIVE_NAME,
    K_DEVICEPROPERTIES,
    K_PROCESS_GROUP_NAME,
    K_BASETIMENANOSECONDS,
    K_PROCESS_GROUP_RANKS,
} key_id;

/* k[0..n) == lit[0..n), n a constant: word compares with the literal's
 * words as immediates (memcmp stays a call where the compiler runs out of
 * inlining room). */
static inline __attribute__((always_inline)) int kineto_key_eq(const unsigned char *k,
                                                               const char *lit, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, k + i, 8);
        memcpy(&b, lit + i, 8);
        if (a != b)
            return 0;
    }
    if (n - i >= 4) {
        uint32_t a, b;
        memcpy(&a, k + i, 4);
        memcpy(&b, lit + i, 4);
        if (a != b)
            return 0;
        i += 4;
    }
    if (n - i >= 2) {
        uint16_t a, b;
        memcpy(&a, k + i, 2);
        memcpy(&b, lit + i, 2);
        if (a != b)
            return 0;
        i += 2;
    }
    return n == i || k[i] == (unsigned char)lit[i];
}

/* Which of the keys tscope reads k[0..n) is: compared once, where the
 * handlers then compare an integer (each key was compared as text against
 * up to twenty literals). */
static inline __attribute__((always_inline)) key_id kineto_key_of(const unsigned char *k, size_t n)
{
#define IS(lit) kineto_key_eq(k, lit, sizeof(lit) - 1)
    switch (n) {
    case 2:
        if (IS("ph"))
            return K_PH;
        if (IS("ts"))
            return K_TS;
        break;
    case 3:
        if (IS("cat"))
            return K_CAT;
        if (IS("pid"))
            return K_PID;
        if (IS("tid"))
            return K_TID;
        if (IS("dur"))
            return K_DUR;
        if (IS("Seq"))
            return K_SEQ_UPPER;
        if (IS("seq"))
            return K_SEQ;
        break;
    case 4:
        if (IS("name"))
            return K_NAME;
        if (IS("rank"))
            return K_RANK;
        if (IS("args"))
            return K_ARGS;
        if (IS("grid"))
            return K_GRID;
        break;
    case 5:
        if (IS("bytes"))
            return K_BYTES;
        if (IS("block"))
            return K_BLOCK;
        if (IS("dtype"))
            return K_DTYPE;
        if (IS("pg_id"))
            return K_PG_ID;
        break;
    case 6:
        if (IS("stream"))
            return K_STREAM;
        if (IS("device"))
            return K_DEVICE;
        break;
    case 8:
        if (IS("Dst Rank"))
            return K_DST_RANK;
        if (IS("Src Rank"))
            return K_SRC_RANK;
        break;
    case 9:
        if (IS("Device Id"))
            return K_DEVICE_ID;
        break;
    case 10:
        if (IS("world_size"))
            return K_WORLD_SIZE;
        if (IS("Group size"))
            return K_GROUP_SIZE;
        if (IS("Input Dims"))
            return K_INPUT_DIMS;
        if (IS("Input type"))
            return K_INPUT_TYPE;
        break;
    case 11:
        if (IS("traceEvents"))
            return K_TRACEEVENTS;
        if (IS("correlation"))
            return K_CORRELATION;
        if (IS("Device Type"))
            return K_DEVICE_TYPE;
        break;
    case 12:
        if (IS("computeMajor"))
            return K_COMPUTEMAJOR;
        if (IS("computeMinor"))
            return K_COMPUTEMINOR;
        break;
    case 13:
        if (IS("In msg nelems"))
            return K_IN_MSG_NELEMS;
        break;
    case 14:
        if (IS("totalGlobalMem"))
            return K_TOTALGLOBALMEM;
        if (IS("Out msg nelems"))
            return K_OUT_MSG_NELEMS;
        if (IS("Total Reserved"))
            return K_TOTAL_RESERVED;
        break;
    case 15:
        if (IS("distributedInfo"))
            return K_DISTRIBUTEDINFO;
        if (IS("Collective name"))
            return K_COLLECTIVE_NAME;
        break;
    case 16:
        if (IS("deviceProperties"))
            return K_DEVICEPROPERTIES;
        break;
    case 18:
        if (IS("Process Group Name"))
            return K_PROCESS_GROUP_NAME;
        break;
    case 19:
        if (IS("baseTimeNanoseconds"))
            return K_BASETIMENANOSECONDS;
        if (IS("Process Group Ranks"))
            return K_PROCESS_GROUP_RANKS;
        break;
    default:
        break;
    }
    return K_OTHER;
#undef IS
}

/* text[0..len) into t (cut at KINETO_MAX_TEXT, NUL-ended); -1 out of memory. */
int kineto_text_set(kineto_text *t, const unsigned char *s, size_t len);
/* s[0..len) into dst[cap], cut to fit, NUL-ended. */
void kineto_copy_small(char *dst, size_t cap, const unsigned char *s, size_t len);
/* An event with no field (its text buffers kept for reuse). */
void kineto_event_reset(kineto_event *ev);
/* Numeric value from a string such as "7" or "stream 7" (Kineto writes some
 * ids as strings); -1 when there is no digit. */
int kineto_string_to_i64(const unsigned char *s, size_t len, int64_t *out);
/* The forms the inline readers below leave out; out of line, so that the
 * usual value's path has no stack buffer to set up. */
int kineto_us_to_ns_rest(const char *text, size_t len, int64_t *ns);
int kineto_number_to_i64_rest(const char *text, size_t len, int64_t *out);

/* The usual form, "123.250" or "-5", in one pass: 1 when text is that
 * (then *ns is what kineto_us_to_ns gives), 0 when not (anything else,
 * or a value it must bound-check: the full reading decides). */
static inline int kineto_us_plain(const char *text, size_t len, int64_t *ns)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    int neg = p < end && *p == '-';
    p += neg;
    /* at most 15 whole digits: a longer value takes the full reading */
    const unsigned char *digits = p, *stop = end - p > 15 ? p + 15 : end;
    int64_t whole = 0;
    unsigned d;
    while (p < stop && (d = (unsigned)(*p - '0')) < 10) {
        whole = whole * 10 + d;
        p++;
    }
    if (p == digits)
        return 0;
    int64_t frac = 0;
    int n_frac = 0, round_up = 0;
    if (p < end && *p == '.') {
        p++;
        unsigned d0, d1, d2;
        if (end - p == 3 && (d0 = (unsigned)(p[0] - '0')) < 10 &&
            (d1 = (unsigned)(p[1] - '0')) < 10 && (d2 = (unsigned)(p[2] - '0')) < 10) {
            /* Kineto's own form: exactly three decimals */
            *ns = whole * 1000 + d0 * 100 + d1 * 10 + d2;
            if (neg)
                *ns = -*ns;
            return 1;
        }
        for (; p < end && (d = (unsigned)(*p - '0')) < 10; p++, n_frac++) {
            if (n_frac < 3)
                frac = frac * 10 + d;
            else if (n_frac == 3)
                round_up = d >= 5;
        }
    }
    if (p != end)
        return 0;
    for (int k = n_frac; k < 3; k++)
        frac *= 10;
    int64_t v = whole * 1000 + frac + round_up;
    *ns = neg ? -v : v;
    return 1;
}

/* kineto_us_to_ns, inline for the readers. */
static inline int kineto_us_to_ns_inline(const char *text, size_t len, int64_t *ns)
{
    if (len == 0 || len >= 64)
        return -1;
    return kineto_us_plain(text, len, ns) ? 0 : kineto_us_to_ns_rest(text, len, ns);
}

/* Integer value of a JSON number text (fractions truncated). */
static inline int kineto_number_to_i64(const char *text, size_t len, int64_t *out)
{
    /* Fast path: a plain integer of up to 18 digits cannot overflow.  Ids,
     * pids and tids are nearly all of them; the rest goes through strtoll. */
    if (len > 0 && len <= 18 && text[0] != '-') {
        int64_t v = 0;
        size_t i = 0;
        unsigned d;
        for (; i < len && (d = (unsigned)(text[i] - '0')) < 10; i++)
            v = v * 10 + d;
        if (i == len) {
            *out = v;
            return 0;
        }
    }
    return kineto_number_to_i64_rest(text, len, out);
}

/* A scalar value: a number as text (num), a string (str), or neither
 * (null, true, false).  A reader that read a number's digits on the way
 * (klex_number) leaves them in digits; the setters then take the value
 * from there in the forms where it is what reading the text would give. */
typedef struct kscalar {
    const char *num;
    size_t num_len;
    const unsigned char *str;
    size_t str_len;
    klex_num digits;   /* form 0: not read */
} kscalar;

/* As an integer (a number, fractions cut; or the digits of a string). */
static inline int kfield_int(const kscalar *s, int64_t *v)
{
    /* a plain integer of at most 18 digits: kineto_number_to_i64's own */
    unsigned not_plain = KNUM_NEG | KNUM_FRAC3 | KNUM_FRAC_OTHER | KNUM_EXP | KNUM_OVER18;
    if ((s->digits.form & (KNUM_READ | not_plain)) == KNUM_READ) {
        *v = (int64_t)s->digits.whole;
        return 1;
    }
    return s->num ? !kineto_number_to_i64(s->num, s->num_len, v)
                  : s->str && !kineto_string_to_i64(s->str, s->str_len, v);
}

/* As nanoseconds from microseconds (a number or a string). */
static inline int kfield_us(const kscalar *s, int64_t *v)
{
    /* up to 15 whole digits and none or three decimals: kineto_us_plain's */
    if ((s->digits.form & (KNUM_READ | KNUM_FRAC_OTHER | KNUM_EXP | KNUM_OVER15)) == KNUM_READ) {
        int64_t us = (int64_t)s->digits.whole * 1000 + (s->digits.form & KNUM_FRAC3 ? (int64_t)s->digits.frac : 0);
        *v = s->digits.form & KNUM_NEG ? -us : us;
        return 1;
    }
    return s->num ? !kineto_us_to_ns_inline(s->num, s->num_len, v)
                  : s->str && !kineto_us_to_ns_inline((const char *)s->str, s->str_len, v);
}

/* The value of key (an event's own) into ev; -1 out of memory. */
static inline int kfield_event(kineto_event *ev, key_id key, const kscalar *s)
{
    const unsigned char *str = s->str;
    size_t str_len = s->str_len;
    int64_t v;
    switch (key) {
    case K_PH:
        if (str)
            ev->ph = str_len ? (char)str[0] : 0;
        break;
    case K_CAT:
        if (str)
            kineto_copy_small(ev->cat, sizeof ev->cat, str, str_len);
        break;
    case K_NAME:
        if (str && kineto_text_set(&ev->name, str, str_len))
            return -1;
        break;
    case K_PID:
        if (kfield_int(s, &v))
            ev->pid = v, ev->has_pid = true;
        break;
    case K_TID:
        if (kfield_int(s, &v))
            ev->tid = v, ev->has_tid = true;
        break;
    case K_TS:
        if (kfield_us(s, &v))
            ev->ts_ns = v, ev->has_ts = true;
        break;
    case K_DUR:
        if (kfield_us(s, &v))
            ev->dur_ns = v, ev->has_dur = true;
        break;
    default:
        break;
    }
    return 0;
}

/* The value of key in the event's args into ev; -1 out of memory.  An
 * integer is read only for the keys that take one (most args of a real
 * trace are keys tscope skips). */
static inline int kfield_args(kineto_event *ev, key_id key, const kscalar *s)
{
    const unsigned char *str = s->str;
    size_t str_len = s->str_len;
    int64_t v;
    switch (key) {
    case K_CORRELATION:
        if (kfield_int(s, &v))
            ev->correlation = v, ev->has_correlation = true;
        break;
    case K_STREAM:
        if (kfield_int(s, &v))
            ev->stream = v, ev->has_stream = true;
        break;
    case K_DEVICE:
        if (kfield_int(s, &v))
            ev->device = v, ev->has_device = true;
        break;
    case K_IN_MSG_NELEMS:
        if (kfield_int(s, &v))
            ev->in_nelems = v, ev->has_in_nelems = true;
        break;
    case K_OUT_MSG_NELEMS:
        if (kfield_int(s, &v))
            ev->out_nelems = v, ev->has_out_nelems = true;
        break;
    case K_GROUP_SIZE:
        if (kfield_int(s, &v))
            ev->group_size = v, ev->has_group_size = true;
        break;
    case K_DST_RANK:
    case K_SRC_RANK:
        if (kfield_int(s, &v))
            ev->p2p_peer = v, ev->has_p2p_peer = true;
        break;
    case K_SEQ_UPPER:
    case K_SEQ:
        if (kfield_int(s, &v))
            ev->seq = v, ev->has_seq = true;
        break;
    case K_BYTES:
        if (kfield_int(s, &v))
            ev->bytes = v, ev->has_bytes = true;
        break;
    case K_DEVICE_TYPE:
        if (kfield_int(s, &v))
            ev->mem_device_type = v, ev->has_mem_device_type = true;
        break;
    case K_DEVICE_ID:
        if (kfield_int(s, &v))
            ev->mem_device_id = v;
        break;
    case K_TOTAL_RESERVED:
        if (kfield_int(s, &v))
            ev->mem_total_reserved = v, ev->has_mem_total_reserved = true;
        break;
    case K_COLLECTIVE_NAME:
        if (str)
            kineto_copy_small(ev->coll_name, sizeof ev->coll_name, str, str_len);
        break;
    case K_DTYPE:
        if (str)
            kineto_copy_small(ev->dtype, sizeof ev->dtype, str, str_len);
        break;
    case K_PG_ID:
        if (ev->pg_name[0])
            break;
        /* pg_id stands in for a missing group name */
        /* fall through */
    case K_PROCESS_GROUP_NAME:
        if (str)
            kineto_copy_small(ev->pg_name, sizeof ev->pg_name, str, str_len);
        else if (s->num)
            kineto_copy_small(ev->pg_name, sizeof ev->pg_name, (const unsigned char *)s->num,
                              s->num_len);
        break;
    case K_PROCESS_GROUP_RANKS:
        if (str && kineto_text_set(&ev->pg_ranks, str, str_len))
            return -1;
        break;
    case K_NAME:
        if (str && kineto_text_set(&ev->arg_name, str, str_len))
            return -1;
        break;
    default:
        break;
    }
    return 0;
}

/* The args arrays read: which of them key names (an array under any other
 * key is skipped). */
static inline int kfield_is_args_array(key_id key)
{
    return key == K_GRID || key == K_BLOCK || key == K_INPUT_DIMS || key == K_INPUT_TYPE;
}

/* Element index of the args array under key into ev. */
static inline void kfield_args_item(kineto_event *ev, key_id key, unsigned index,
                                    const kscalar *s)
{
    int64_t v;
    if (s->str && index == 0 && key == K_INPUT_TYPE) {
        kineto_copy_small(ev->in_type, sizeof ev->in_type, s->str, s->str_len);
    } else if (s->num && index < 3 && kfield_int(s, &v) && v >= 0 && v <= UINT32_MAX) {
        if (key == K_GRID)
            ev->grid[index] = (uint32_t)v;
        else if (key == K_BLOCK)
            ev->block[index] = (uint32_t)v;
    }
}

/* An array inside the args array under key, at its index, holds the first
 * input's shape (args["Input Dims"][0]); any other is skipped. */
static inline int kfield_is_dims(key_id key, unsigned index)
{
    return key == K_INPUT_DIMS && index == 0;
}

/* One dimension of the first input's shape: the element count is their
 * product, bounded so that it cannot wrap. */
static inline void kfield_dim(kineto_event *ev, const kscalar *s)
{
    int64_t v;
    if (s->num && kfield_int(s, &v) && v >= 0 && v < (INT64_C(1) << 40)) {
        int64_t prev = ev->has_in_dims ? ev->in_dims_elems : 1;
        ev->in_dims_elems = prev > 0 && v > (INT64_C(1) << 50) / prev ? 0 : prev * v;
        ev->has_in_dims = ev->in_dims_elems > 0;
    }
}

#endif
