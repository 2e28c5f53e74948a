/* Mode selection, injection decisions and CUPTI version acceptance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cupti_mode.h"

static void parse_modes(void **state)
{
    (void)state;
    int unknown = -1;
    assert_int_equal(tsc_cupti_mode_parse(NULL, &unknown), TSC_CUPTI_FULL);
    assert_int_equal(unknown, 0);
    assert_int_equal(tsc_cupti_mode_parse("", &unknown), TSC_CUPTI_FULL);
    const char *offs[] = {"off", "OFF", "0", "no", "false", "none"};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(tsc_cupti_mode_parse(offs[i], &unknown), TSC_CUPTI_OFF);
        assert_int_equal(unknown, 0);
    }
    const char *fulls[] = {"full", "Full", "on", "1", "yes", "true"};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(tsc_cupti_mode_parse(fulls[i], &unknown), TSC_CUPTI_FULL);
    assert_int_equal(tsc_cupti_mode_parse("light", &unknown), TSC_CUPTI_LIGHT);
    assert_int_equal(tsc_cupti_mode_parse("LIGHT", &unknown), TSC_CUPTI_LIGHT);
    assert_int_equal(unknown, 0);
    assert_int_equal(tsc_cupti_mode_parse("lite", &unknown), TSC_CUPTI_FULL);
    assert_int_equal(unknown, 1);
    assert_int_equal(tsc_cupti_mode_parse("light ", &unknown), TSC_CUPTI_FULL);
    assert_int_equal(unknown, 1);
    assert_int_equal(tsc_cupti_mode_parse("x", NULL), TSC_CUPTI_FULL);
    assert_string_equal(tsc_cupti_mode_name(TSC_CUPTI_OFF), "off");
    assert_string_equal(tsc_cupti_mode_name(TSC_CUPTI_LIGHT), "light");
    assert_string_equal(tsc_cupti_mode_name(TSC_CUPTI_FULL), "full");
}

static void inject_decisions(void **state)
{
    (void)state;
    const char *self = "/opt/tscope/lib/libtscope_preload.so";
    assert_int_equal(tsc_inject_decide(NULL, TSC_CUPTI_FULL, self), TSC_INJECT_SET);
    assert_int_equal(tsc_inject_decide("", TSC_CUPTI_LIGHT, self), TSC_INJECT_SET);
    assert_int_equal(tsc_inject_decide(self, TSC_CUPTI_FULL, self), TSC_INJECT_ALREADY_OURS);
    /* Inherited from a parent that loaded us from another path. */
    assert_int_equal(tsc_inject_decide("/home/u/build/preload/libtscope_preload.so",
                                       TSC_CUPTI_FULL, self),
                     TSC_INJECT_ALREADY_OURS);
    /* nsys / ncu own it. */
    assert_int_equal(tsc_inject_decide("/opt/nvidia/nsight-systems/target-linux-x64/"
                                       "libToolsInjection64.so",
                                       TSC_CUPTI_FULL, self),
                     TSC_INJECT_FOREIGN);
    assert_int_equal(tsc_inject_decide("libcupti_trace_injection.so", TSC_CUPTI_FULL, self),
                     TSC_INJECT_FOREIGN);
    /* Off wins over everything, even a foreign value. */
    assert_int_equal(tsc_inject_decide("/x/libToolsInjection64.so", TSC_CUPTI_OFF, self),
                     TSC_INJECT_DISABLED);
    assert_int_equal(tsc_inject_decide(NULL, TSC_CUPTI_OFF, self), TSC_INJECT_DISABLED);
    assert_int_equal(tsc_inject_decide(NULL, TSC_CUPTI_FULL, NULL), TSC_INJECT_NO_SELF);
    assert_int_equal(tsc_inject_decide(NULL, TSC_CUPTI_FULL, ""), TSC_INJECT_NO_SELF);
    /* Without our own path, any value is someone else's. */
    assert_int_equal(tsc_inject_decide(self, TSC_CUPTI_FULL, NULL), TSC_INJECT_FOREIGN);
}

static void versions(void **state)
{
    (void)state;
    assert_true(tsc_cupti_version_supported(130001, 130001));
    assert_true(tsc_cupti_version_supported(130000, 130001));
    assert_true(tsc_cupti_version_supported(130100, 130001));
    assert_true(tsc_cupti_version_supported(139999, 130001));
    /* CUDA 12 CUPTIs report small API numbers (v19..v28). */
    for (uint32_t v = 0; v <= 28; v++)
        assert_false(tsc_cupti_version_supported(v, 130001));
    assert_false(tsc_cupti_version_supported(140000, 130001));
    assert_false(tsc_cupti_version_supported(129999, 130001));
    assert_false(tsc_cupti_version_supported(UINT32_MAX, 130001));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_modes),
        cmocka_unit_test(inject_decisions),
        cmocka_unit_test(versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
