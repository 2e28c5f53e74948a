/* Streaming parser of torch.profiler (Kineto) Chrome traces.  A JSON
 * reader calls back for each token; a small stack of contexts says where in
 * the document the token is, so the parser keeps one event at a time and
 * never the tree.  Only the keys tscope uses are read; everything else is
 * skipped.  The reader is the strict fast one (kineto_fastjson.c) first;
 * when it gives up, yajl reads the input again from the start and decides
 * on errors, cuts and their messages. */
#include "kineto_internal.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define MAX_DEPTH 64
#define MAX_KEY 48               /* longer keys are none of those read */
#define MAX_TEXT (64u << 10)     /* longer names are cut: bounded memory */
#define READ_CHUNK (256u << 10)

typedef enum ctx_kind {
    CTX_ROOT,          /* the top-level object */
    CTX_EVENTS,        /* traceEvents array (or a top-level array) */
    CTX_EVENT,         /* one event object */
    CTX_ARGS,          /* an event's args object */
    CTX_ARGS_ARRAY,    /* an array inside args (grid, block, Input Dims, Input type) */
    CTX_DIMS,          /* args["Input Dims"][0]: the first input's shape */
    CTX_DIST,          /* distributedInfo */
    CTX_DEVPROPS,      /* deviceProperties array */
    CTX_DEVPROP,       /* one deviceProperties object */
    CTX_SKIP,          /* anything tscope does not read */
} ctx_kind;

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

typedef struct frame {
    ctx_kind kind;
    key_id key;        /* last key seen in this object */
    unsigned index;    /* element index in an array */
} frame;

typedef struct parser {
    frame stack[MAX_DEPTH];
    int depth;         /* frames in use */
    int skip_depth;    /* nesting inside CTX_SKIP beyond the stack */
    kineto_event ev;
    kineto_header *hdr;
    tsa_kineto_stats *stats;
    kineto_event_fn fn;
    void *fn_ctx;
    int devprop_seen;
    int callback_failed;
    int oom;
    uint64_t max_events;   /* 0: no bound (kineto.h limits) */
    int over_events;       /* stopped at max_events */
    uint64_t sent;         /* events handed to fn: a second pass skips them */
} parser;

/* ------------------------------------------------------------ helpers */

static int text_set(kineto_text *t, const unsigned char *s, size_t len)
{
    if (len > MAX_TEXT)
        len = MAX_TEXT;
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

static void copy_small(char *dst, size_t cap, const unsigned char *s, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

/* Which of the keys tscope reads k[0..n) is: compared once, where the
 * handlers then compare an integer (each key was compared as text against
 * up to twenty literals). */
static inline __attribute__((always_inline)) key_id key_of(const unsigned char *k, size_t n)
{
#define IS(lit) (memcmp(k, lit, sizeof(lit) - 1) == 0)
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

static void event_reset(kineto_event *ev)
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

/* The usual form, "123.250" or "-5", in one pass: 1 when text is that
 * (then *ns is what kineto_us_to_ns gives), 0 when not (anything else,
 * or a value it must bound-check: the full reading decides). */
static inline int us_plain(const char *text, size_t len, int64_t *ns)
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

/* kineto_us_to_ns for what us_plain does not take; kept out of line, so
 * that the usual value's path has no stack buffer to set up. */
static __attribute__((noinline)) int us_to_ns_rest(const char *text, size_t len, int64_t *ns);

/* kineto_us_to_ns, inline for the handlers. */
static inline int us_to_ns(const char *text, size_t len, int64_t *ns)
{
    if (len == 0 || len >= 64)
        return -1;
    return us_plain(text, len, ns) ? 0 : us_to_ns_rest(text, len, ns);
}

int kineto_us_to_ns(const char *text, size_t len, int64_t *ns)
{
    return us_to_ns(text, len, ns);
}

static int us_to_ns_rest(const char *text, size_t len, int64_t *ns)
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

/* number_to_i64 for what its plain-integer path does not take. */
static __attribute__((noinline)) int number_to_i64_rest(const char *text, size_t len,
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

/* Integer value of a JSON number text (fractions truncated). */
static inline int number_to_i64(const char *text, size_t len, int64_t *out)
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
    return number_to_i64_rest(text, len, out);
}

/* Numeric value from a string such as "7" or "stream 7" (Kineto writes some
 * ids as strings); -1 when there is no digit. */
static int string_to_i64(const unsigned char *s, size_t len, int64_t *out)
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

/* ------------------------------------------------- scalar dispatching */

/* A scalar value: numbers arrive as text (num), strings as str; exactly
 * one of them is non-NULL, or neither for null/true/false. */
/* The value as an integer (a number, or the digits of a string), and as
 * nanoseconds from microseconds (a number or a string), into v. */
#define HAVE ((num && !number_to_i64(num, numlen, &v)) || (str && !string_to_i64(str, strlen_, &v)))
#define US (num ? !us_to_ns(num, numlen, &v) : str && !us_to_ns((const char *)str, strlen_, &v))

static int on_scalar(parser *p, const char *num, size_t numlen,
                     const unsigned char *str, size_t strlen_)
{
    if (p->skip_depth || p->depth == 0)
        return 1;
    frame *f = &p->stack[p->depth - 1];
    kineto_event *ev = &p->ev;
    int64_t v;
    switch (f->kind) {
    case CTX_ROOT:
        if (num && f->key == K_BASETIMENANOSECONDS && !number_to_i64(num, numlen, &v) &&
            v >= 0 && v < 2 * TSA_KINETO_MAX_NS) {
            p->hdr->base_ns = v;
            p->hdr->has_base = true;
        }
        break;
    case CTX_DIST:
        if (f->key == K_RANK && ((num && !number_to_i64(num, numlen, &v)) ||
                                  (str && !string_to_i64(str, strlen_, &v)))) {
            p->hdr->rank = v;
            p->hdr->has_rank = true;
        } else if (f->key == K_WORLD_SIZE && ((num && !number_to_i64(num, numlen, &v)) ||
                                               (str && !string_to_i64(str, strlen_, &v)))) {
            p->hdr->world_size = v;
            p->hdr->has_world_size = true;
        }
        break;
    case CTX_DEVPROP:
        if (str && f->key == K_NAME && !p->hdr->device_name[0] && p->devprop_seen == 1)
            copy_small(p->hdr->device_name, sizeof p->hdr->device_name, str, strlen_);
        else if (num && f->key == K_TOTALGLOBALMEM && p->devprop_seen == 1 &&
                 !number_to_i64(num, numlen, &v) && v > 0)
            p->hdr->device_mem_bytes = (uint64_t)v;
        else if (num && (f->key == K_COMPUTEMAJOR || f->key == K_COMPUTEMINOR) &&
                 p->devprop_seen == 1 && !number_to_i64(num, numlen, &v) && v >= 0 && v < 100)
            *(f->key == K_COMPUTEMAJOR ? &p->hdr->cc_major : &p->hdr->cc_minor) = (int)v;
        break;
    case CTX_EVENT:
        /* one jump on the key id: most scalars of a trace are here */
        switch (f->key) {
        case K_PH:
            if (str)
                ev->ph = strlen_ ? (char)str[0] : 0;
            break;
        case K_CAT:
            if (str)
                copy_small(ev->cat, sizeof ev->cat, str, strlen_);
            break;
        case K_NAME:
            if (str && text_set(&ev->name, str, strlen_))
                return p->oom = 1, 0;
            break;
        case K_PID:
            if (HAVE)
                ev->pid = v, ev->has_pid = true;
            break;
        case K_TID:
            if (HAVE)
                ev->tid = v, ev->has_tid = true;
            break;
        case K_TS:
            if (US)
                ev->ts_ns = v, ev->has_ts = true;
            break;
        case K_DUR:
            if (US)
                ev->dur_ns = v, ev->has_dur = true;
            break;
        default:
            break;
        }
        break;
    case CTX_ARGS:
        /* An integer value, read only for the keys that take one (most
         * args of a real trace are keys tscope skips). */
        switch (f->key) {
        case K_CORRELATION:
            if (HAVE)
                ev->correlation = v, ev->has_correlation = true;
            break;
        case K_STREAM:
            if (HAVE)
                ev->stream = v, ev->has_stream = true;
            break;
        case K_DEVICE:
            if (HAVE)
                ev->device = v, ev->has_device = true;
            break;
        case K_IN_MSG_NELEMS:
            if (HAVE)
                ev->in_nelems = v, ev->has_in_nelems = true;
            break;
        case K_OUT_MSG_NELEMS:
            if (HAVE)
                ev->out_nelems = v, ev->has_out_nelems = true;
            break;
        case K_GROUP_SIZE:
            if (HAVE)
                ev->group_size = v, ev->has_group_size = true;
            break;
        case K_DST_RANK:
        case K_SRC_RANK:
            if (HAVE)
                ev->p2p_peer = v, ev->has_p2p_peer = true;
            break;
        case K_SEQ_UPPER:
        case K_SEQ:
            if (HAVE)
                ev->seq = v, ev->has_seq = true;
            break;
        case K_BYTES:
            if (HAVE)
                ev->bytes = v, ev->has_bytes = true;
            break;
        case K_DEVICE_TYPE:
            if (HAVE)
                ev->mem_device_type = v, ev->has_mem_device_type = true;
            break;
        case K_DEVICE_ID:
            if (HAVE)
                ev->mem_device_id = v;
            break;
        case K_TOTAL_RESERVED:
            if (HAVE)
                ev->mem_total_reserved = v, ev->has_mem_total_reserved = true;
            break;
        case K_COLLECTIVE_NAME:
            if (str)
                copy_small(ev->coll_name, sizeof ev->coll_name, str, strlen_);
            break;
        case K_DTYPE:
            if (str)
                copy_small(ev->dtype, sizeof ev->dtype, str, strlen_);
            break;
        case K_PG_ID:
            if (ev->pg_name[0])
                break;
            /* pg_id stands in for a missing group name */
            /* fall through */
        case K_PROCESS_GROUP_NAME:
            if (str)
                copy_small(ev->pg_name, sizeof ev->pg_name, str, strlen_);
            else if (num)
                copy_small(ev->pg_name, sizeof ev->pg_name, (const unsigned char *)num, numlen);
            break;
        case K_PROCESS_GROUP_RANKS:
            if (str && text_set(&ev->pg_ranks, str, strlen_))
                return p->oom = 1, 0;
            break;
        case K_NAME:
            if (str && text_set(&ev->arg_name, str, strlen_))
                return p->oom = 1, 0;
            break;
        default:
            break;
        }
        break;
    case CTX_DIMS:
        /* the product of the dimensions, bounded so that it cannot wrap */
        if (num && !number_to_i64(num, numlen, &v) && v >= 0 && v < (INT64_C(1) << 40)) {
            int64_t prev = ev->has_in_dims ? ev->in_dims_elems : 1;
            ev->in_dims_elems = prev > 0 && v > (INT64_C(1) << 50) / prev ? 0 : prev * v;
            ev->has_in_dims = ev->in_dims_elems > 0;
        }
        break;
    case CTX_ARGS_ARRAY:
        if (str && f->index == 0 && p->stack[p->depth - 2].key == K_INPUT_TYPE) {
            copy_small((char *)ev->in_type, sizeof ev->in_type, str, strlen_);
        } else if (num && f->index < 3 && !number_to_i64(num, numlen, &v) && v >= 0 &&
                   v <= UINT32_MAX) {
            const frame *parent = &p->stack[p->depth - 2];
            if (parent->key == K_GRID)
                ev->grid[f->index] = (uint32_t)v;
            else if (parent->key == K_BLOCK)
                ev->block[f->index] = (uint32_t)v;
        }
        break;
    default:
        break;
    }
    if (f->kind == CTX_ARGS_ARRAY || f->kind == CTX_EVENTS || f->kind == CTX_DEVPROPS)
        f->index++;
    return 1;
}
#undef HAVE
#undef US

static int cb_null(void *ctx) { return on_scalar(ctx, NULL, 0, NULL, 0); }
static int cb_bool(void *ctx, int b) { (void)b; return on_scalar(ctx, NULL, 0, NULL, 0); }
static int cb_number(void *ctx, const char *s, size_t len)
{
    return on_scalar(ctx, s, len, NULL, 0);
}
static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    return on_scalar(ctx, NULL, 0, s, len);
}

/* ---------------------------------------------------------- containers */

static int push(parser *p, ctx_kind kind)
{
    if (p->skip_depth || p->depth == MAX_DEPTH || kind == CTX_SKIP) {
        /* Beyond the contexts tscope reads, only the nesting is counted. */
        if (!p->skip_depth && p->depth < MAX_DEPTH) {
            p->stack[p->depth].kind = CTX_SKIP;
            p->stack[p->depth].key = K_OTHER;
            p->stack[p->depth].index = 0;
            p->depth++;
        } else
            p->skip_depth++;
        return 1;
    }
    p->stack[p->depth].kind = kind;
    p->stack[p->depth].key = K_OTHER;
    p->stack[p->depth].index = 0;
    p->depth++;
    return 1;
}

/* Which context a container opening here starts. */
static ctx_kind child_kind(parser *p, int is_map)
{
    if (p->skip_depth)
        return CTX_SKIP;
    if (p->depth == 0)
        return is_map ? CTX_ROOT : CTX_EVENTS;   /* a bare array of events is valid too */
    frame *f = &p->stack[p->depth - 1];
    if (f->kind == CTX_SKIP)
        return CTX_SKIP;
    switch (f->kind) {
    case CTX_ROOT:
        if (!is_map && f->key == K_TRACEEVENTS)
            return CTX_EVENTS;
        if (is_map && f->key == K_DISTRIBUTEDINFO)
            return CTX_DIST;
        if (!is_map && f->key == K_DEVICEPROPERTIES)
            return CTX_DEVPROPS;
        return CTX_SKIP;
    case CTX_EVENTS:
        return is_map ? CTX_EVENT : CTX_SKIP;
    case CTX_EVENT:
        return is_map && f->key == K_ARGS ? CTX_ARGS : CTX_SKIP;
    case CTX_ARGS:
        return !is_map && (f->key == K_GRID || f->key == K_BLOCK || f->key == K_INPUT_DIMS ||
                           f->key == K_INPUT_TYPE)
                   ? CTX_ARGS_ARRAY
                   : CTX_SKIP;
    case CTX_ARGS_ARRAY:
        return !is_map && f->index == 0 && p->depth >= 2 &&
                       p->stack[p->depth - 2].key == K_INPUT_DIMS
                   ? CTX_DIMS
                   : CTX_SKIP;
    case CTX_DEVPROPS:
        return is_map ? CTX_DEVPROP : CTX_SKIP;
    default:
        return CTX_SKIP;
    }
}

static int open_container(parser *p, int is_map)
{
    ctx_kind k = child_kind(p, is_map);
    if (k == CTX_EVENT)
        event_reset(&p->ev);
    if (k == CTX_DEVPROP)
        p->devprop_seen++;
    return push(p, k);
}

static int close_container(parser *p)
{
    if (p->skip_depth) {
        p->skip_depth--;
        return 1;
    }
    if (p->depth == 0)
        return 1;
    frame *f = &p->stack[--p->depth];
    if (f->kind == CTX_EVENT) {
        if (p->max_events && p->stats->events >= p->max_events) {
            p->over_events = 1;   /* a bomb of events: stop, keep what came before */
            return 0;
        }
        p->stats->events++;
        if (p->stats->events > p->sent) {
            if (p->fn(p->fn_ctx, &p->ev)) {
                p->callback_failed = 1;
                return 0;
            }
            p->sent = p->stats->events;
        }
    }
    /* The closed container was one element of an enclosing array. */
    if (p->depth > 0) {
        frame *up = &p->stack[p->depth - 1];
        if (up->kind == CTX_EVENTS || up->kind == CTX_DEVPROPS || up->kind == CTX_ARGS_ARRAY)
            up->index++;
    }
    return 1;
}

static int cb_start_map(void *ctx) { return open_container(ctx, 1); }
static int cb_end_map(void *ctx) { return close_container(ctx); }
static int cb_start_array(void *ctx) { return open_container(ctx, 0); }
static int cb_end_array(void *ctx) { return close_container(ctx); }

static int map_key(void *ctx, const unsigned char *key, size_t len, int escaped)
{
    parser *p = ctx;
    if (p->skip_depth || p->depth == 0)
        return 1;
    frame *f = &p->stack[p->depth - 1];
    if (f->kind == CTX_SKIP)
        return 1;
    /* A key with a NUL inside (\u0000) is the text before it, as the
     * NUL-terminated comparison always read it; one of 48 bytes or more
     * (before any NUL) was never kept, so it matches none. */
    const unsigned char *nul = escaped && len < MAX_KEY ? memchr(key, '\0', len) : NULL;
    f->key = len >= MAX_KEY ? K_OTHER : key_of(key, nul ? (size_t)(nul - key) : len);
    return 1;
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t len)
{
    return map_key(ctx, key, len, 1);
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

static int sink_scalar(void *ctx, const char *num, size_t num_len, const unsigned char *str,
                       size_t str_len)
{
    return on_scalar(ctx, num, num_len, str, str_len);
}
static int sink_open(void *ctx, int is_map) { return open_container(ctx, is_map); }

static const kineto_json_sink sink = {sink_scalar, map_key, sink_open, cb_end_map};

/* ------------------------------------------------------------- driving */

typedef struct source {
    gzFile gz;            /* file input (gzip or plain: zlib reads both) */
    const char *mem;      /* or a memory buffer */
    size_t mem_len, mem_pos;
} source;

static long source_read(void *src, unsigned char *buf, size_t cap)
{
    source *s = src;
    if (s->gz) {
        int n = gzread(s->gz, buf, (unsigned)cap);
        return n;
    }
    size_t n = s->mem_len - s->mem_pos;
    if (n > cap)
        n = cap;
    memcpy(buf, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    return (long)n;
}

/* Back to the first byte; 0, or -1 when the file cannot be read again. */
static int source_rewind(source *s)
{
    s->mem_pos = 0;
    return s->gz && gzrewind(s->gz) ? -1 : 0;
}

/* Lexical state carried from read to read, only to measure the token
 * being read: yajl buffers an unfinished token and lexes it again from its
 * start at every read, so one huge token costs its length squared. */
typedef struct token_watch {
    int in_string, escaped;
    uint64_t len;          /* bytes of the current string or bare token */
} token_watch;

/* Bytes of b[0..n) before a token grows past max (n when none does). */
static size_t watch_tokens(token_watch *w, const unsigned char *b, size_t n, uint64_t max)
{
    for (size_t i = 0; i < n; i++) {
        if (w->in_string && !w->escaped) {
            /* Most bytes are inside strings: jump to the next quote or
             * backslash with memchr instead of looking at every byte. */
            const unsigned char *q = memchr(b + i, '"', n - i);
            size_t end = q ? (size_t)(q - b) : n;
            const unsigned char *bs = memchr(b + i, '\\', end - i);
            if (bs)
                end = (size_t)(bs - b);
            size_t run = end - i;
            if (max && w->len + run > max)
                return i + (size_t)(max - w->len);
            w->len += run;
            i = end;
            if (i == n)
                break;
        }
        unsigned char c = b[i];
        if (w->in_string) {
            if (w->escaped)
                w->escaped = 0;
            else if (c == '\\')
                w->escaped = 1;
            else if (c == '"') {
                w->in_string = 0;
                w->len = 0;
                continue;
            }
        } else {
            switch (c) {
            case '"':
                w->in_string = 1;
                w->len = 0;
                continue;
            case '{': case '}': case '[': case ']': case ',': case ':':
            case ' ': case '\t': case '\r': case '\n':
                w->len = 0;
                continue;
            default:
                break;
            }
        }
        if (max && ++w->len > max)
            return i;
    }
    return n;
}

/* yajl's own message, one line, without its source excerpt. */
static void yajl_message(yajl_handle h, const unsigned char *chunk, size_t len,
                         char *out, size_t outlen)
{
    unsigned char *msg = yajl_get_error(h, 0, chunk, len);
    snprintf(out, outlen, "%s", msg ? (const char *)msg : "parse error");
    if (msg)
        yajl_free_error(h, msg);
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
}

/* A parser at the start of the input; the event's text buffers and the
 * count of events already handed over are kept from an earlier pass. */
static void parser_start(parser *p, kineto_header *hdr, tsa_kineto_stats *stats,
                         kineto_event_fn fn, void *ctx, uint64_t max_events)
{
    kineto_event ev = p->ev;
    uint64_t sent = p->sent;
    memset(p, 0, sizeof *p);
    p->ev = ev;
    p->sent = sent;
    p->hdr = hdr;
    p->stats = stats;
    p->fn = fn;
    p->fn_ctx = ctx;
    p->max_events = max_events;
    memset(stats, 0, sizeof *stats);
    memset(hdr, 0, sizeof *hdr);
}

static int parse_source(source *src, const char *label, kineto_event_fn fn, void *ctx,
                        kineto_header *hdr, tsa_kineto_stats *stats, char *err, size_t errlen)
{
    tsa_kineto_stats local_stats;
    if (!stats)
        stats = &local_stats;
    memset(stats, 0, sizeof *stats);
    memset(hdr, 0, sizeof *hdr);
    parser *p = calloc(1, sizeof *p);
    unsigned char *buf = malloc(READ_CHUNK);
    if (!p || !buf) {
        free(p);
        free(buf);
        snprintf(err, errlen, "%s: out of memory", label);
        return -1;
    }
    tsa_kineto_limits lim;
    tsa_kineto_get_limits(&lim);
    parser_start(p, hdr, stats, fn, ctx, lim.max_events);
    uint64_t fast_bytes;
    yajl_handle h = NULL;
    int rc = -1;
    /* A buffer within the bound is lexed in place; a file is read. */
    int whole = src->mem && (!lim.max_bytes || src->mem_len <= lim.max_bytes);
    if (whole ? !kineto_fast_json_text((const unsigned char *)src->mem, src->mem_len, &sink, p,
                                       lim.max_token, &fast_bytes)
              : !kineto_fast_json(source_read, src, &sink, p, lim.max_bytes, lim.max_token,
                                  &fast_bytes)) {
        stats->bytes = fast_bytes;
        rc = 0;
        goto out;
    }
    /* The fast reader gave up: yajl reads it all again, and the builder
     * gets only the events it does not have yet. */
    parser_start(p, hdr, stats, fn, ctx, lim.max_events);
    if (source_rewind(src)) {
        snprintf(err, errlen, "%s: read error: cannot read the file again", label);
        goto out;
    }
    token_watch watch = {0};
    h = yajl_alloc(&callbacks, NULL, p);
    if (!h) {
        snprintf(err, errlen, "%s: out of memory", label);
        goto out;
    }
    /* Names in real traces sometimes carry bytes that are not UTF-8; they
     * are escaped on output, so they must not stop the parse. */
    yajl_config(h, yajl_dont_validate_strings, 1);
    uint64_t offset = 0;
    for (;;) {
        long n = source_read(src, buf, READ_CHUNK);
        if (n < 0) {
            int zerr = 0;
            const char *zmsg = src->gz ? gzerror(src->gz, &zerr) : "read error";
            snprintf(err, errlen, "%s: read error after byte %" PRIu64 ": %s", label, offset,
                     zerr == Z_ERRNO ? strerror(errno) : zmsg);
            goto out;
        }
        /* The bounds cut the read short; what came before is parsed. */
        size_t feed = (size_t)(n > 0 ? n : 0);
        int over_bytes = 0, over_token = 0;
        if (lim.max_bytes && offset + feed > lim.max_bytes) {
            feed = (size_t)(lim.max_bytes - offset);
            over_bytes = 1;
        }
        size_t cut = watch_tokens(&watch, buf, feed, lim.max_token);
        if (cut < feed) {
            feed = cut;
            over_token = 1;
            over_bytes = 0;
        }
        yajl_status st = n == 0 ? yajl_complete_parse(h)
                         : feed ? yajl_parse(h, buf, feed) : yajl_status_ok;
        if (st == yajl_status_ok && (over_bytes || over_token)) {
            stats->bytes = offset + feed;
            if (over_token)
                snprintf(err, errlen, "%s: a JSON token longer than %" PRIu64 " bytes at byte %"
                         PRIu64 " (bound TSCOPE_KINETO_MAX_TOKEN)", label, lim.max_token,
                         offset + feed);
            else
                snprintf(err, errlen, "%s: more than %" PRIu64 " bytes of JSON at byte %" PRIu64
                         " (bound TSCOPE_KINETO_MAX_BYTES)", label, lim.max_bytes,
                         offset + feed);
            goto out;
        }
        if (st != yajl_status_ok) {
            uint64_t at = offset + (n > 0 ? yajl_get_bytes_consumed(h) : 0);
            if (p->over_events)
                snprintf(err, errlen, "%s: more than %" PRIu64 " trace events at byte %" PRIu64
                         " (bound TSCOPE_KINETO_MAX_EVENTS)", label, lim.max_events, at);
            else if (p->oom || p->callback_failed)
                snprintf(err, errlen, "%s: out of memory at byte %" PRIu64, label, at);
            else {
                char msg[160];
                yajl_message(h, buf, n > 0 ? (size_t)n : 0, msg, sizeof msg);
                snprintf(err, errlen, "%s: malformed JSON at byte %" PRIu64 ": %s", label,
                         n > 0 ? at : offset, msg);
            }
            stats->bytes = offset + (n > 0 ? (uint64_t)n : 0);
            goto out;
        }
        if (n == 0)
            break;
        offset += (uint64_t)n;
    }
    stats->bytes = offset;
    rc = 0;
out:
    if (h)
        yajl_free(h);
    free(p->ev.name.s);
    free(p->ev.arg_name.s);
    free(p->ev.pg_ranks.s);
    free(p);
    free(buf);
    return rc;
}

int kineto_parse_file(const char *path, kineto_event_fn fn, void *ctx,
                      kineto_header *hdr, tsa_kineto_stats *stats, char *err, size_t errlen)
{
    source src = {0};
    tsa_kineto_limits lim;
    tsa_kineto_get_limits(&lim);
    kineto_whole text;
    if (kineto_inflate_whole(path, lim.max_bytes, &text)) {
        src.mem = (const char *)text.data;
        src.mem_len = text.len;
        int rc = parse_source(&src, path, fn, ctx, hdr, stats, err, errlen);
        kineto_text_free(&text);
        return rc;
    }
    src.gz = gzopen(path, "rb");
    if (!src.gz) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    /* Reads of twice zlib's buffer or more go straight into ours. */
    gzbuffer(src.gz, READ_CHUNK / 4);
    int rc = parse_source(&src, path, fn, ctx, hdr, stats, err, errlen);
    gzclose(src.gz);
    return rc;
}

int kineto_parse_buffer(const char *buf, size_t len, kineto_event_fn fn, void *ctx,
                        kineto_header *hdr, tsa_kineto_stats *stats, char *err, size_t errlen)
{
    source src = {0};
    src.mem = buf;
    src.mem_len = len;
    return parse_source(&src, "<buffer>", fn, ctx, hdr, stats, err, errlen);
}
