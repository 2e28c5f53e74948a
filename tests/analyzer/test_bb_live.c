/* The job-level series of `tscope-report live` (passes/bb_live.c) from
 * hand-made summaries, with exact values: complete steps, the slowest
 * rank and its z-score, straggler persistence and its two conditions,
 * ties, lost summaries, a lagging rank; the data stall and MFU from the
 * step extras. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "passes/bb_live.h"
#include "report/live_prom.h"

/* own_us(rank, step): the rank's time outside NCCL; every step lasts
 * 10 ms on every rank (a synchronous job), the rest is NCCL time.
 * extra(rank, step): the step's extra (flags 0: none); NULL: no extras. */
typedef uint64_t (*own_fn)(int rank, uint64_t step);
typedef tsc_step_extra (*extra_fn)(int rank, uint64_t step);

/* The ranks order[0..nranks-1] in that order (NULL: 0, 1, ...), the order
 * the live server finds their files in. */
static void feed_in(tsa_live *L, const int *order, int nranks, uint64_t from, uint64_t to,
                    own_fn own, extra_fn extra)
{
    for (int k = 0; k < nranks; k++) {
        int r = order ? order[k] : k;
        long i = tsa_live_rank_index(L, r);
        assert_true(i >= 0);
        for (uint64_t s = from; s < to; s++) {
            uint64_t o = own(r, s) * 1000;
            tsc_step_summary x = {.step = s, .opener_seq = 2 * s,
                                  .start_ns = 1000000000ull + s * 10000000ull,
                                  .end_ns = 1000000000ull + (s + 1) * 10000000ull + (uint64_t)r,
                                  .nccl_ns = 10000000ull + (uint64_t)r - o, .dropped = 1};
            tsc_step_extra e = extra ? extra(r, s) : (tsc_step_extra){0};
            e.step = s;
            tsa_live_add(L, (size_t)i, &x, extra ? &e : NULL, 1);
        }
    }
}

static void feed(tsa_live *L, int nranks, uint64_t from, uint64_t to, own_fn own,
                 extra_fn extra)
{
    feed_in(L, NULL, nranks, from, to, own, extra);
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
    feed(L, 4, 0, 200, rank2_slow, NULL);
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
    feed(L, 4, 0, 200, rotating, NULL);
    tsa_live_update(L);
    assert_true(L->top_share == 0.25);
    assert_true(fabs(L->top_z) < 1e-12);
    assert_false(L->named);
    tsa_live_free(L);

    L = live(100);
    feed(L, 4, 0, 200, barely, NULL);
    tsa_live_update(L);
    assert_int_equal(L->ranks[L->top].rank, 1);
    assert_true(L->top_share == 1.0 && L->top_z > 17);
    assert_true(fabs(L->top_slowdown - 0.001) < 1e-9);
    assert_false(L->named); /* under --min-slowdown 0.03 */
    tsa_live_free(L);

    L = live(100);
    feed(L, 4, 0, 50, all_equal, NULL);
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
    feed(L, 4, 0, 50, rank2_slow, NULL);
    feed(L, 4, 51, 120, rank2_slow, NULL); /* step 50: nobody's */
    long i3 = tsa_live_rank_index(L, 3);
    for (int r = 0; r < 3; r++) { /* ranks 0-2 go on to step 149 */
        long i = tsa_live_rank_index(L, r);
        for (uint64_t s = 120; s < 150; s++) {
            tsc_step_summary x = {.step = s, .start_ns = s * 10000000ull,
                                  .end_ns = (s + 1) * 10000000ull};
            tsa_live_add(L, (size_t)i, &x, NULL, 1);
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
    feed(L, 2, 0, 20, rank2_slow, NULL);
    tsa_live_update(L);
    assert_true(isnan(L->last_z));
    tsa_live_free(L);

    /* a world of 4 whose rank 3 has no file yet: nothing completes over
     * three ranks; once it comes, every step is over four */
    L = live(100);
    L->expected = 4;
    feed(L, 3, 0, 30, rank2_slow, NULL);
    tsa_live_update(L);
    assert_int_equal(L->complete, 0);
    long i3b = tsa_live_rank_index(L, 3);
    for (uint64_t s = 0; s < 30; s++) {
        tsc_step_summary x = {.step = s, .start_ns = 0, .end_ns = 20000000}; /* 20 ms */
        tsa_live_add(L, (size_t)i3b, &x, NULL, 1);
    }
    tsa_live_update(L);
    assert_int_equal(L->complete, 30);
    assert_int_equal(L->job_step_ns, 30 * 20000000ull);
    tsa_live_free(L);
}

/* Data stall 0, 1000, 2000, 0 us + s ns on ranks 0-3; GEMM time at peak
 * on ranks 0 and 1 only, 100 and 200 ns a step from step 100 on (999999
 * before: outside the window of 100). */
static tsc_step_extra spread(int r, uint64_t s)
{
    tsc_step_extra x = {.data_stall_ns = 1000 * (uint64_t)(r % 3) + s, .flags = TSC_STEP_X_STALL};
    if (r < 2) {
        x.flags |= TSC_STEP_X_GEMM | TSC_STEP_X_PEAK;
        x.gemm_peak_ns = s < 100 ? 999999 : 100 * (uint64_t)(r + 1);
    }
    return x;
}

static tsc_step_extra tied(int r, uint64_t s)
{
    (void)s;
    return (tsc_step_extra){.data_stall_ns = r < 2 ? 5000 : 1000, .flags = TSC_STEP_X_STALL};
}

static tsc_step_extra nothing(int r, uint64_t s)
{
    (void)r, (void)s;
    return (tsc_step_extra){0};
}

/* The data stall and MFU series with exact values: the last step's median
 * over four ranks (the mean of the middle two), its largest and rank (a
 * tie: -1), the total and the window's ratio; the MFU as the mean over
 * the ranks that measured it, of the window's steps only; nothing where
 * no rank measured anything. */
static void test_data_stall_and_mfu(void **state)
{
    (void)state;
    tsa_live *L = live(100);
    feed(L, 4, 0, 200, all_equal, spread);
    tsa_live_update(L);
    assert_int_equal(L->complete, 200);
    assert_int_equal(L->last_stall_ranks, 4);
    assert_true(L->last_stall_median_ns == (199.0 + 1199.0) / 2);
    assert_int_equal(L->last_stall_max_ns, 2199);
    assert_int_equal(L->ranks[L->last_stall_max].rank, 2);
    uint64_t total = 0, win = 0, win_dur = 0;
    for (uint64_t s = 0; s < 200; s++)
        for (int r = 0; r < 4; r++) {
            total += 1000 * (uint64_t)(r % 3) + s;
            if (s >= 100) {
                win += 1000 * (uint64_t)(r % 3) + s;
                win_dur += 10000000ull + (uint64_t)r;
            }
        }
    assert_int_equal(L->stall_rank_steps, 800);
    assert_int_equal(L->stall_ns, total);
    assert_true(L->stall_ratio == (double)win / (double)win_dur);
    double m0 = 100.0 * 100 / (100.0 * 10000000), m1 = 200.0 * 100 / (100.0 * 10000001);
    assert_int_equal(L->mfu_ranks, 2);
    assert_true(L->mfu == (m0 + m1) / 2);
    char *text;
    size_t len;
    FILE *m = open_memstream(&text, &len);
    tsa_live_write_prom(m, L, "j", 4);
    fclose(m);
    assert_non_null(strstr(text, "tscope_job_last_step_data_stall_max_rank{job=\"j\"} 2\n"));
    assert_non_null(strstr(text, "tscope_job_mfu_ratio{job=\"j\"} "));
    free(text);
    tsa_live_free(L);

    L = live(100);
    feed(L, 4, 0, 20, all_equal, tied);
    tsa_live_update(L);
    assert_int_equal(L->last_stall_max, -1);
    assert_int_equal(L->last_stall_max_ns, 5000);
    assert_true(L->last_stall_median_ns == 3000);
    assert_true(isnan(L->mfu));
    tsa_live_free(L);

    L = live(100);
    feed(L, 4, 0, 20, all_equal, nothing);
    tsa_live_update(L);
    assert_int_equal(L->complete, 20);
    assert_int_equal(L->stall_rank_steps, 0);
    assert_int_equal(L->last_stall_ranks, 0);
    assert_true(isnan(L->stall_ratio) && isnan(L->mfu));
    m = open_memstream(&text, &len);
    tsa_live_write_prom(m, L, "j", 4);
    fclose(m);
    assert_null(strstr(text, "stall"));
    assert_null(strstr(text, "mfu"));
    free(text);
    tsa_live_free(L);
}

/* Eight ranks with uneven times outside NCCL (the z-score's sums are then
 * not exact in doubles) and a step-dependent straggler. */
static uint64_t uneven(int r, uint64_t s)
{
    return r == 5 ? 2500 + s % 7 : 1000 + (uint64_t)(r * r * 37 % 101) + s % 5 * (uint64_t)r;
}

static char *prom_text(const tsa_live *L)
{
    char *text;
    size_t len;
    FILE *m = open_memstream(&text, &len);
    tsa_live_write_prom(m, L, "j", 8);
    fclose(m);
    return text;
}

/* The same summaries give the same text whichever rank's file was found
 * first: sums over ranks go in rank order, a tie for the most frequent
 * slowest or the most lagging rank goes to the lowest rank. */
static void test_order_of_appearance(void **state)
{
    (void)state;
    const int up[] = {0, 1, 2, 3, 4, 5, 6, 7}, down[] = {7, 6, 5, 4, 3, 2, 1, 0},
              mixed[] = {3, 7, 0, 5, 2, 6, 1, 4};
    const int *orders[] = {up, down, mixed};
    char *want[3] = {0};
    for (int o = 0; o < 3; o++) {
        tsa_live *L = live(100);
        /* last step 297: its z-score summed in file order differs in the
         * last digit */
        feed_in(L, orders[o], 8, 0, 298, uneven, NULL);
        tsa_live_update(L);
        assert_int_equal(L->ranks[L->top].rank, 5);
        assert_false(isnan(L->last_z));
        char *a = prom_text(L);
        tsa_live_free(L);

        int four[4], n4 = 0; /* ranks 0-3 in the same order */
        for (int k = 0; k < 8; k++)
            if (orders[o][k] < 4)
                four[n4++] = orders[o][k];
        L = live(100); /* every rank slowest in turn: a four-way tie */
        feed_in(L, four, 4, 0, 200, rotating, NULL);
        /* ranks 1 and 3 stop at step 200: equally behind */
        const int late[] = {2, 0};
        feed_in(L, late, 2, 200, 260, rotating, NULL);
        tsa_live_update(L);
        assert_int_equal(L->ranks[L->top].rank, 0);
        assert_int_equal(L->ranks[L->lagging].rank, 1);
        char *b = prom_text(L);
        tsa_live_free(L);

        size_t na = strlen(a), nb = strlen(b);
        want[o] = malloc(na + nb + 1);
        assert_non_null(want[o]);
        memcpy(want[o], a, na);
        memcpy(want[o] + na, b, nb + 1);
        free(a);
        free(b);
    }
    assert_string_equal(want[0], want[1]);
    assert_string_equal(want[0], want[2]);
    for (int o = 0; o < 3; o++)
        free(want[o]);
}

/* The job's self-cost ratio sums the ranks' figures: the same text whichever
 * order the ranks' files were found in (the live server finds them as they
 * appear, `live --once` all at once).  0.1 + 0.2 + 0.3 ms and 0.3 + 0.2 +
 * 0.1 ms are different doubles, so a sum in file order differs in the last
 * digit; an inactive (replaced) file and one with no figure are left out. */
static char *self_cost_text(const int *order, size_t n)
{
    tsa_bb_source src[5];
    memset(src, 0, sizeof src);
    for (size_t i = 0; i < n; i++) {
        int r = order[i];
        src[i].rank = r;
        src[i].active = r != 3;
        src[i].cost.recorded = r != 4;
        src[i].cost.wall_ns = 1000000000ull;
        src[i].cost.writer_ns = 100000ull * (uint64_t)(r + 1);
    }
    tsa_bb_follow fw = {.src = src, .n = n};
    char *text;
    size_t len;
    FILE *m = open_memstream(&text, &len);
    tsa_live_write_self_cost(m, &fw, "j");
    fclose(m);
    return text;
}

static void test_self_cost_sum_in_rank_order(void **state)
{
    (void)state;
    assert_true(0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1);
    const int up[] = {0, 1, 2, 3, 4}, down[] = {4, 3, 2, 1, 0}, mixed[] = {2, 4, 0, 3, 1};
    char *a = self_cost_text(up, 5), *b = self_cost_text(down, 5), *c = self_cost_text(mixed, 5);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    char want[128];
    snprintf(want, sizeof want, "tscope_job_self_cost_ratio{job=\"j\"} %.17g\n",
             (0.1 + 0.2 + 0.3) / 3000.0);
    assert_non_null(strstr(a, want));
    const char *r0 = strstr(a, "rank=\"0\""), *r1 = strstr(a, "rank=\"1\""),
               *r2 = strstr(a, "rank=\"2\"");
    assert_true(r0 && r1 && r2 && r0 < r1 && r1 < r2);
    assert_null(strstr(a, "rank=\"3\""));
    assert_null(strstr(a, "rank=\"4\""));
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_persistent_straggler),
        cmocka_unit_test(test_noise_immaterial_and_ties),
        cmocka_unit_test(test_lost_lagging_and_two_ranks),
        cmocka_unit_test(test_data_stall_and_mfu),
        cmocka_unit_test(test_self_cost_sum_in_rank_order),
        cmocka_unit_test(test_order_of_appearance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
