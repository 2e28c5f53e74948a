/* NVTX START/END marker pairing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cupti_mode.h"
#include "nvtx_pair.h"

static void nested_and_interleaved(void **state)
{
    (void)state;
    tsc_nvtx_pairer *p = test_malloc(sizeof *p);
    tsc_nvtx_init(p);
    tsc_nvtx_range r;
    assert_int_equal(tsc_nvtx_start(p, 1, 100, 7, "ProfilerStep#3", NULL), 0);
    assert_int_equal(tsc_nvtx_start(p, 2, 150, 7, "forward", NULL), 0);
    assert_int_equal(tsc_nvtx_start(p, 3, 160, 9, "data", NULL), 0);
    assert_int_equal(tsc_nvtx_end(p, 2, 300, &r), 1);
    assert_int_equal(r.id, 2);
    assert_int_equal(r.start_ns, 150);
    assert_int_equal(r.end_ns, 300);
    assert_int_equal(r.tid, 7);
    assert_string_equal(r.name, "forward");
    assert_int_equal(tsc_nvtx_end(p, 1, 900, &r), 1);
    assert_string_equal(r.name, "ProfilerStep#3");
    assert_int_equal(r.end_ns - r.start_ns, 800);
    assert_int_equal(tsc_nvtx_end(p, 3, 950, &r), 1);
    assert_int_equal(r.tid, 9);
    assert_int_equal(p->n_open, 0);
    /* An END without START, and a second END for a closed id. */
    assert_int_equal(tsc_nvtx_end(p, 3, 999, &r), 0);
    assert_int_equal(tsc_nvtx_end(p, 42, 999, &r), 0);
    assert_int_equal(p->unmatched_ends, 2);
    test_free(p);
}

static void names_and_limits(void **state)
{
    (void)state;
    tsc_nvtx_pairer *p = test_malloc(sizeof *p);
    tsc_nvtx_init(p);
    tsc_nvtx_range r;
    char long_name[300];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    tsc_nvtx_start(p, 1, 10, 0, long_name, NULL);
    tsc_nvtx_start(p, 2, 10, 0, NULL, NULL);
    assert_int_equal(tsc_nvtx_end(p, 1, 20, &r), 1);
    assert_int_equal(strlen(r.name), TSC_NVTX_NAME_MAX - 1);
    assert_int_equal(tsc_nvtx_end(p, 2, 5, &r), 1);
    assert_string_equal(r.name, "");
    assert_int_equal(r.end_ns, 10); /* END before START is clamped, never negative */
    for (uint32_t i = 0; i < TSC_NVTX_OPEN_MAX; i++)
        assert_int_equal(tsc_nvtx_start(p, 1000 + i, i, 0, "r", NULL), 0);
    assert_int_equal(tsc_nvtx_start(p, 5, 1, 0, "one too many", NULL), -1);
    assert_int_equal(p->overflow, 1);
    /* Closing one frees a slot. */
    assert_int_equal(tsc_nvtx_end(p, 1000, 50, &r), 1);
    assert_int_equal(tsc_nvtx_start(p, 5, 1, 0, "fits now", NULL), 0);
    test_free(p);
}

static void nvtx_wanted(void **state)
{
    (void)state;
    assert_true(tsc_nvtx_wanted(NULL, NULL, TSC_CUPTI_FULL));
    assert_true(tsc_nvtx_wanted(NULL, "", TSC_CUPTI_LIGHT));
    assert_true(tsc_nvtx_wanted("on", NULL, TSC_CUPTI_FULL));
    assert_false(tsc_nvtx_wanted("off", NULL, TSC_CUPTI_FULL));
    assert_false(tsc_nvtx_wanted("0", NULL, TSC_CUPTI_FULL));
    assert_false(tsc_nvtx_wanted(NULL, NULL, TSC_CUPTI_OFF));
    /* nsys routes NVTX itself. */
    assert_false(tsc_nvtx_wanted(NULL, "/opt/nsys/libToolsInjection64.so", TSC_CUPTI_FULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nested_and_interleaved),
        cmocka_unit_test(names_and_limits),
        cmocka_unit_test(nvtx_wanted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
