/* Blame arithmetic on a run without jitter, where every figure is exact:
 * 4 ranks on 2 hosts seconds apart, rank 2 does 110 ms of work per step
 * where the others do 100 ms, 1 ms transfer, 50 steps of one AllReduce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"

#define MS 1000000ll

static void exact_params(synth_params *p, const double *sd)
{
    synth_defaults(p);
    p->n_ranks = 4;
    p->ranks_per_host = 2;
    p->n_steps = 50;
    p->per_step = 1;
    p->jitter = 0;
    p->end_jitter_ns = 0;
    p->max_offset_ns = 3000000000ll;
    p->slowdown = sd;
}

static void test_exact_blame(void **state)
{
    (void)state;
    double sd[4] = {0, 0, 0.10, 0};
    synth_params p;
    exact_params(&p, sd);
    int64_t truth[4];
    tsa_job *job = synth_job(&p, truth);
    assert_non_null(job);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(job->ranks[i].clock_offset_ns, truth[i]);
    assert_int_equal(r.clock_residual_ns, 0);
    assert_int_equal(r.instances, 50);
    assert_int_equal(r.steps, 49);   /* no work figure before the first collective */
    for (int i = 0; i < 4; i++) {
        const tsa_rank_blame *b = &r.ranks[i];
        assert_int_equal(b->collectives, 50);
        assert_int_equal(b->transfer_ns, 50 * MS);
        if (i == 2) {
            assert_int_equal(b->arrived_last, 50);
            assert_true(b->arrived_last_share == 1.0);
            assert_int_equal(b->wait_ns, 0);
            assert_int_equal(b->blame_ns, 3 * 10 * MS * 50);
            assert_int_equal(b->wall_lost_ns, 10 * MS * 50);
            assert_int_equal(b->steps_last, 49);
            assert_int_equal(b->compute_median_ns, 110 * MS);
            assert_true(fabs(b->compute_rel_median - 1.1) < 1e-9);
            assert_true(fabs(b->slowdown - 0.10) < 1e-9);
            assert_true(b->slow);
        } else {
            assert_int_equal(b->arrived_last, 0);
            assert_int_equal(b->wait_ns, 10 * MS * 50);
            assert_int_equal(b->blame_ns, 0);
            assert_int_equal(b->steps_last, 0);
            assert_int_equal(b->compute_median_ns, 100 * MS);
            assert_false(b->slow);
        }
    }
    assert_non_null(r.straggler);
    assert_int_equal(r.straggler->rank, 2);
    assert_string_equal(r.straggler->host, "node-001");
    /* 49 x 10 ms: the first collective has no measured work to trim */
    assert_int_equal(r.straggler->whatif_saved_ns, 490 * MS);
    assert_int_equal(r.straggler->whatif_step_saved_ns, 10 * MS);
    assert_int_equal(r.straggler->wall_lost_ns, 500 * MS);
    /* z of 49 last steps out of 49 against p = 1/4 */
    double z = (49 - 49 * 0.25) / sqrt(49 * 0.25 * 0.75);
    assert_true(fabs(r.straggler->z - z) < 1e-9);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

/* Everyone arrives at the same nanosecond: ties blame nobody. */
static void test_ties_blame_nobody(void **state)
{
    (void)state;
    synth_params p;
    exact_params(&p, NULL);
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_result r;
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r.ranks[i].arrived_last, 0);
        assert_int_equal(r.ranks[i].blame_ns, 0);
        assert_int_equal(r.ranks[i].wait_ns, 0);
        assert_int_equal(r.ranks[i].steps_last, 0);
    }
    assert_null(r.straggler);
    assert_int_equal(f.n, 0);
    tsa_findings_free(&f);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

/* Options: a higher slowdown bar keeps a 10% rank unnamed. */
static void test_options(void **state)
{
    (void)state;
    double sd[4] = {0, 0, 0.10, 0};
    synth_params p;
    exact_params(&p, sd);
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_options opt;
    tsa_xrank_default_options(&opt);
    assert_true(opt.z_threshold == 3.0 && opt.min_slowdown == 0.03);
    opt.min_slowdown = 0.15;
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, &opt, &r, NULL), 0);
    assert_null(r.straggler);
    tsa_xrank_free(&r);
    opt.min_slowdown = 0.03;
    opt.z_threshold = 50;   /* 49 of 49 steps gives z = 12.1 */
    assert_int_equal(tsa_xrank_run(job, &opt, &r, NULL), 0);
    assert_null(r.straggler);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_blame),
        cmocka_unit_test(test_ties_blame_nobody),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
