/* The counter-to-CLOCK_REALTIME fit (preload/core/fast_clock.c): fed synthetic
 * samples, it must fit only after 200 ms, never jump backwards or forwards
 * when it corrects itself, close an error within a few seconds, and step
 * onto the clock when the clock is set.  Then the real thing on this
 * machine, where the counter may be used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "fast_clock.h"

#define GHZ3_TICKS(ns) ((uint64_t)(ns) * 3)  /* a 3 GHz counter */

static int64_t line_error(const tsc_clock_fit *f, uint64_t counter, uint64_t ns)
{
    return (int64_t)(tsc_clock_convert(&f->line, counter) - ns);
}

static void fits_after_first_interval(void **state)
{
    (void)state;
    tsc_clock_fit f = {0};
    uint64_t t0 = 1700000000000000000ull;
    assert_int_equal(tsc_clock_fit_feed(&f, 1000, t0), 0);
    assert_int_equal(tsc_clock_fit_feed(&f, 1000 + GHZ3_TICKS(100000000), t0 + 100000000), 0);
    assert_false(f.fitted);
    assert_int_equal(tsc_clock_fit_feed(&f, 1000 + GHZ3_TICKS(250000000), t0 + 250000000), 1);
    assert_true(f.fitted);
    /* One tick is a third of a nanosecond: mult = 2^32 / 3. */
    assert_int_equal(f.line.mult, (uint64_t)(((unsigned __int128)1 << 32) / 3));
    /* A second later, on the line within a nanosecond. */
    int64_t e = line_error(&f, 1000 + GHZ3_TICKS(1250000000), t0 + 1250000000);
    assert_true(e >= -1 && e <= 1);
}

/* The system clock runs 100 ppm fast of the counter's nominal rate after
 * the first fit (an NTP slew): every update keeps the line continuous and
 * the error shrinks below a microsecond. */
static void slews_without_jumps(void **state)
{
    (void)state;
    tsc_clock_fit f = {0};
    uint64_t t0 = 1700000000000000000ull, c0 = 5000;
    tsc_clock_fit_feed(&f, c0, t0);
    tsc_clock_fit_feed(&f, c0 + GHZ3_TICKS(250000000), t0 + 250000000);
    assert_true(f.fitted);
    int64_t last_err = 0;
    uint64_t last_ns_on_line = 0;
    for (int s = 1; s <= 30; s++) {
        uint64_t dn = 250000000ull + (uint64_t)s * 1000000000ull;
        uint64_t counter = c0 + GHZ3_TICKS(dn);
        uint64_t ns = t0 + dn + (uint64_t)s * 100000; /* 100 us more per second */
        uint64_t before = tsc_clock_convert(&f.line, counter);
        assert_true(before > last_ns_on_line); /* monotonic across updates */
        assert_int_equal(tsc_clock_fit_feed(&f, counter, ns), 1);
        assert_int_equal(f.line.base_ns, before); /* continuous: no jump */
        assert_int_equal(f.steps, 0);
        last_ns_on_line = before;
        last_err = (int64_t)ns - (int64_t)before;
    }
    assert_true(llabs(last_err) < 1000);
}

static void steps_when_clock_is_set(void **state)
{
    (void)state;
    tsc_clock_fit f = {0};
    uint64_t t0 = 1700000000000000000ull, c0 = 0;
    tsc_clock_fit_feed(&f, c0 + 1, t0);
    tsc_clock_fit_feed(&f, c0 + 1 + GHZ3_TICKS(300000000), t0 + 300000000);
    uint64_t mult = f.line.mult;
    /* An hour forward. */
    uint64_t counter = c0 + 1 + GHZ3_TICKS(1300000000), ns = t0 + 1300000000 + 3600000000000ull;
    assert_int_equal(tsc_clock_fit_feed(&f, counter, ns), 1);
    assert_int_equal(f.steps, 1);
    assert_int_equal(f.line.base_ns, ns);
    assert_int_equal(f.line.mult, mult);
    /* Back on track: the next second slews again. */
    assert_int_equal(tsc_clock_fit_feed(&f, counter + GHZ3_TICKS(1000000000), ns + 1000000000),
                     1);
    assert_int_equal(f.steps, 1);
    assert_true(llabs(line_error(&f, counter + GHZ3_TICKS(2000000000), ns + 2000000000)) < 10);
}

/* A counter that goes backwards (migration) only restarts the rate. */
static void counter_backwards_restarts(void **state)
{
    (void)state;
    tsc_clock_fit f = {0};
    tsc_clock_fit_feed(&f, 1000000, 1000);
    assert_int_equal(tsc_clock_fit_feed(&f, 10, 300001000), 0);
    assert_false(f.fitted);
    assert_int_equal(f.start_tsc, 10);
}

/* The conversion is signed around its base. */
static void converts_before_base(void **state)
{
    (void)state;
    tsc_clock_line l = {.base_tsc = 3000, .base_ns = 1000000, .mult = 1ull << 32};
    assert_int_equal(tsc_clock_convert(&l, 2990), 999990);
    assert_int_equal(tsc_clock_convert(&l, 3010), 1000010);
}

/* This machine: after fitting, the clock agrees with CLOCK_REALTIME within
 * 50 us (the fit's own error is far smaller; the margin is for a
 * descheduled test). */
static void live_clock_agrees(void **state)
{
    (void)state;
    tsc_clock_setup(0);
    if (!tsc_clock_tick_period_ns())
        skip(); /* counter not usable here: callers read the system clock */
    for (int i = 0; i < 6; i++) {
        usleep(100000);
        tsc_clock_tick();
    }
    assert_true(atomic_load(&tsc_clock_g.active));
    int64_t worst = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = tsc_os_realtime_ns();
        uint64_t m = tsc_clock_now();
        uint64_t b = tsc_os_realtime_ns();
        int64_t off = m < a ? (int64_t)(a - m) : m > b ? (int64_t)(m - b) : 0;
        if (off > worst)
            worst = off;
    }
    assert_true(worst < 50000);
    tsc_clock_after_fork();
    assert_false(atomic_load(&tsc_clock_g.active));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fits_after_first_interval),
        cmocka_unit_test(slews_without_jumps),
        cmocka_unit_test(steps_when_clock_is_set),
        cmocka_unit_test(counter_backwards_restarts),
        cmocka_unit_test(converts_before_base),
        cmocka_unit_test(live_clock_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
