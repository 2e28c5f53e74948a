/* The budget's levels (preload/cost_levels.h): which level is taken next
 * given what each part cost in the period, the cut each part sees, and
 * the step back up, from hand-written part costs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cost_levels.h"

#define TEL TSC_COST_PART_TELEMETRY
#define GPU TSC_COST_PART_GPU
#define NP TSC_COST_PART_NCCL_DETAIL

static void the_order_is_telemetry_kernels_plugin(void **state)
{
    (void)state;
    size_t n;
    const tsc_cost_level_def *t = tsc_cost_level_table(&n);
    assert_int_equal(n, 4);
    assert_int_equal(t[0].part, TEL);
    assert_int_equal(t[1].part, TEL);
    assert_int_equal(t[2].part, GPU);
    assert_int_equal(t[3].part, NP);
    for (size_t i = 0; i < n; i++)
        assert_true(strlen(t[i].what) < 40); /* the analyzer keeps 39 characters */
}

static void every_part_costly_takes_them_in_order(void **state)
{
    (void)state;
    tsc_cost_ladder l = {0};
    const uint64_t part[TSC_COST_PARTS] = {300, 300, 300};
    assert_string_equal(tsc_cost_ladder_what(&l), "full detail");
    for (int want = 0; want < 4; want++) {
        int i = tsc_cost_next_level(&l, part, 1000);
        assert_int_equal(i, want);
        tsc_cost_ladder_take(&l, i);
    }
    assert_int_equal(tsc_cost_next_level(&l, part, 1000), -1);
    assert_int_equal(l.depth, 4);
    assert_int_equal(tsc_cost_ladder_cut(&l, TEL), 2);
    assert_int_equal(tsc_cost_ladder_cut(&l, GPU), 1);
    assert_int_equal(tsc_cost_ladder_cut(&l, NP), 1);
    assert_string_equal(tsc_cost_ladder_what(&l), "fewer NCCL plugin events (collectives)");
}

/* A part under a quarter of the cost is passed over: its level would lose
 * records for (almost) nothing. */
static void a_level_that_cuts_little_is_skipped(void **state)
{
    (void)state;
    tsc_cost_ladder l = {0};
    uint64_t part[TSC_COST_PARTS] = {249, 0, 250};
    assert_int_equal(tsc_cost_next_level(&l, part, 1000), 3);
    tsc_cost_ladder_take(&l, 3);
    assert_int_equal(tsc_cost_ladder_cut(&l, TEL), 0);
    assert_int_equal(tsc_cost_ladder_cut(&l, NP), 1);
    /* then the GPU grows: its level, while the plugin's stays */
    part[GPU] = 600;
    assert_int_equal(tsc_cost_next_level(&l, part, 1000), 2);
    tsc_cost_ladder_take(&l, 2);
    assert_string_equal(tsc_cost_ladder_what(&l), "no per-kernel records (light)");
    /* nothing costs: nothing to take */
    const uint64_t none[TSC_COST_PARTS] = {0, 0, 0};
    assert_int_equal(tsc_cost_next_level(&l, none, 0), -1);
}

static void a_step_up_undoes_the_last_step_down(void **state)
{
    (void)state;
    tsc_cost_ladder l = {0};
    const uint64_t part[TSC_COST_PARTS] = {0, 500, 500};
    tsc_cost_ladder_take(&l, tsc_cost_next_level(&l, part, 1000)); /* GPU */
    tsc_cost_ladder_take(&l, tsc_cost_next_level(&l, part, 1000)); /* plugin */
    tsc_cost_ladder_take(&l, 3);                                    /* taken twice: once */
    assert_int_equal(l.depth, 2);
    tsc_cost_ladder_undo(&l);
    assert_int_equal(tsc_cost_ladder_cut(&l, NP), 0);
    assert_int_equal(tsc_cost_ladder_cut(&l, GPU), 1);
    assert_string_equal(tsc_cost_ladder_what(&l), "no per-kernel records (light)");
    tsc_cost_ladder_undo(&l);
    tsc_cost_ladder_undo(&l);
    assert_int_equal(l.depth, 0);
    assert_string_equal(tsc_cost_ladder_what(&l), "full detail");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_order_is_telemetry_kernels_plugin),
        cmocka_unit_test(every_part_costly_takes_them_in_order),
        cmocka_unit_test(a_level_that_cuts_little_is_skipped),
        cmocka_unit_test(a_step_up_undoes_the_last_step_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
