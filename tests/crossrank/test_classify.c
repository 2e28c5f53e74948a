/* Several slow ranks, one slow host, bursts: each is called what it is,
 * and never a single straggler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"

static size_t count_id(const tsa_findings *f, const char *id)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += !strcmp(f->items[i].id, id);
    return n;
}

/* The defaults, hosts 1 s apart, with the shape and seed a test varies. */
static synth_params seeded_params(int n_ranks, int ranks_per_host, uint64_t seed)
{
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = n_ranks;
    p.ranks_per_host = ranks_per_host;
    p.max_offset_ns = 1000000000ll;
    p.seed = seed;
    return p;
}

static void run(const synth_params *p, tsa_xrank_result *r, tsa_findings *f)
{
    tsa_job *job = synth_job(p, NULL);
    assert_non_null(job);
    assert_int_equal(tsa_xrank_run(job, NULL, r, f), 0);
    synth_job_free(job);   /* the result borrows host names: only test ranks after */
}

/* Two slow ranks on different hosts: load imbalance naming both. */
static void test_two_slow_ranks(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        double sd[32] = {0};
        sd[3] = 0.10;
        sd[20] = 0.06 + 0.01 * (double)seed;
        synth_params p = seeded_params(32, 8, seed);
        p.slowdown = sd;
        tsa_xrank_result r;
        tsa_findings f = {0};
        run(&p, &r, &f);
        assert_null(r.straggler);
        assert_true(r.imbalance);
        assert_int_equal(r.n_imbalanced, 2);
        assert_int_equal(r.imbalanced_ranks[0], 3);
        assert_int_equal(r.imbalanced_ranks[1], 20);
        assert_true(r.imbalance_saved_ns > 0);
        assert_null(r.slow_host);
        assert_int_equal(count_id(&f, "DIST.IMBALANCE"), 1);
        assert_int_equal(count_id(&f, "DIST.STRAGGLER"), 0);
        tsa_findings_free(&f);
        tsa_xrank_free(&r);
    }
}

/* Every rank of one host slow: the host is named. */
static void test_slow_host(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        double sd[32] = {0};
        for (int i = 16; i < 24; i++)
            sd[i] = 0.08;
        synth_params p = seeded_params(32, 8, seed);
        p.slowdown = sd;
        tsa_job *job = synth_job(&p, NULL);
        assert_non_null(job);
        tsa_xrank_result r;
        tsa_findings f = {0};
        assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
        assert_non_null(r.slow_host);
        assert_string_equal(r.slow_host, "node-002");
        assert_int_equal(r.n_slow_host_ranks, 8);
        assert_int_equal(r.slow_host_ranks[0], 16);
        assert_true(r.slow_host_slowdown > 0.07 && r.slow_host_slowdown < 0.09);
        assert_null(r.straggler);
        assert_false(r.imbalance);
        assert_int_equal(count_id(&f, "DIST.SLOW_HOST"), 1);
        tsa_findings_free(&f);
        tsa_xrank_free(&r);
        synth_job_free(job);
    }
}

/* Slow in two bursts of 4 steps: reported intermittent, with the steps. */
static void test_intermittent(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        synth_burst b[2] = {{6, 10, 4, 0.3}, {6, 30, 4, 0.3}};
        synth_params p = seeded_params(16, 4, seed);
        p.n_steps = 60;
        p.bursts = b;
        p.n_bursts = 2;
        tsa_job *job = synth_job(&p, NULL);
        assert_non_null(job);
        tsa_xrank_result r;
        tsa_findings f = {0};
        assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
        assert_int_equal(r.n_bursts, 1);
        assert_int_equal(r.bursts[0].rank, 6);
        /* derived steps start at the first collective: burst steps line up */
        static const uint32_t want[] = {10, 11, 12, 13, 30, 31, 32, 33};
        assert_int_equal(r.bursts[0].n_slow_steps, 8);
        for (size_t i = 0; i < 8; i++)
            assert_int_equal(r.bursts[0].slow_steps[i], want[i]);
        assert_non_null(r.straggler);
        assert_true(r.straggler->intermittent);
        assert_int_equal(r.straggler->rank, 6);
        assert_int_equal(r.straggler->n_slow_steps, 8);
        /* what the bursts cost, against the same run without them */
        synth_params q = p;
        q.n_bursts = 0;
        tsa_job *healthy = synth_job(&q, NULL);
        assert_non_null(healthy);
        double truth = (double)(job->ranks[0].last_ns - healthy->ranks[0].last_ns);
        synth_job_free(healthy);
        double got = (double)r.bursts[0].whatif_saved_ns;
        if (got < 0.75 * truth || got > 1.25 * truth)
            fail_msg("seed %llu: bursts cost %.4f s by the what-if, %.4f s in truth",
                     (unsigned long long)seed, got / 1e9, truth / 1e9);
        assert_int_equal(r.straggler->whatif_saved_ns, r.bursts[0].whatif_saved_ns);
        assert_false(r.imbalance);
        assert_int_equal(count_id(&f, "DIST.INTERMITTENT"), 1);
        assert_int_equal(count_id(&f, "DIST.STRAGGLER"), 0);
        tsa_findings_free(&f);
        tsa_xrank_free(&r);
        synth_job_free(job);
    }
}

/* Lost records (2%) do not make a straggler out of noise nor hide one. */
static void test_missing_records(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        double sd[16] = {0};
        sd[9] = 0.05;
        synth_params p = seeded_params(16, 4, seed);   /* 4: the default */
        p.missing = 0.02;
        p.n_steps = 80;
        tsa_xrank_result r;
        run(&p, &r, NULL);
        assert_null(r.straggler);
        assert_false(r.imbalance);
        tsa_xrank_free(&r);
        p.slowdown = sd;
        run(&p, &r, NULL);
        assert_non_null(r.straggler);
        assert_int_equal(r.straggler->rank, 9);
        tsa_xrank_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_slow_ranks),
        cmocka_unit_test(test_slow_host),
        cmocka_unit_test(test_intermittent),
        cmocka_unit_test(test_missing_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
