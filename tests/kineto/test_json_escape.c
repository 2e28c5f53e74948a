/* The escaper must turn any bytes into a valid JSON string that decodes
 * back to the input (invalid UTF-8 bytes becoming U+FFFD). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_escape.h"

static char *escape(const char *s, size_t len)
{
    size_t need = tsa_json_escape(s, len, NULL, 0);
    char *buf = malloc(need + 1);
    assert_non_null(buf);
    assert_int_equal(tsa_json_escape(s, len, buf, need + 1), need);
    assert_int_equal(strlen(buf), need);
    return buf;
}

/* Escaped text wrapped in quotes must parse and decode to `expect`. */
static void roundtrip(const char *in, size_t len, const char *expect)
{
    char *e = escape(in, len);
    char *doc = malloc(strlen(e) + 3);
    sprintf(doc, "\"%s\"", e);
    cJSON *j = cJSON_Parse(doc);
    assert_non_null(j);
    assert_true(cJSON_IsString(j));
    assert_string_equal(j->valuestring, expect);
    cJSON_Delete(j);
    free(doc);
    free(e);
}

static void test_exact_outputs(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"plain", 5, "plain"},
        {"q\"b\\", 4, "q\\\"b\\\\"},
        {"\n\t\r\b\f", 5, "\\n\\t\\r\\b\\f"},
        {"\x01\x1f", 2, "\\u0001\\u001f"},
        {"nul\0x", 5, "nul\\u0000x"},
        {"\xff", 1, "\\ufffd"},
        {"\xc3\xa9", 2, "\xc3\xa9"},                   /* é stays as it is */
        {"\xc3", 1, "\\ufffd"},                        /* cut sequence */
        {"\xc0\xaf", 2, "\\ufffd\\ufffd"},             /* overlong '/' */
        {"\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd"},  /* surrogate */
        {"\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* > U+10FFFF */
        {"\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80"},   /* emoji */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *e = escape(cases[i].in, cases[i].len);
        assert_string_equal(e, cases[i].out);
        free(e);
    }
}

static void test_truncation_like_snprintf(void **state)
{
    (void)state;
    char buf[4];
    assert_int_equal(tsa_json_escape("a\"bc", 4, buf, sizeof buf), 5);
    assert_string_equal(buf, "a\\\"");
    assert_int_equal(tsa_json_escape("abc", 3, buf, 1), 3);
    assert_string_equal(buf, "");
}

static void test_roundtrip(void **state)
{
    (void)state;
    roundtrip("k\"q\\b\x01 \xff end", 13, "k\"q\\b\x01 \xef\xbf\xbd end");
    roundtrip("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 74,
              "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    /* every byte value once */
    char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (char)(i == 0 ? 1 : i);
    char *e = escape(all, sizeof all);
    char *doc = malloc(strlen(e) + 3);
    sprintf(doc, "\"%s\"", e);
    cJSON *j = cJSON_Parse(doc);
    assert_non_null(j);
    cJSON_Delete(j);
    free(doc);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_outputs),
        cmocka_unit_test(test_truncation_like_snprintf),
        cmocka_unit_test(test_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
