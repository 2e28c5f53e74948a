/* The strict fast JSON reader (kineto_fastjson.c) against yajl: on every
 * document it accepts, it hands over exactly yajl's tokens, whatever the
 * read sizes; on anything else it gives up, after handing over only a
 * prefix of yajl's tokens.  And a trace it gives up on mid-way loads
 * every event exactly once (yajl's second pass skips those delivered). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "load/job_build.h"
#include "load/kineto_load.h"
#include "kineto/kineto_internal.h"
#include "test_util.h"

/* Tokens as one line of text: {, }, [, ], K:key, S:string, N:number, L
 * (null/true/false); bytes outside printable ASCII as \xHH. */
typedef struct record {
    char *s;
    size_t len, cap;
} record;

static void put(record *r, const char *tag, const unsigned char *b, size_t n)
{
    size_t need = r->len + strlen(tag) + 4 * n + 2;
    if (need > r->cap) {
        r->cap = need * 2;
        r->s = realloc(r->s, r->cap);
        assert_non_null(r->s);
    }
    r->len += (size_t)sprintf(r->s + r->len, "%s", tag);
    for (size_t i = 0; i < n; i++)
        r->len += (size_t)(b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\'
                               ? sprintf(r->s + r->len, "%c", b[i])
                               : sprintf(r->s + r->len, "\\x%02x", b[i]));
    r->len += (size_t)sprintf(r->s + r->len, " ");
}

static int y_null(void *c) { put(c, "L", NULL, 0); return 1; }
static int y_bool(void *c, int b) { (void)b; put(c, "L", NULL, 0); return 1; }
static int y_number(void *c, const char *s, size_t n)
{
    put(c, "N:", (const unsigned char *)s, n);
    return 1;
}
static int y_string(void *c, const unsigned char *s, size_t n) { put(c, "S:", s, n); return 1; }
static int y_key(void *c, const unsigned char *s, size_t n) { put(c, "K:", s, n); return 1; }
static int y_start_map(void *c) { put(c, "{", NULL, 0); return 1; }
static int y_end_map(void *c) { put(c, "}", NULL, 0); return 1; }
static int y_start_array(void *c) { put(c, "[", NULL, 0); return 1; }
static int y_end_array(void *c) { put(c, "]", NULL, 0); return 1; }

static const yajl_callbacks y_callbacks = {
    y_null, y_bool, NULL, NULL, y_number, y_string,
    y_start_map, y_key, y_end_map, y_start_array, y_end_array,
};

/* yajl's tokens for doc (as kineto_parse.c configures it); 1 when yajl
 * accepts the whole document. */
static int yajl_tokens(const char *doc, size_t len, record *r)
{
    yajl_handle h = yajl_alloc(&y_callbacks, NULL, r);
    yajl_config(h, yajl_dont_validate_strings, 1);
    int ok = yajl_parse(h, (const unsigned char *)doc, len) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok;
}

static int f_scalar(void *c, const char *num, size_t nl, const unsigned char *s, size_t sl)
{
    if (num)
        put(c, "N:", (const unsigned char *)num, nl);
    else if (s)
        put(c, "S:", s, sl);
    else
        put(c, "L", NULL, 0);
    return 1;
}
static int f_key(void *c, const unsigned char *s, size_t n, int escaped)
{
    /* a NUL only comes from an escape */
    assert_true(escaped || !memchr(s, '\0', n));
    put(c, "K:", s, n);
    return 1;
}
static int f_open(void *c, int is_map) { put(c, is_map ? "{" : "[", NULL, 0); return 1; }
static int f_close(void *c) { put(c, "}", NULL, 0); return 1; }

static const kineto_json_sink f_sink = {f_scalar, f_key, f_open, f_close, NULL};

typedef struct mem_src {
    const char *doc;
    size_t len, pos, step;   /* step: most bytes one read returns */
} mem_src;

static long mem_read(void *src, unsigned char *buf, size_t cap)
{
    mem_src *m = src;
    size_t n = m->len - m->pos;
    if (n > cap)
        n = cap;
    if (n > m->step)
        n = m->step;
    memcpy(buf, m->doc + m->pos, n);
    m->pos += n;
    return (long)n;
}

/* The fast reader's tokens (closing brackets recorded as yajl's) with
 * reads of at most step bytes; its return value. */
static int fast_tokens(const char *doc, size_t len, size_t step, uint64_t max_token, record *r)
{
    mem_src m = {doc, len, 0, step};
    uint64_t bytes;
    return kineto_fast_json(mem_read, &m, &f_sink, r, 0, max_token, &bytes);
}

/* The same over the whole text at once, read in place (the path a trace
 * decompressed whole takes). */
static int text_tokens(const char *doc, size_t len, record *r)
{
    uint64_t bytes;
    return kineto_fast_json_text((const unsigned char *)doc, len, &f_sink, r, 0, &bytes);
}

/* yajl's closing tokens say which bracket; the fast sink's close does not:
 * compare with '}' for both. */
static void normalize(record *r)
{
    for (size_t i = 0; i + 1 < r->len; i++)
        if (r->s[i] == ']' && r->s[i + 1] == ' ' && (i == 0 || r->s[i - 1] == ' '))
            r->s[i] = '}';
}

static const char *const accepted[] = {
    "{}",
    "[]",
    " \t\r\n{ \"a\" : [ ] , \"b\" : { } } \n",
    "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1.5, \"dur\": -0, \"args\": {\"n\": null}}]}",
    "[1, -2, 3.25, -0.5e10, 1E+2, 7e-3, 0, 123456789012345678901234567890]",
    "[true, false, null, [[[]]], {\"\": \"\"}]",
    "{\"esc\": \"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"}",
    "{\"uni\": \"\\u0041\\u00e9\\u20ac\\uffff\\u0000end\", \"k\\u0000ey\": 1}",
    "{\"raw\": \"caf\xc3\xa9 \xff\xfe not utf-8\"}",
    "{\"a\": {\"b\": {\"c\": [1, {\"d\": \"e\"}]}}, \"f\": [\"g\", 2]}",
    /* whitespace in every place and amount around the tokens the reader
     * moves past without a turn of its loop (key, colon, value, comma,
     * close), and at the very end */
    "{\"a\" :1 ,\"b\":[1 ,2 ] ,\"c\" : \"x\" ,\"d\":{ } }",
    "[ {\"a\":1}\t,\r\n{\"b\":2}  ,  {\"c\":\t\t3\n}\n] ",
    "{\"a\":  \"b\",\"c\":\n  [\n    1\n  ]\n}\n\n",
    "{\"k\":-0.001,\"l\": 1440.634 ,\"m\":\"0123456789abcdefghij\" }",
};

static const char *const given_up[] = {
    "",                                      /* no document */
    "   ",
    "42",                                    /* a bare scalar: yajl's */
    "\"s\"",
    "{} {}",                                 /* two documents */
    "{\"a\": 1} x",
    "{\"a\": \"\\ud83d\\ude00\"}",           /* surrogates: yajl's own decoding */
    "{\"a\": \"\\udc00\"}",
    "{\"a\": \"tab\there\"}",                /* raw control character */
    "{\"a\": \"\\x\"}",                      /* bad escape */
    "{\"a\": \"\\u12g4\"}",
    "{\"a\": 01}",                           /* leading zero */
    "{\"a\": 1.}",
    "{\"a\": 1e}",
    "{\"a\": -}",
    "{\"a\": tru}",
    "{\"a\": True}",
    "{\"a\" 1}",
    "{\"a\": 1,}",
    "[1, 2,]",
    "{\"a\": 1]",
    "[1}",
    "{1: 2}",
    "{\"a\": 1\f}",                          /* whitespace JSON does not have */
    "{\"a\":\x01 1}",                         /* control bytes where it may be */
    "{\"a\":\x01" "1}",
    "[\x0b" "1]",
    "{\"a\": 1\x01}",
    "{\"a\" \x1f: 1}",
    "[1 \x01]",
    "{\"a\": 1 \x7f}",
    "{\"a\": 1 ",                           /* cut in whitespace */
    "{\"a\": ",
    "{\"a\": [1, 2",                         /* cut */
    "{\"a\": \"abc",
    "{\"traceEvents\": [{\"ph\": \"X\"}, {\"ph\": \"Y\", \"ts\": @}]}",
};

static void test_same_tokens_as_yajl(void **state)
{
    (void)state;
    static const size_t steps[] = {1, 2, 3, 7, 64, 1 << 20};
    for (size_t d = 0; d < sizeof accepted / sizeof accepted[0]; d++) {
        const char *doc = accepted[d];
        record y = {0};
        assert_true(yajl_tokens(doc, strlen(doc), &y));
        normalize(&y);
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            record f = {0};
            assert_int_equal(fast_tokens(doc, strlen(doc), steps[s], 0, &f), 0);
            normalize(&f);
            assert_non_null(f.s);
            assert_string_equal(f.s, y.s);
            free(f.s);
        }
        record t = {0};
        assert_int_equal(text_tokens(doc, strlen(doc), &t), 0);
        normalize(&t);
        assert_non_null(t.s);
        assert_string_equal(t.s, y.s);
        free(t.s);
        free(y.s);
    }
}

static void test_gives_up_after_a_prefix_of_yajl(void **state)
{
    (void)state;
    static const size_t steps[] = {1, 5, 1 << 20};
    for (size_t d = 0; d < sizeof given_up / sizeof given_up[0]; d++) {
        const char *doc = given_up[d];
        record y = {0};
        yajl_tokens(doc, strlen(doc), &y);
        normalize(&y);
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            record f = {0};
            if (fast_tokens(doc, strlen(doc), steps[s], 0, &f) != 1)
                fail_msg("accepted: %s", doc);
            normalize(&f);
            if (f.len && (!y.s || f.len > y.len || memcmp(f.s, y.s, f.len)))
                fail_msg("not a prefix of yajl's tokens: %s", doc);
            free(f.s);
        }
        record t = {0};
        if (text_tokens(doc, strlen(doc), &t) != 1)
            fail_msg("accepted in place: %s", doc);
        normalize(&t);
        if (t.len && (!y.s || t.len > y.len || memcmp(t.s, y.s, t.len)))
            fail_msg("not a prefix of yajl's tokens in place: %s", doc);
        free(t.s);
        free(y.s);
    }
}

/* Tokens as long as the bound or longer are left to yajl's path, which
 * applies the bound; shorter ones are read. */
static void test_token_bound(void **state)
{
    (void)state;
    const char *doc = "{\"name\": \"0123456789abcdef\", \"n\": 12345678}";
    record f = {0};
    assert_int_equal(fast_tokens(doc, strlen(doc), 3, 17, &f), 0);
    free(f.s);
    memset(&f, 0, sizeof f);
    assert_int_equal(fast_tokens(doc, strlen(doc), 3, 16, &f), 1);
    free(f.s);
    memset(&f, 0, sizeof f);
    const char *num = "{\"n\": 123456789012}";
    assert_int_equal(fast_tokens(num, strlen(num), 1 << 20, 12, &f), 1);
    free(f.s);
}

/* A trace the fast reader gives up on after 40 kernels (a lone surrogate
 * in a name: valid for yajl): yajl reads it again, and each of the 60
 * kernels is in the model once, in order. */
static void test_second_pass_adds_each_event_once(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kfast2");
    assert_non_null(dir);
    char *path;
    assert_true(asprintf(&path, "%s/t.json", dir) > 0);
    size_t cap = 60 * 200 + 64, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    len += (size_t)sprintf(doc, "{\"traceEvents\": [");
    for (int i = 0; i < 60; i++)
        len += (size_t)sprintf(doc + len, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%s\", "
                               "\"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 1}",
                               i ? ", " : "", i == 40 ? "\\ud800" : "", 10 * i);
    len += (size_t)sprintf(doc + len, "]}");
    assert_int_equal(tu_write_file(path, doc, len), 0);
    tsa_rank r;
    tsa_kineto_stats st;
    char err[256];
    assert_int_equal(tsa_kineto_load_file(path, &r, &st, err, sizeof err), 0);
    assert_int_equal(st.events, 60);
    assert_int_equal(st.bytes, len);
    assert_int_equal(r.n_kernels, 60);
    for (size_t i = 0; i < 60; i++)
        assert_int_equal(r.kernels[i].start_ns, 10000 * (int64_t)i);
    /* yajl's decoding of the lone surrogate: "?" */
    assert_string_equal(r.strings[r.kernels[40].name], "k?");
    tsa_rank_free_contents(&r);
    free(doc);
    unlink(path);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_tokens_as_yajl),
        cmocka_unit_test(test_gives_up_after_a_prefix_of_yajl),
        cmocka_unit_test(test_token_bound),
        cmocka_unit_test(test_second_pass_adds_each_event_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
