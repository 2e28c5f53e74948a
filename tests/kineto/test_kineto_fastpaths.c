/* The Kineto loader's fast paths give what the plain code gave: the token
 * bound cuts at the same byte as a byte-by-byte scan (string bodies are
 * now skipped with memchr), plain integers read as strtoll read them (they
 * no longer go through it), each kernel's category is that of its name
 * (now computed once per name), and arrays already in order keep their
 * input order (the sort is skipped for them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/job_build.h"
#include "load/kineto_load.h"
#include "kineto/kineto_internal.h"
#include "test_util.h"

/* The token bound as the parser applied it before the fast path: bytes of
 * text before a string or bare token grows past max (len when none does). */
static size_t reference_cut(const char *b, size_t n, uint64_t max)
{
    int in_string = 0, escaped = 0;
    uint64_t len = 0;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (in_string) {
            if (escaped)
                escaped = 0;
            else if (c == '\\')
                escaped = 1;
            else if (c == '"') {
                in_string = 0;
                len = 0;
                continue;
            }
        } else if (c == '"') {
            in_string = 1;
            len = 0;
            continue;
        } else if (strchr("{}[],: \t\r\n", c)) {
            len = 0;
            continue;
        }
        if (++len > max)
            return i;
    }
    return n;
}

static int count_events(void *ctx, const kineto_event *ev)
{
    (void)ev;
    ++*(int *)ctx;
    return 0;
}

/* The byte named by a "... at byte N (bound TSCOPE_KINETO_MAX_TOKEN)" error. */
static uint64_t cut_in_message(const char *err)
{
    const char *at = strstr(err, "at byte ");
    assert_non_null(at);
    return strtoull(at + 8, NULL, 10);
}

static void test_token_cut_matches_bytewise_scan(void **state)
{
    (void)state;
    /* Names with escapes at the start, middle and end of the long run, an
     * escaped quote, and a long bare number. */
    static const char *const names[] = {
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "\\\\aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\n",
        "\\u00e9\\u00e9\\u00e9aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        for (uint64_t max = 1; max < 80; max++) {
            char doc[512];
            snprintf(doc, sizeof doc,
                     "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                     "\"ts\": 1, \"dur\": 2}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                     "\"%s\", \"ts\": 123456789012345678901234567890, \"dur\": 2}]}",
                     names[k]);
            size_t want = reference_cut(doc, strlen(doc), max);
            tsa_kineto_limits lim = {.max_bytes = 0, .max_events = 0, .max_token = max};
            tsa_kineto_set_limits(&lim);
            kineto_header hdr;
            tsa_kineto_stats st;
            char err[512] = "";
            int count = 0;
            int rc = kineto_parse_buffer(doc, strlen(doc), count_events, &count, &hdr, &st,
                                         err, sizeof err);
            if (want == strlen(doc)) {
                assert_int_equal(rc, 0);
            } else {
                assert_int_equal(rc, -1);
                assert_non_null(strstr(err, "TSCOPE_KINETO_MAX_TOKEN"));
                assert_int_equal(cut_in_message(err), want);
            }
        }
    tsa_kineto_set_limits(NULL);
}

typedef struct seen {
    int64_t corr[16];
    bool has[16];
    int n;
} seen;

static int keep_correlation(void *ctx, const kineto_event *ev)
{
    seen *s = ctx;
    if (s->n < 16) {
        s->corr[s->n] = ev->correlation;
        s->has[s->n] = ev->has_correlation;
        s->n++;
    }
    return 0;
}

static void test_integers_read_as_strtoll_read_them(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "0", "7", "42", "123456789012345678", "1234567890123456789",
        "99999999999999999999", "-5", "1.9", "2e3", "-0",
    };
    enum { N = sizeof texts / sizeof texts[0] };
    char doc[2048] = "{\"traceEvents\": [";
    for (size_t i = 0; i < N; i++) {
        char ev[160];
        snprintf(ev, sizeof ev, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                 "\"ts\": 1, \"dur\": 2, \"args\": {\"correlation\": %s}}", i ? ", " : "",
                 texts[i]);
        strcat(doc, ev);
    }
    strcat(doc, "]}");
    seen s = {0};
    kineto_header hdr;
    tsa_kineto_stats st;
    char err[256];
    assert_int_equal(kineto_parse_buffer(doc, strlen(doc), keep_correlation, &s, &hdr, &st,
                                         err, sizeof err), 0);
    assert_int_equal(s.n, N);
    static const int64_t want[N] = {0, 7, 42, 123456789012345678, 1234567890123456789,
                                    0, -5, 1, 2000, 0};
    static const bool has[N] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 1};
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(s.has[i], has[i]);
        if (has[i])
            assert_int_equal(s.corr[i], want[i]);
    }
}

static void test_categories_and_order(void **state)
{
    (void)state;
    /* Names repeat (the category comes from the per-name cache), one has a
     * NUL inside (stored up to it, as before), and two kernels tie on start
     * and end (input order kept). */
    static const char *const names[] = {
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
        "void at::native::vectorized_elementwise_kernel<4>", "my_kernel",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "layer_norm_fwd",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "gemm\\u0000ncclKernel", "my_kernel",
    };
    enum { N = sizeof names / sizeof names[0] };
    char *dir = tu_tempdir("kfast");
    assert_non_null(dir);
    char *path;
    assert_true(asprintf(&path, "%s/t.json", dir) > 0);
    char doc[4096] = "{\"traceEvents\": [";
    for (size_t i = 0; i < N; i++) {
        char ev[256];
        /* Kernels 2 and 3 tie on (ts, dur). */
        int ts = i == 3 ? 20 : (int)(10 * i);
        snprintf(ev, sizeof ev, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
                 "\"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 5}", i ? ", " : "", names[i], ts);
        strcat(doc, ev);
    }
    strcat(doc, "]}");
    assert_int_equal(tu_write_file(path, doc, strlen(doc)), 0);
    tsa_rank r;
    char err[256];
    assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), 0);
    assert_int_equal(r.n_kernels, N);
    for (size_t i = 0; i < N; i++) {
        const char *name = r.strings[r.kernels[i].name];
        assert_int_equal(r.kernels[i].category, tsa_kernel_category(name));
    }
    assert_string_equal(r.strings[r.kernels[2].name],
                        "void at::native::vectorized_elementwise_kernel<4>");
    assert_string_equal(r.strings[r.kernels[3].name], "my_kernel");
    assert_int_equal(r.kernels[0].category, TSA_KCAT_COMM);
    assert_int_equal(r.kernels[1].category, TSA_KCAT_GEMM);
    assert_int_equal(r.kernels[7].category, TSA_KCAT_GEMM);   /* "gemm", up to the NUL */
    assert_string_equal(r.strings[r.kernels[7].name], "gemm");
    /* Each distinct name once (the NUL name is "gemm", new). */
    size_t gemm_names = 0;
    for (size_t i = 0; i < r.n_strings; i++)
        gemm_names += !strcmp(r.strings[i], "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
    assert_int_equal(gemm_names, 1);
    tsa_rank_free_contents(&r);
    unlink(path);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* Loads a trace of launches (cuda_runtime) and kernels given as
 * {tid, ts, correlation} for the APIs and {ts, correlation} for kernels. */
static void load_launches(const int (*apis)[3], size_t n_apis, const int (*kernels)[2],
                          size_t n_kernels, tsa_rank *r)
{
    char *dir = tu_tempdir("kcorr");
    assert_non_null(dir);
    char *path;
    assert_true(asprintf(&path, "%s/t.json", dir) > 0);
    char doc[8192] = "{\"traceEvents\": [";
    for (size_t i = 0; i < n_apis + n_kernels; i++) {
        char ev[256];
        if (i < n_apis)
            snprintf(ev, sizeof ev, "%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", "
                     "\"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": %d, \"ts\": %d, "
                     "\"dur\": 1, \"args\": {\"correlation\": %d}}", i ? ", " : "",
                     apis[i][0], apis[i][1], apis[i][2]);
        else
            snprintf(ev, sizeof ev, ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                     "\"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 1, "
                     "\"args\": {\"correlation\": %d}}",
                     kernels[i - n_apis][0], kernels[i - n_apis][1]);
        strcat(doc, ev);
    }
    strcat(doc, "]}");
    assert_int_equal(tu_write_file(path, doc, strlen(doc)), 0);
    char err[256];
    assert_int_equal(tsa_kineto_load_file(path, r, NULL, err, sizeof err), 0);
    unlink(path);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* A kernel's launch is the first API (in start order) with its correlation
 * id, whether the APIs come in correlation order (searched in place) or not
 * (searched through a sorted table); APIs that launched nothing go. */
static void test_launch_lookup_in_and_out_of_order(void **state)
{
    (void)state;
    /* In order, with a repeated id (5 twice: tid 11 starts first). */
    static const int in_order[][3] = {{10, 1, 3}, {11, 2, 5}, {12, 3, 5}, {13, 4, 8}, {14, 5, 9}};
    static const int kernels[][2] = {{100, 5}, {101, 9}, {102, 4}, {103, 3}};
    tsa_rank r;
    load_launches(in_order, 5, kernels, 4, &r);
    assert_int_equal(r.n_kernels, 4);
    assert_int_equal(r.kernels[0].launch_tid, 11);
    assert_int_equal(r.kernels[1].launch_tid, 14);
    assert_int_equal(r.kernels[2].launch_tid, 0);   /* id 4: no launch */
    assert_int_equal(r.kernels[3].launch_tid, 10);
    assert_int_equal(r.n_apis, 3);                  /* ids 3, 5 (tid 11), 9 */
    assert_int_equal(r.apis[0].tid, 10);
    assert_int_equal(r.apis[1].tid, 11);
    assert_int_equal(r.apis[2].tid, 14);
    tsa_rank_free_contents(&r);

    /* Same launches with ids out of start order. */
    static const int shuffled[][3] = {{10, 1, 9}, {11, 2, 5}, {12, 3, 3}, {13, 4, 5}, {14, 5, 1}};
    load_launches(shuffled, 5, kernels, 4, &r);
    assert_int_equal(r.kernels[0].launch_tid, 11);  /* 5: tid 11 starts before 13 */
    assert_int_equal(r.kernels[1].launch_tid, 10);
    assert_int_equal(r.kernels[2].launch_tid, 0);
    assert_int_equal(r.kernels[3].launch_tid, 12);
    assert_int_equal(r.n_apis, 3);
    assert_int_equal(r.apis[0].tid, 10);
    assert_int_equal(r.apis[1].tid, 11);
    assert_int_equal(r.apis[2].tid, 12);
    tsa_rank_free_contents(&r);
}

/* The kernel record keeps its fields in 80 bytes (88 with the old order):
 * the bulk of a torch.profiler trace's memory. */
static void test_kernel_record_size(void **state)
{
    (void)state;
    if (sizeof(void *) == 8)
        assert_int_equal(sizeof(tsa_kernel), 80);
}

/* Microseconds text -> ns as the parser read it before it stopped copying
 * the text and searching it with strpbrk: through a NUL-terminated copy. */
static int reference_us_to_ns(const char *text, size_t len, int64_t *ns)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (strpbrk(buf, "eE")) {
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
    const char *p = buf;
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (!(*p >= '0' && *p <= '9'))
        return -1;
    int64_t whole = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX / 1000 - 9) / 10)
            return -1;
        whole = whole * 10 + (*p - '0');
    }
    int64_t frac = 0;
    int digits = 0, round_up = 0;
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits < 3)
                frac = frac * 10 + (*p - '0');
            else if (digits == 3)
                round_up = *p >= '5';
        }
    }
    if (*p)
        return -1;
    for (int d = digits; d < 3; d++)
        frac *= 10;
    int64_t v = whole * 1000 + frac + round_up;
    if (v > TSA_KINETO_MAX_NS)
        return -1;
    *ns = neg ? -v : v;
    return 0;
}

static void test_us_to_ns_as_before(void **state)
{
    (void)state;
    /* Texts with a NUL inside end there (string values may hold one). */
    static const struct {
        const char *text;
        size_t len;
    } cases[] = {
        {"1.5", 3}, {"-0", 2}, {"+7", 2}, {"-", 1}, {"+", 1}, {".5", 2}, {"5.", 2},
        {"5.1239", 6}, {"5.1235", 6}, {"00012.000", 9}, {"1e3", 3}, {"1E", 2}, {"e5", 2},
        {"12\0" "e5", 5}, {"12\0" "xyz", 6}, {"\0" "12", 3}, {"1.5\0", 4}, {"3 ", 2},
        {" 3", 2}, {"1,5", 3}, {"2305843009213693.952", 20}, {"2305843009213693.951", 20},
        {"-2305843009213693.952", 21}, {"922337203685477", 15}, {"9223372036854775807", 19},
        {"1234567890123456789012345678901234567890123456789012345678901.5", 63},
        {"1234567890123456789012345678901234567890123456789012345678901.50", 64},
        {"1.5e-3", 6}, {"-4.0000005E2", 12}, {"1e400", 5}, {"1e-400", 6},
        /* three decimals, Kineto's own form, read at once: signs, zeros,
         * the largest whole part read so, one digit more, a byte that is
         * not a digit in each place, and a cut */
        {"1440.634", 8}, {"-0.001", 6}, {"0.000", 5}, {"-12.345", 7},
        {"999999999999999.999", 19}, {"-999999999999999.999", 20}, {"9999999999999999.999", 20},
        {"1.a34", 5}, {"1.2b4", 5}, {"1.23c", 5}, {"1.23 ", 5}, {"1.2/4", 5}, {"1.23:", 5},
        {"1.-23", 5}, {"-.123", 5}, {"1.234", 4}, {"1.2\0" "4", 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t want = -7, got = -7;
        int want_rc = reference_us_to_ns(cases[i].text, cases[i].len, &want);
        int rc = kineto_us_to_ns(cases[i].text, cases[i].len, &got);
        if (rc != want_rc || got != want)
            fail_msg("case %zu: rc %d ns %" PRId64 ", before rc %d ns %" PRId64, i, rc, got,
                     want_rc, want);
    }
}

/* A copy of the second event, as the parser passed it to the sink. */
static int keep_second(void *ctx, const kineto_event *ev)
{
    kineto_event *out = ctx;
    if (out->ph == 0 && ev->ph == 'X')
        out->ph = 'Y'; /* the first event: note it, keep nothing */
    else
        *out = *ev;
    return 0;
}

/* Starting an event clears only the numbers and the first byte of each
 * text (no whole-struct memset): an event with nothing in it that follows
 * one with every field must still read as empty. */
static void test_event_starts_empty_after_a_full_one(void **state)
{
    (void)state;
    const char *doc =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 3, "
        "\"tid\": 4, \"ts\": 1, \"dur\": 2, \"args\": {\"correlation\": 5, \"stream\": 7, "
        "\"device\": 1, \"In msg nelems\": 8, \"Out msg nelems\": 9, \"Group size\": 2, "
        "\"Seq\": 11, \"bytes\": 12, \"Dst Rank\": 1, \"Collective name\": \"allreduce\", "
        "\"dtype\": \"Float\", \"Process Group Name\": \"0\", \"grid\": [1, 2, 3], "
        "\"block\": [4, 5, 6], \"Input Dims\": [[2, 3]], \"Input type\": [\"float\"], "
        "\"Device Type\": 1, \"Device Id\": 0, \"Total Reserved\": 100}}, "
        "{\"ph\": \"i\"}]}";
    kineto_event got;
    memset(&got, 0, sizeof got);
    kineto_header hdr;
    tsa_kineto_stats st;
    char err[256];
    assert_int_equal(kineto_parse_buffer(doc, strlen(doc), keep_second, &got, &hdr, &st, err,
                                         sizeof err), 0);
    assert_int_equal(got.ph, 'i');
    assert_string_equal(got.cat, "");
    assert_string_equal(got.coll_name, "");
    assert_string_equal(got.dtype, "");
    assert_string_equal(got.pg_name, "");
    assert_string_equal(got.in_type, "");
    assert_int_equal(got.name.len, 0);
    assert_false(got.has_pid || got.has_tid || got.has_ts || got.has_dur);
    assert_false(got.has_correlation || got.has_stream || got.has_device || got.has_in_nelems ||
                 got.has_out_nelems || got.has_group_size || got.has_seq || got.has_bytes ||
                 got.has_p2p_peer || got.has_mem_device_type || got.has_mem_total_reserved ||
                 got.has_in_dims);
    int64_t numbers = got.pid | got.tid | got.ts_ns | got.dur_ns | got.correlation | got.stream |
                      got.device | got.in_nelems | got.out_nelems | got.group_size | got.seq |
                      got.bytes | got.p2p_peer | got.mem_device_type | got.mem_device_id |
                      got.mem_total_reserved | got.in_dims_elems;
    assert_int_equal(numbers, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(got.grid[i] | got.block[i], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_cut_matches_bytewise_scan),
        cmocka_unit_test(test_integers_read_as_strtoll_read_them),
        cmocka_unit_test(test_categories_and_order),
        cmocka_unit_test(test_launch_lookup_in_and_out_of_order),
        cmocka_unit_test(test_kernel_record_size),
        cmocka_unit_test(test_us_to_ns_as_before),
        cmocka_unit_test(test_event_starts_empty_after_a_full_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
