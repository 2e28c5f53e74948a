/* gzip traces decompressed whole with libdeflate (kineto_inflate.c) must
 * give what zlib's streaming gzread gives: the same text, so the same
 * events, statistics, errors and byte offsets.  Each file below is parsed
 * twice, once on the libdeflate path and once on the zlib path (the one a
 * build without libdeflate takes), and the two are compared; the files
 * libdeflate must take are checked to be taken (else the comparison would
 * be zlib against itself), and those it must leave to zlib (a header CRC,
 * corrupt or cut data, over the byte bound) to be left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kineto/kineto_internal.h"
#include "test_util.h"

/* A trace text of n events with escapes, odd numbers and nesting. */
static char *trace_text(int n, size_t *len)
{
    size_t cap = (size_t)n * 256 + 256, l = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    l += (size_t)snprintf(t + l, cap - l, "{\"distributedInfo\":{\"rank\":1},\"traceEvents\":[");
    for (int i = 0; i < n; i++)
        l += (size_t)snprintf(t + l, cap - l,
                              "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\u00e9_%d\\n\","
                              "\"pid\":0,\"tid\":7,\"ts\":%d.%03d,\"dur\":1e1,"
                              "\"args\":{\"correlation\":%d,\"grid\":[%d,1,1]}}",
                              i ? ",\n " : "", i % 7, 1000 + i, i % 1000, i, i + 1);
    l += (size_t)snprintf(t + l, cap - l, "]}\n");
    *len = l;
    return t;
}

/* text[0..n) as one gzip member (zlib, level 6), appended to *buf. */
static void add_member(unsigned char **buf, size_t *len, const char *text, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t bound = deflateBound(&z, (uLong)n) + 64;
    *buf = realloc(*buf, *len + bound);
    assert_non_null(*buf);
    z.next_in = (Bytef *)text;
    z.avail_in = (uInt)n;
    z.next_out = *buf + *len;
    z.avail_out = (uInt)bound;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *len += bound - z.avail_out;
    deflateEnd(&z);
}

static char *write_file(const char *dir, const char *name, const unsigned char *b, size_t n)
{
    char *path;
    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    return path;
}

typedef struct seen {
    char *s;
    size_t len, cap;
} seen;

static int collect(void *ctx, const kineto_event *ev)
{
    seen *w = ctx;
    char line[256];
    int n = snprintf(line, sizeof line, "%c|%s|%s|%" PRId64 "|%" PRId64 "|%" PRId64 "|%u\n", ev->ph,
                     ev->cat, ev->name.s ? ev->name.s : "", ev->ts_ns, ev->dur_ns,
                     ev->correlation, ev->grid[0]);
    if (w->len + (size_t)n + 1 > w->cap) {
        w->cap = (w->len + (size_t)n + 1) * 2;
        w->s = realloc(w->s, w->cap);
        assert_non_null(w->s);
    }
    memcpy(w->s + w->len, line, (size_t)n + 1);
    w->len += (size_t)n;
    return 0;
}

typedef struct outcome {
    int rc;
    char err[512];
    tsa_kineto_stats stats;
    kineto_header hdr;
    seen events;
} outcome;

static void parse(const char *path, int zlib_only, outcome *o)
{
    memset(o, 0, sizeof *o);
    kineto_inflate_set_zlib_only(zlib_only);
    o->rc = kineto_parse_file(path, collect, &o->events, &o->hdr, &o->stats, o->err, sizeof o->err);
    kineto_inflate_set_zlib_only(0);
}

/* Both paths give the same; whole: libdeflate must (1) or must not (0)
 * take the file, where this build has it. */
static void same_both_ways(const char *path, int whole, uint64_t max_bytes)
{
    outcome a, b;
    parse(path, 0, &a);
    parse(path, 1, &b);
    assert_int_equal(a.rc, b.rc);
    assert_string_equal(a.err, b.err);
    assert_int_equal(a.stats.bytes, b.stats.bytes);
    assert_int_equal(a.stats.events, b.stats.events);
    assert_int_equal(a.hdr.rank, b.hdr.rank);
    assert_int_equal(a.events.len, b.events.len);
    assert_true(a.events.len == 0 || !memcmp(a.events.s, b.events.s, a.events.len));
    free(a.events.s);
    free(b.events.s);
    kineto_whole w;
    int took = kineto_inflate_whole(path, max_bytes, &w);
    kineto_text_free(&w);
    assert_int_equal(took, kineto_inflate_available() ? whole : 0);
}

/* The text libdeflate gives for path is text[0..n). */
static void whole_is(const char *path, const char *text, size_t n)
{
    kineto_whole w;
    if (!kineto_inflate_available())
        return;
    assert_int_equal(kineto_inflate_whole(path, 0, &w), 1);
    assert_int_equal(w.len, n);
    assert_memory_equal(w.data, text, n);
    kineto_text_free(&w);
}

static void test_gzip_forms(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kinflate");
    assert_non_null(dir);
    size_t n;
    char *text = trace_text(3000, &n);
    unsigned char *one = NULL, *buf = NULL;
    size_t one_len = 0, len = 0;
    add_member(&one, &one_len, text, n);

    /* one member */
    char *p = write_file(dir, "one.json.gz", one, one_len);
    whole_is(p, text, n);
    same_both_ways(p, 1, 0);
    free(p);

    /* two members: gzread reads on into the second */
    add_member(&buf, &len, text, n / 3);
    add_member(&buf, &len, text + n / 3, n - n / 3);
    p = write_file(dir, "two.json.gz", buf, len);
    whole_is(p, text, n);
    same_both_ways(p, 1, 0);
    free(p);

    /* bytes after the member that start no member: ignored by both */
    unsigned char *g = malloc(one_len + 5);
    memcpy(g, one, one_len);
    memcpy(g + one_len, "junk\n", 5);
    p = write_file(dir, "junk.json.gz", g, one_len + 5);
    whole_is(p, text, n);
    same_both_ways(p, 1, 0);
    free(p);
    g[one_len] = 0x1f;   /* one byte of a magic number: still not a member */
    p = write_file(dir, "half_magic.json.gz", g, one_len + 1);
    whole_is(p, text, n);
    same_both_ways(p, 1, 0);
    free(p);
    /* a member's magic and then too little: zlib's error, left to it */
    g[one_len + 1] = 0x8b;
    g[one_len + 2] = 8;
    p = write_file(dir, "cut_second.json.gz", g, one_len + 3);
    same_both_ways(p, 0, 0);
    free(p);
    free(g);

    /* a header CRC (FHCRC), which zlib checks and libdeflate skips: a
     * wrong one is zlib's error, so such files go to zlib */
    g = malloc(one_len + 2);
    memcpy(g, one, 10);
    g[3] |= 0x02;
    g[10] = 0xde;
    g[11] = 0xad;
    memcpy(g + 12, one + 10, one_len - 10);
    p = write_file(dir, "fhcrc.json.gz", g, one_len + 2);
    same_both_ways(p, 0, 0);
    free(p);
    free(g);

    /* a flipped byte in the data, a wrong CRC-32, a cut file */
    g = malloc(one_len);
    memcpy(g, one, one_len);
    g[one_len / 2] ^= 0x55;
    p = write_file(dir, "flipped.json.gz", g, one_len);
    same_both_ways(p, 0, 0);
    free(p);
    memcpy(g, one, one_len);
    g[one_len - 6] ^= 0x01;
    p = write_file(dir, "bad_crc.json.gz", g, one_len);
    same_both_ways(p, 0, 0);
    free(p);
    p = write_file(dir, "cut.json.gz", one, one_len - 9);
    same_both_ways(p, 0, 0);
    free(p);
    free(g);

    /* over the byte bound: zlib's path cuts it and says so */
    p = write_file(dir, "big.json.gz", one, one_len);
    tsa_kineto_limits lim = {.max_bytes = n / 2};
    tsa_kineto_set_limits(&lim);
    same_both_ways(p, 0, lim.max_bytes);
    outcome o;
    parse(p, 0, &o);
    assert_int_equal(o.rc, -1);
    assert_non_null(strstr(o.err, "TSCOPE_KINETO_MAX_BYTES"));
    free(o.events.s);
    tsa_kineto_set_limits(NULL);
    free(p);

    /* plain JSON is zlib's (read through) */
    p = write_file(dir, "plain.json", (const unsigned char *)text, n);
    same_both_ways(p, 0, 0);
    free(p);

    free(one);
    free(buf);
    free(text);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gzip_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
