/* Ground truth for the straggler verdict: injected slowdowns on 2 to 256
 * ranks with jitter and clocks seconds apart are named, balanced runs
 * never are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"

static const int sizes[] = {2, 4, 8, 16, 64, 256};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void base_params(synth_params *p, int n, uint64_t seed)
{
    synth_defaults(p);
    p->n_ranks = n;
    p->ranks_per_host = n >= 8 ? 8 : 1;
    p->n_steps = 50;
    p->per_step = 2;
    p->jitter = 0.01;
    p->max_offset_ns = 2000000000ll;
    p->seed = seed;
}

/* End of the run on rank 0's clock (host 0 has the true clock). */
static int64_t job_end(const tsa_job *job)
{
    return job->ranks[0].last_ns;
}

static int64_t healthy_end(const synth_params *p)
{
    synth_params q = *p;
    q.slowdown = NULL;
    tsa_job *job = synth_job(&q, NULL);
    assert_non_null(job);
    int64_t end = job_end(job);
    synth_job_free(job);
    return end;
}

/* From 5% slowdown and 50 steps, the right rank in every trial. */
static void test_named_from_5_percent(void **state)
{
    (void)state;
    static const double slow[] = {0.05, 0.10, 0.20, 0.50};
    for (size_t k = 0; k < N_SIZES; k++) {
        int n = sizes[k];
        double *sd = calloc((size_t)n, sizeof *sd);
        assert_non_null(sd);
        for (size_t j = 0; j < sizeof slow / sizeof slow[0]; j++) {
            for (uint64_t seed = 1; seed <= 3; seed++) {
                int victim = (int)((seed * 7919 + j * 31) % (uint64_t)n);
                memset(sd, 0, (size_t)n * sizeof *sd);
                sd[victim] = slow[j];
                synth_params p;
                base_params(&p, n, seed * 100 + j);
                p.slowdown = sd;
                tsa_job *job = synth_job(&p, NULL);
                assert_non_null(job);
                tsa_xrank_result r;
                tsa_findings f = {0};
                assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
                if (!r.straggler || r.straggler->rank != victim)
                    fail_msg("n=%d slowdown=%.2f seed=%llu: expected rank %d, got %d", n,
                             slow[j], (unsigned long long)seed, victim,
                             r.straggler ? r.straggler->rank : -1);
                assert_false(r.straggler->intermittent);
                assert_true(r.straggler->z >= 3.0);
                /* the measured slowdown is the injected one, within the jitter */
                assert_true(r.straggler->slowdown > slow[j] - 0.01);
                assert_true(r.straggler->slowdown < slow[j] + 0.01);
                assert_false(r.imbalance);
                assert_null(r.slow_host);
                /* what-if against the truth: the same run (same jitter draws)
                 * without the slowdown */
                double expect = (double)(job_end(job) - healthy_end(&p));
                double got = (double)r.straggler->whatif_saved_ns;
                if (got < 0.75 * expect || got > 1.25 * expect)
                    fail_msg("n=%d slowdown=%.2f: what-if %.4f s, truth %.4f s", n,
                             slow[j], got / 1e9, expect / 1e9);
                assert_true(r.straggler->wall_lost_ns > 0);
                size_t k2 = 0;
                for (size_t i = 0; i < f.n; i++)
                    if (!strcmp(f.items[i].id, "DIST.STRAGGLER")) {
                        k2++;
                        assert_int_equal(f.items[i].rank, victim);
                        assert_true(f.items[i].severity >= TSA_SEV_WARNING);
                        assert_true(f.items[i].recoverable_s > 0);
                        /* many steps: "persistent"; a saving in units, never "0.00 s" */
                        assert_non_null(strstr(f.items[i].title, "persistent straggler"));
                        assert_null(strstr(f.items[i].title, " 0.00 s"));
                    }
                assert_int_equal(k2, 1);
                tsa_findings_free(&f);
                tsa_xrank_free(&r);
                synth_job_free(job);
            }
        }
        free(sd);
    }
}

/* The bar itself, 5% and 50 steps, over many seeds and victims. */
static void test_five_percent_many_seeds(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_SIZES; k++) {
        int n = sizes[k];
        double *sd = calloc((size_t)n, sizeof *sd);
        assert_non_null(sd);
        for (uint64_t seed = 1; seed <= 20; seed++) {
            int victim = (int)((seed * 2654435761u) % (uint64_t)n);
            memset(sd, 0, (size_t)n * sizeof *sd);
            sd[victim] = 0.05;
            synth_params p;
            base_params(&p, n, seed + 9000);
            p.slowdown = sd;
            tsa_job *job = synth_job(&p, NULL);
            assert_non_null(job);
            tsa_xrank_result r;
            assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
            if (!r.straggler || r.straggler->rank != victim)
                fail_msg("n=%d seed=%llu: expected rank %d, got %d", n,
                         (unsigned long long)seed, victim, r.straggler ? r.straggler->rank : -1);
            tsa_xrank_free(&r);
            synth_job_free(job);
        }
        free(sd);
    }
}

/* 2%: below the materiality bar; whatever is said must not be wrong. */
static void test_two_percent_never_wrong(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_SIZES; k++) {
        int n = sizes[k];
        double *sd = calloc((size_t)n, sizeof *sd);
        assert_non_null(sd);
        int victim = n - 1;
        sd[victim] = 0.02;
        for (uint64_t seed = 1; seed <= 3; seed++) {
            synth_params p;
            base_params(&p, n, seed + 500);
            p.slowdown = sd;
            tsa_job *job = synth_job(&p, NULL);
            assert_non_null(job);
            tsa_xrank_result r;
            assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
            if (r.straggler)
                assert_int_equal(r.straggler->rank, victim);
            assert_false(r.imbalance);
            tsa_xrank_free(&r);
            synth_job_free(job);
        }
        free(sd);
    }
}

/* Balanced runs, 200 seeds over all sizes: nothing named, no finding. */
static void test_balanced_never_named(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        int n = sizes[seed % N_SIZES];
        synth_params p;
        base_params(&p, n, seed + 1000);
        p.jitter = 0.005 + 0.02 * (double)(seed % 5) / 4.0;   /* 0.5% .. 2.5% */
        tsa_job *job = synth_job(&p, NULL);
        assert_non_null(job);
        tsa_xrank_result r;
        tsa_findings f = {0};
        assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
        if (r.straggler || r.imbalance || r.slow_host || r.n_bursts || f.n)
            fail_msg("seed %llu n=%d: straggler %d imbalance %d slow host %s bursts %zu "
                     "findings %zu (%s)", (unsigned long long)seed, n,
                     r.straggler ? r.straggler->rank : -1, r.imbalance,
                     r.slow_host ? r.slow_host : "-", r.n_bursts, f.n,
                     f.n ? f.items[0].title : "");
        tsa_findings_free(&f);
        tsa_xrank_free(&r);
        synth_job_free(job);
    }
}

/* The step pass's steps, when present, are used and agree. */
static void test_model_steps(void **state)
{
    (void)state;
    double sd[8] = {0, 0, 0, 0, 0, 0.08, 0, 0};
    synth_params p;
    base_params(&p, 8, 77);
    p.slowdown = sd;
    p.with_steps = 1;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    assert_int_equal(r.step_source, TSA_XSTEPS_MODEL);
    assert_int_equal(r.steps, 49);   /* the first step has no measured work */
    assert_non_null(r.straggler);
    assert_int_equal(r.straggler->rank, 5);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

/* Steps that cover no calls (e.g. from NVTX only): derived instead. */
static void test_empty_model_steps(void **state)
{
    (void)state;
    double sd[8] = {0, 0, 0.08, 0, 0, 0, 0, 0};
    synth_params p;
    base_params(&p, 8, 79);
    p.slowdown = sd;
    p.with_steps = 1;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    for (size_t r = 0; r < 8; r++)
        for (size_t s = 0; s < job->ranks[r].n_steps; s++)
            job->ranks[r].steps[s].n_nccl = 0;
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    assert_int_equal(r.step_source, TSA_XSTEPS_DERIVED);
    assert_non_null(r.straggler);
    assert_int_equal(r.straggler->rank, 2);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

/* Without steps the period of the collective sequence gives them. */
static void test_derived_steps(void **state)
{
    (void)state;
    double sd[4] = {0, 0.1, 0, 0};
    synth_params p;
    base_params(&p, 4, 78);
    p.per_step = 5;
    p.slowdown = sd;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    assert_int_equal(r.step_source, TSA_XSTEPS_DERIVED);
    assert_int_equal(r.steps, 49);
    assert_int_equal(r.instances, 250);
    assert_non_null(r.straggler);
    assert_int_equal(r.straggler->rank, 1);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_from_5_percent),
        cmocka_unit_test(test_five_percent_many_seeds),
        cmocka_unit_test(test_two_percent_never_wrong),
        cmocka_unit_test(test_balanced_never_named),
        cmocka_unit_test(test_model_steps),
        cmocka_unit_test(test_derived_steps),
        cmocka_unit_test(test_empty_model_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
