/* Clock sanity verdicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clock_check.h"

#define T0 1763700000000000000ull /* a 2025 CLOCK_REALTIME value */

static const char *status(const tsc_clock_state *s)
{
    static char buf[96];
    tsc_clock_status_text(s, buf, sizeof buf);
    return buf;
}

static void ok_clock(void **state)
{
    (void)state;
    tsc_clock_state s;
    tsc_clock_init(&s);
    assert_int_equal(s.verdict, TSC_CLOCK_UNKNOWN);
    assert_string_equal(status(&s), "unknown");
    for (int i = 0; i < 10; i++)
        tsc_clock_feed(&s, T0 + i * 1000000000ull, T0 + i * 1000000000ull + 3000);
    assert_int_equal(s.verdict, TSC_CLOCK_OK);
    assert_int_equal(s.samples, 10);
    assert_int_equal(s.worst_offset_ns, 3000);
    assert_string_equal(status(&s), "ok");
    /* Exactly at the tolerance is still the same clock. */
    tsc_clock_feed(&s, T0, T0 - TSC_CLOCK_TOLERANCE_NS);
    assert_int_equal(s.verdict, TSC_CLOCK_OK);
    assert_int_equal(s.worst_offset_ns, -(int64_t)TSC_CLOCK_TOLERANCE_NS);
}

static void switched_to_tsc(void **state)
{
    (void)state;
    tsc_clock_state s;
    tsc_clock_init(&s);
    tsc_clock_feed(&s, T0, T0 + 500);
    tsc_clock_feed(&s, T0 + 1000000000ull, T0 + 1000000000ull - 800);
    /* Kineto's rdtsc clock: small numbers, far from the epoch. */
    tsc_clock_feed(&s, T0 + 2000000000ull, 123456789012ull);
    assert_int_equal(s.verdict, TSC_CLOCK_SWITCHED);
    assert_int_equal(s.switched_at_ns, T0 + 2000000000ull);
    char expect[96];
    snprintf(expect, sizeof expect, "switched_at:%llu:offset:%lld",
             (unsigned long long)(T0 + 2000000000ull),
             (long long)(123456789012ll - (long long)(T0 + 2000000000ull)));
    assert_string_equal(status(&s), expect);
    /* Coming back does not clear it: records in between are suspect. */
    tsc_clock_feed(&s, T0 + 3000000000ull, T0 + 3000000000ull);
    assert_int_equal(s.verdict, TSC_CLOCK_SWITCHED);
    assert_int_equal(s.switched_at_ns, T0 + 2000000000ull);
}

static void offset_from_start(void **state)
{
    (void)state;
    tsc_clock_state s;
    tsc_clock_init(&s);
    tsc_clock_feed(&s, T0, T0 + 5000000ull); /* 5 ms ahead */
    assert_int_equal(s.verdict, TSC_CLOCK_OFFSET);
    assert_string_equal(status(&s), "offset:5000000");
    tsc_clock_feed(&s, T0 + 10, T0 + 10);
    assert_int_equal(s.verdict, TSC_CLOCK_OFFSET);
}

static void ignores_missing(void **state)
{
    (void)state;
    tsc_clock_state s;
    tsc_clock_init(&s);
    tsc_clock_feed(&s, T0, 0);
    tsc_clock_feed(&s, 0, T0);
    assert_int_equal(s.verdict, TSC_CLOCK_UNKNOWN);
    assert_int_equal(s.samples, 0);
    /* Extreme values saturate, no overflow (UBSan checks this). */
    tsc_clock_feed(&s, 1, UINT64_MAX);
    assert_int_equal(s.verdict, TSC_CLOCK_OFFSET);
    assert_true(s.worst_offset_ns == INT64_MAX);
    tsc_clock_feed(&s, UINT64_MAX, 1);
    assert_true(s.worst_offset_ns == INT64_MAX);
    /* Text into a tiny buffer is cut, not overrun. */
    char tiny[4];
    size_t n = tsc_clock_status_text(&s, tiny, sizeof tiny);
    assert_int_equal(n, 3);
    assert_string_equal(tiny, "off");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ok_clock),
        cmocka_unit_test(switched_to_tsc),
        cmocka_unit_test(offset_from_start),
        cmocka_unit_test(ignores_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
