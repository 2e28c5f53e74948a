/* Option parsing of tsc-testbed-rank: sizes, lists, environment fallback,
 * and refusal of garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rank_options.h"

static int parse(tb_options *o, int argc, const char **argv)
{
    return tb_parse_options(o, argc, (char **)argv);
}

static void test_defaults(void **state)
{
    (void)state;
    tb_options o;
    const char *argv[] = {"rank", NULL};
    assert_int_equal(parse(&o, 1, argv), 0);
    assert_int_equal(o.steps, 10);
    assert_int_equal(o.nbuckets, 4);
    assert_int_equal(o.buckets[0], 256 * 1024);
    assert_int_equal(o.fail_rank, -1);
    assert_int_equal(o.burn_rank, -1);
    assert_int_equal(o.pin_rank, -1);
    assert_false(tb_is_slow(&o, 0, 0));
}

/* --slow-steps: a transient slowdown, only inside its steps. */
static void test_slow_steps(void **state)
{
    (void)state;
    tb_options o;
    const char *argv[] = {"rank", "--slow-ranks", "1", "--slow-steps", "5-7", NULL};
    assert_int_equal(parse(&o, 5, argv), 0);
    assert_false(tb_is_slow(&o, 1, 4));
    assert_true(tb_is_slow(&o, 1, 5) && tb_is_slow(&o, 1, 7));
    assert_false(tb_is_slow(&o, 1, 8) || tb_is_slow(&o, 0, 6));
    const char *bad[] = {"rank", "--slow-steps", "7-5", NULL};
    assert_int_equal(parse(&o, 3, bad), -1);
}

static void test_host_faults(void **state)
{
    (void)state;
    tb_options o;
    setenv("TSC_TESTBED_PIN_CPU", "3:1", 1);
    const char *argv[] = {"rank", "--burn-threads", "2:4", "--nice", "3:10", "--cpu-us", "1500",
                          NULL};
    int rc = parse(&o, 7, argv);
    unsetenv("TSC_TESTBED_PIN_CPU");
    assert_int_equal(rc, 0);
    assert_int_equal(o.nice_rank, 3);
    assert_int_equal(o.nice, 10);
    assert_int_equal(o.cpu_us, 1500);
    assert_int_equal(o.burn_rank, 2);
    assert_int_equal(o.burn_threads, 4);
    assert_int_equal(o.pin_rank, 3);
    assert_int_equal(o.pin_cpu, 1);
}

static void test_sizes_lists_and_flags(void **state)
{
    (void)state;
    tb_options o;
    const char *argv[] = {"rank", "--steps", "7", "--buckets", "1M,64k,4099",
                          "--slow-ranks", "2,5", "--slow-factor", "1.3", "--threads", "16",
                          "--fork", "--mark-after", "3:/tmp/m", "--fail-at", "1:4",
                          "--grouped-buckets", "9", NULL};
    assert_int_equal(parse(&o, 18, argv), 0);
    assert_int_equal(o.steps, 7);
    assert_int_equal(o.nbuckets, 3);
    assert_int_equal(o.buckets[0], 1 << 20);
    assert_int_equal(o.buckets[1], 64 << 10);
    assert_int_equal(o.buckets[2], 4096); /* whole floats */
    assert_int_equal(o.grouped_buckets, 3); /* capped at the bucket count */
    assert_true(tb_is_slow(&o, 2, 0) && tb_is_slow(&o, 5, 6) && !tb_is_slow(&o, 3, 0));
    assert_true(o.slow_factor > 1.29 && o.slow_factor < 1.31);
    assert_int_equal(o.threads, 16);
    assert_true(o.fork_child);
    assert_int_equal(o.mark_after, 3);
    assert_string_equal(o.mark_file, "/tmp/m");
    assert_int_equal(o.fail_rank, 1);
    assert_int_equal(o.fail_step, 4);
    assert_int_equal(o.fail_code, 9);
}

static void test_fault_injection_options(void **state)
{
    (void)state;
    tb_options o;
    const char *argv[] = {"rank", "--fail-at", "2:10:3", "--stop-at", "1:20", "--desync-at",
                          "3:5", NULL};
    assert_int_equal(parse(&o, 7, argv), 0);
    assert_int_equal(o.fail_rank, 2);
    assert_int_equal(o.fail_step, 10);
    assert_int_equal(o.fail_code, 3);
    assert_int_equal(o.stop_rank, 1);
    assert_int_equal(o.stop_step, 20);
    assert_int_equal(o.desync_rank, 3);
    assert_int_equal(o.desync_step, 5);
    const char *none[] = {"rank", NULL};
    assert_int_equal(parse(&o, 1, none), 0);
    assert_int_equal(o.stop_rank, -1);
    assert_int_equal(o.desync_rank, -1);
}

static void test_environment_fallback_and_override(void **state)
{
    (void)state;
    tb_options o;
    setenv("TSC_TESTBED_STEPS", "5", 1);
    setenv("TSC_TESTBED_COMPUTE_US", "123", 1);
    const char *argv[] = {"rank", "--steps", "9", NULL};
    int rc = parse(&o, 3, argv);
    unsetenv("TSC_TESTBED_STEPS");
    unsetenv("TSC_TESTBED_COMPUTE_US");
    assert_int_equal(rc, 0);
    assert_int_equal(o.steps, 9);        /* argv wins */
    assert_int_equal(o.compute_us, 123); /* env fills in */
}

static void test_garbage_is_refused(void **state)
{
    (void)state;
    static const char *const bad[][3] = {
        {"rank", "--steps", "ten"},  {"rank", "--buckets", "1X"},
        {"rank", "--slow-factor", "0"}, {"rank", "--threads", "65"},
        {"rank", "--fail-at", "3"},  {"rank", "--mark-after", "5"},
        {"rank", "--compute-us", "-1"}, {"rank", "--nope", "1"},
        {"rank", "--burn-threads", "1:17"}, {"rank", "--burn-threads", "1"},
        {"rank", "--pin-cpu", "-1:0"}, {"rank", "--nice", "1:20"}, {"rank", "--nice", "1"},
        {"rank", "--cpu-us", "-5"},
        {"rank", "--fail-at", "1:2:300"}, {"rank", "--stop-at", "1"},
        {"rank", "--desync-at", "x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_options o;
        const char *argv[] = {bad[i][0], bad[i][1], bad[i][2], NULL};
        if (parse(&o, 3, argv) == 0)
            fail_msg("accepted %s %s", bad[i][1], bad[i][2]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_host_faults),
        cmocka_unit_test(test_slow_steps),
        cmocka_unit_test(test_sizes_lists_and_flags),
        cmocka_unit_test(test_fault_injection_options),
        cmocka_unit_test(test_environment_fallback_and_override),
        cmocka_unit_test(test_garbage_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
