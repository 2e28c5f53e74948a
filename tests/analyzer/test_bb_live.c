/* The job-level series of `tscope-report live` (passes/bb_live.c) from
 * hand-made summaries, with exact values: complete steps, the slowest
 * rank and its z-score, straggler persistence and its two conditions,
 * ties, lost summaries, a lagging rank. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "passes/bb_live.h"

/* own_us(rank, step): the rank's time outside NCCL; every step lasts
 * 10 ms on every rank (a synchronous job), the rest is NCCL time. */
typedef uint64_t (*own_fn)(int rank, uint64_t step);

static void feed(tsa_live *L, int nranks, uint64_t from, uint64_t to, own_fn own)
{
    for (int r = 0; r < nranks; r++) {
        long i = tsa_live_rank_index(L, r);
        assert_true(i >= 0);
        for (uint64_t s = from; s < to; s++) {
            uint64_t o = own(r, s) * 1000;
            tsc_step_summary x = {.step = s, .opener_seq = 2 * s,
                                  .start_ns = 1000000000ull + s * 10000000ull,
                                  .end_ns = 1000000000ull + (s + 1) * 10000000ull + (uint64_t)r,
                                  .nccl_ns = 10000000ull + (uint64_t)r - o, .dropped = 1};
            tsa_live_add(L, (size_t)i, &x, 1);
        }
    }
}

static tsa_live *live(uint32_t window)
{
    static tsa_live L;
    tsa_live_opts o;
    tsa_live_default_opts(&o);
    o.window = window;
    assert_int_equal(tsa_live_init(&L, &o), 0);
    return &L;
}

static uint64_t rank2_slow(int r, uint64_t s) { return r == 2 ? 3000 : 1000 + (uint64_t)r + s % 3; }

static void test_persistent_straggler(void **state)
{
    (void)state;
    tsa_live *L = live(100);
    feed(L, 4, 0, 200, rank2_slow);
    tsa_live_update(L);
    assert_int_equal(L->complete, 200);
    assert_int_equal(L->incomplete, 0);
    assert_int_equal(L->last_step, 199);
    assert_int_equal(L->last_max_ns, 10000003); /* rank 3's: 10 ms + 3 ns */
    assert_true(L->last_median_ns == 10000001.5);
    assert_int_equal(L->ranks[L->last_slowest].rank, 2);
    /* step 199: others' own 1000+0+1, 1001+1, 1003+1 us (s % 3 = 1) */
    double o[3] = {1001e3, 1002e3, 1004e3}, mean = (o[0] + o[1] + o[2]) / 3, sq = 0;
    for (int i = 0; i < 3; i++)
        sq += (o[i] - mean) * (o[i] - mean);
    assert_true(fabs(L->last_z - (3000e3 - mean) / sqrt(sq / 2)) < 1e-9);
    assert_int_equal(L->win_n, 100);
    assert_true(L->named);
    assert_int_equal(L->ranks[L->top].rank, 2);
    assert_true(L->top_share == 1.0);
    assert_true(fabs(L->top_z - 75 / sqrt(100 * 0.25 * 0.75)) < 1e-12);
    /* the step's median rank: (1001 + 1003)/2 + s%3 us; over steps
     * 100-199 (s%3 = 2: 33 steps, 1: 34, 0: 33) the median of
     * 3000 / that - 1 is at s%3 = 1 */
    assert_true(fabs(L->top_slowdown - (3000.0 / 1003 - 1)) < 1e-12);
    uint64_t dropped = 0;
    for (size_t i = 0; i < L->n_ranks; i++)
        dropped += L->ranks[i].dropped;
    assert_int_equal(dropped, 800);
    assert_int_equal(L->lag_steps, 0);
    assert_int_equal(L->lagging, -1);
    tsa_live_free(L);
}

static uint64_t rotating(int r, uint64_t s) { return (uint64_t)r == s % 4 ? 1010 : 1000; }

static uint64_t barely(int r, uint64_t s)
{
    (void)s;
    return r == 1 ? 1001 : 1000; /* always slowest, by 0.1% */
}

static uint64_t all_equal(int r, uint64_t s)
{
    (void)r;
    (void)s;
    return 1000;
}

/* A rank slowest in turn is not named; one always slowest by 0.1% is
 * persistent but not material; exact ties count for nobody. */
static void test_noise_immaterial_and_ties(void **state)
{
    (void)state;
    tsa_live *L = live(100);
    feed(L, 4, 0, 200, rotating);
    tsa_live_update(L);
    assert_true(L->top_share == 0.25);
    assert_true(fabs(L->top_z) < 1e-12);
    assert_false(L->named);
    tsa_live_free(L);

    L = live(100);
    feed(L, 4, 0, 200, barely);
    tsa_live_update(L);
    assert_int_equal(L->ranks[L->top].rank, 1);
    assert_true(L->top_share == 1.0 && L->top_z > 17);
    assert_true(fabs(L->top_slowdown - 0.001) < 1e-9);
    assert_false(L->named); /* under --min-slowdown 0.03 */
    tsa_live_free(L);

    L = live(100);
    feed(L, 4, 0, 50, all_equal);
    tsa_live_update(L);
    assert_int_equal(L->last_slowest, -1);
    assert_int_equal(L->top, -1);
    assert_false(L->named);
    tsa_live_free(L);
}

/* A lost summary makes its step incomplete; a rank behind holds the job
 * back and is named as lagging; two ranks give no z-score. */
static void test_lost_lagging_and_two_ranks(void **state)
{
    (void)state;
    tsa_live *L = live(100);
    feed(L, 4, 0, 50, rank2_slow);
    feed(L, 4, 51, 120, rank2_slow); /* step 50: nobody's */
    long i3 = tsa_live_rank_index(L, 3);
    for (int r = 0; r < 3; r++) { /* ranks 0-2 go on to step 149 */
        long i = tsa_live_rank_index(L, r);
        for (uint64_t s = 120; s < 150; s++) {
            tsc_step_summary x = {.step = s, .start_ns = s * 10000000ull,
                                  .end_ns = (s + 1) * 10000000ull};
            tsa_live_add(L, (size_t)i, &x, 1);
        }
    }
    tsa_live_update(L);
    assert_int_equal(L->complete, 119);
    assert_int_equal(L->incomplete, 1);
    assert_int_equal(L->lag_steps, 30);
    assert_int_equal(L->lagging, i3);
    assert_int_equal(L->next, 120);
    tsa_live_free(L);

    L = live(100);
    feed(L, 2, 0, 20, rank2_slow);
    tsa_live_update(L);
    assert_true(isnan(L->last_z));
    tsa_live_free(L);

    /* a world of 4 whose rank 3 has no file yet: nothing completes over
     * three ranks; once it comes, every step is over four */
    L = live(100);
    L->expected = 4;
    feed(L, 3, 0, 30, rank2_slow);
    tsa_live_update(L);
    assert_int_equal(L->complete, 0);
    long i3b = tsa_live_rank_index(L, 3);
    for (uint64_t s = 0; s < 30; s++) {
        tsc_step_summary x = {.step = s, .start_ns = 0, .end_ns = 20000000}; /* 20 ms */
        tsa_live_add(L, (size_t)i3b, &x, 1);
    }
    tsa_live_update(L);
    assert_int_equal(L->complete, 30);
    assert_int_equal(L->job_step_ns, 30 * 20000000ull);
    tsa_live_free(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_persistent_straggler),
        cmocka_unit_test(test_noise_immaterial_and_ties),
        cmocka_unit_test(test_lost_lagging_and_two_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
