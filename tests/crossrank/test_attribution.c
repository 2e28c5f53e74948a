/* The cross-rank pass feeds the verdict and the recoverable attribution
 * (analyzer/findings/attribution.h, verdict.h) on synthetic jobs with known
 * truth: late ranks make the job straggler-bound and are named; their
 * findings come first; the findings' recoverable times add up to at most
 * the wall, exactly, whatever the mix of causes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/analysis.h"
#include "synth_job.h"
#include "driver/analyze.h"

static void assert_disjoint(const tsa_analysis *a)
{
    int64_t sum = 0;
    for (size_t i = 0; i < a->findings.n; i++)
        sum += a->findings.items[i].recoverable_ns;
    if (sum > a->wall_ns)
        fail_msg("findings claim %lld ns, wall is %lld ns", (long long)sum, (long long)a->wall_ns);
}

static tsa_analysis *analyze(tsa_job *job)
{
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    assert_disjoint(a);
    return a;
}

static void test_straggler_named(void **state)
{
    (void)state;
    double sd[8] = {0, 0, 0, 0.25, 0, 0, 0, 0};
    synth_params p;
    synth_defaults(&p);
    p.slowdown = sd;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_analysis *a = analyze(job);
    assert_int_equal(a->verdict, TSA_VERDICT_STRAGGLER_BOUND);
    assert_int_equal(a->verdict_rank, 3);
    assert_string_equal(a->findings.items[0].id, "DIST.STRAGGLER");
    assert_int_equal(a->findings.items[0].rank, 3);
    /* The waiting it causes is its finding's, not COMM.EXPOSED's. */
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, "COMM.EXPOSED"))
            assert_true(a->findings.items[i].recoverable_ns < a->findings.items[0].recoverable_ns);
    tsa_analysis_free(a);
    synth_job_free(job);
}

static void test_slow_host_named(void **state)
{
    (void)state;
    double sd[8] = {0, 0, 0, 0, 0.2, 0.2, 0.2, 0.2};
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = 8;
    p.ranks_per_host = 4;
    p.slowdown = sd;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_analysis *a = analyze(job);
    assert_int_equal(a->verdict, TSA_VERDICT_STRAGGLER_BOUND);
    assert_true(tsa_verdict_name(a->verdict)[0] == 's');
    assert_non_null(strstr(a->verdict_reason, "4, 5, 6, 7"));
    tsa_analysis_free(a);
    synth_job_free(job);
}

static void test_balanced_is_not_straggler_bound(void **state)
{
    (void)state;
    synth_params p;
    synth_defaults(&p);
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_analysis *a = analyze(job);
    assert_true(a->verdict != TSA_VERDICT_STRAGGLER_BOUND);
    assert_int_equal(a->verdict_rank, -1);
    tsa_analysis_free(a);
    synth_job_free(job);
}

/* Random mixes of slow ranks, bursts and clock offsets: never more
 * recoverable time than wall. */
static void test_random_mixes_stay_within_wall(void **state)
{
    (void)state;
    uint64_t x = 12345;
    for (int run = 0; run < 24; run++) {
        double sd[16] = {0};
        int n = 4 + run % 12;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            if ((x >> 33) % 4 == 0)
                sd[i] = (double)((x >> 40) % 50) / 100.0;
        }
        synth_burst burst = {.rank = run % n, .first_step = 10, .n_steps = 5, .slowdown = 0.8};
        synth_params p;
        synth_defaults(&p);
        p.n_ranks = n;
        p.n_steps = 30;
        p.slowdown = sd;
        p.seed = (uint64_t)run + 1;
        p.bursts = run % 3 ? NULL : &burst;
        p.n_bursts = run % 3 ? 0 : 1;
        tsa_job *job = synth_job(&p, NULL);
        assert_non_null(job);
        tsa_analysis *a = analyze(job);
        tsa_analysis_free(a);
        synth_job_free(job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straggler_named),
        cmocka_unit_test(test_slow_host_named),
        cmocka_unit_test(test_balanced_is_not_straggler_bound),
        cmocka_unit_test(test_random_mixes_stay_within_wall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
