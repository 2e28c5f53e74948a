/* Streaming parser of torch.profiler (Kineto) Chrome traces.  A JSON
 * reader calls back for each token; a small stack of contexts says where in
 * the document the token is, so the parser keeps one event at a time and
 * never the tree.  Only the keys tscope uses are read; everything else is
 * skipped.  The reader is the strict fast one (kineto_fastjson.c) first;
 * it offers each whole event object to the one-pass read
 * (kineto_event_pass.c), which sets the same fields (kineto_fields.h).
 * When it gives up, yajl reads the input again from the start and decides
 * on errors, cuts and their messages. */
#include "kineto_fields.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define MAX_DEPTH 64
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

/* ------------------------------------------------- scalar dispatching */

/* A scalar value: numbers arrive as text (num), strings as str; exactly
 * one of them is non-NULL, or neither for null/true/false. */
static int on_scalar(parser *p, const char *num, size_t numlen,
                     const unsigned char *str, size_t strlen_)
{
    if (p->skip_depth || p->depth == 0)
        return 1;
    frame *f = &p->stack[p->depth - 1];
    kineto_event *ev = &p->ev;
    const kscalar s = {.num = num, .num_len = numlen, .str = str, .str_len = strlen_};
    int64_t v;
    switch (f->kind) {
    case CTX_ROOT:
        if (num && f->key == K_BASETIMENANOSECONDS && !kineto_number_to_i64(num, numlen, &v) &&
            v >= 0 && v < 2 * TSA_KINETO_MAX_NS) {
            p->hdr->base_ns = v;
            p->hdr->has_base = true;
        }
        break;
    case CTX_DIST:
        if (f->key == K_RANK && kfield_int(&s, &v)) {
            p->hdr->rank = v;
            p->hdr->has_rank = true;
        } else if (f->key == K_WORLD_SIZE && kfield_int(&s, &v)) {
            p->hdr->world_size = v;
            p->hdr->has_world_size = true;
        }
        break;
    case CTX_DEVPROP:
        if (str && f->key == K_NAME && !p->hdr->device_name[0] && p->devprop_seen == 1)
            kineto_copy_small(p->hdr->device_name, sizeof p->hdr->device_name, str, strlen_);
        else if (num && f->key == K_TOTALGLOBALMEM && p->devprop_seen == 1 &&
                 !kineto_number_to_i64(num, numlen, &v) && v > 0)
            p->hdr->device_mem_bytes = (uint64_t)v;
        else if (num && (f->key == K_COMPUTEMAJOR || f->key == K_COMPUTEMINOR) &&
                 p->devprop_seen == 1 && !kineto_number_to_i64(num, numlen, &v) && v >= 0 &&
                 v < 100)
            *(f->key == K_COMPUTEMAJOR ? &p->hdr->cc_major : &p->hdr->cc_minor) = (int)v;
        break;
    case CTX_EVENT:
        if (kfield_event(ev, f->key, &s))
            return p->oom = 1, 0;
        break;
    case CTX_ARGS:
        if (kfield_args(ev, f->key, &s))
            return p->oom = 1, 0;
        break;
    case CTX_DIMS:
        kfield_dim(ev, &s);
        break;
    case CTX_ARGS_ARRAY:
        kfield_args_item(ev, p->stack[p->depth - 2].key, f->index, &s);
        break;
    default:
        break;
    }
    if (f->kind == CTX_ARGS_ARRAY || f->kind == CTX_EVENTS || f->kind == CTX_DEVPROPS)
        f->index++;
    return 1;
}

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
        return !is_map && kfield_is_args_array(f->key) ? CTX_ARGS_ARRAY : CTX_SKIP;
    case CTX_ARGS_ARRAY:
        return !is_map && p->depth >= 2 && kfield_is_dims(p->stack[p->depth - 2].key, f->index)
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
        kineto_event_reset(&p->ev);
    if (k == CTX_DEVPROP)
        p->devprop_seen++;
    return push(p, k);
}

/* A whole event read: counted and handed over, unless an earlier pass
 * handed it over already; 0 to stop. */
static int event_done(parser *p)
{
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
    return 1;
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
    if (f->kind == CTX_EVENT && !event_done(p))
        return 0;
    /* The closed container was one element of an enclosing array. */
    if (p->depth > 0) {
        frame *up = &p->stack[p->depth - 1];
        if (up->kind == CTX_EVENTS || up->kind == CTX_DEVPROPS || up->kind == CTX_ARGS_ARRAY)
            up->index++;
    }
    return 1;
}

/* A whole object offered by the reader where an event may start: read in
 * one pass when it is an event of the usual form (kineto_event_pass.c),
 * which sets the same fields as its tokens would. */
static int take_object(void *ctx, const unsigned char *b, size_t avail, size_t *used)
{
    parser *p = ctx;
    if (p->skip_depth || p->depth == 0 || p->depth == MAX_DEPTH ||
        p->stack[p->depth - 1].kind != CTX_EVENTS)
        return 0;
    size_t n = kineto_event_pass(&p->ev, b, avail);
    if (!n)
        return 0;
    if (!event_done(p))
        return -1;
    p->stats->events_whole++;
    p->stack[p->depth - 1].index++;   /* one more element of the events array */
    *used = n;
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
    const unsigned char *nul = escaped && len < KINETO_MAX_KEY ? memchr(key, '\0', len) : NULL;
    f->key = len >= KINETO_MAX_KEY ? K_OTHER : kineto_key_of(key, nul ? (size_t)(nul - key) : len);
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

static const kineto_json_sink sink = {sink_scalar, map_key, sink_open, cb_end_map, take_object};

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
