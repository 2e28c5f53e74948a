/* The cause pass on synthetic jobs whose truth is known: one rank's extra
 * work per step is made of longer kernels (device), more kernels (work),
 * wider gaps between the same kernels (host) or idle time no record
 * explains (unknown); a slow host gets one block; a balanced job gets no
 * cause block. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cause_synth.h"
#include "driver/analyze.h"
#include "load/job_build.h"
#include "load/rank_telemetry.h"
#include "tsc_format.h"
#include "synth_job.h"


static void test_device(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = cs_run(FILL_DEVICE, 0.3, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_DEVICE);
    /* 95% of the extra is kernel time: the same 20 kernels, 30% longer */
    assert_in_range(b->causes[0].explained_ns, 26000000, 30000000);
    assert_true(b->causes[0].own / b->causes[0].peers > 1.27);
    assert_true(b->causes[0].own / b->causes[0].peers < 1.33);
    assert_non_null(strstr(b->causes[0].evidence, "the same 20 kernels per step"));
    for (size_t k = 1; k < b->n_causes; k++)
        assert_int_not_equal(b->causes[k].kind, TSA_CAUSE_WORK);
    cs_done(a, job);
}

static void test_work(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = cs_run(FILL_WORK, 0.3, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_WORK);
    /* 13 kernels in each of its two intervals a step, 10 on its peers */
    assert_true(b->causes[0].own > 25.5 && b->causes[0].own < 26.5);
    assert_true(b->causes[0].peers > 19.5 && b->causes[0].peers < 20.5);
    for (size_t k = 1; k < b->n_causes; k++)
        assert_int_not_equal(b->causes[k].kind, TSA_CAUSE_DEVICE);
    cs_done(a, job);
}

static void test_host(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = cs_run(FILL_HOST, 0.3, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_HOST);
    for (size_t k = 1; k < b->n_causes; k++)
        assert_int_not_equal(b->causes[k].kind, TSA_CAUSE_DEVICE);
    cs_done(a, job);
}

/* The extra time is idle after the same kernels: nothing recorded says
 * why, so no cause is named and the checks are listed. */
static void test_unknown(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = cs_run(FILL_PACKED, 0.3, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_int_equal(b->n_causes, 0);
    assert_non_null(strstr(b->checked, "kernels by signature (recorded)"));
    cs_done(a, job);
}

/* Both ranks of one host (of four) run longer kernels: one host block,
 * compared with the six ranks of the other hosts. */
static void test_slow_host(void **state)
{
    (void)state;
    double sd[8] = {0, 0, 0, 0, 0.3, 0.3, 0, 0};
    tsa_job *job;
    tsa_analysis *a = cs_run_sd(FILL_DEVICE, 8, 2, sd, &job);
    assert_non_null(a->xrank.slow_host);
    assert_int_equal(a->cause.n_blocks, 1);
    const tsa_cause_block *b = &a->cause.blocks[0];
    assert_int_equal(b->rank, -1);
    assert_string_equal(b->host, a->xrank.slow_host);
    assert_string_equal(b->blamed_as, "slow host");
    assert_int_equal(b->peers, 6);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_DEVICE);
    cs_done(a, job);
}

/* Host samples every 5 ms over rank r's records: process CPU at one CPU,
 * and the main thread's involuntary context switches growing by
 * `per_step` a step (two 50 ms intervals) on the way. */
static void add_host_samples(tsa_rank *r, double per_step)
{
    int64_t t0 = r->first_ns, t1 = r->last_ns, dt = 5000000;
    for (int64_t t = t0; t <= t1; t += dt) {
        uint64_t cpu = (uint64_t)(t - t0), sw = (uint64_t)((double)(t - t0) / 1e8 * per_step);
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_PROC_CPU, 0, 1, 4, (uint64_t)t, cpu, 0,
                                                0, NULL, 0), 0);
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_PROC_SWITCHES, 0, 0, 0, (uint64_t)t,
                                                sw, 0, 0, NULL, 0), 0);
    }
    tsa_telemetry_finish(r);
}

/* Host-only ranks (no kernels): the slow rank's main thread is preempted
 * 40 times a step against 4 on its peers, and no other figure moves: a
 * host cause citing the switches.  The same samples on every rank (a
 * balanced job's) name nothing; without them the checks say they were
 * not recorded. */
static void test_preempted(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        double sd[4] = {0, 0, 0.3, 0};
        int64_t base;
        tsa_job *job = cs_make_job(4, 4, sd, &base);
        for (size_t i = 0; i < job->n_ranks; i++)
            add_host_samples(&job->ranks[i], variant == 0 && job->ranks[i].rank == SLOW_RANK ? 40 : 4);
        tsa_analysis *a = tsa_analyze(job, NULL);
        assert_non_null(a);
        const tsa_cause_block *b = cs_slow_block(a);
        assert_non_null(strstr(b->checked, "involuntary context switches and major page faults "
                                           "(recorded)"));
        if (variant == 0) {
            assert_int_equal(b->n_causes, 1);
            assert_int_equal(b->causes[0].kind, TSA_CAUSE_HOST);
            assert_string_equal(b->causes[0].metric, "involuntary_switches_per_step");
            /* per step of the job (which waits for the slow rank: longer
             * than the 100 ms the rates are given for), ten times the peers' */
            double ratio = b->causes[0].own / b->causes[0].peers;
            assert_true(b->causes[0].own > 40 && ratio > 9.5 && ratio < 10.5);
            assert_non_null(strstr(b->causes[0].evidence, "main thread preempted"));
        } else {
            assert_int_equal(b->n_causes, 0);   /* switches alike: cause unknown */
        }
        tsa_analysis_free(a);
        for (size_t i = 0; i < job->n_ranks; i++)
            tsa_telemetry_free(&job->ranks[i]);
        synth_job_free(job);
    }
}

static void test_balanced(void **state)
{
    (void)state;
    for (int how = FILL_DEVICE; how <= FILL_PACKED; how++) {
        tsa_job *job;
        tsa_analysis *a = cs_run((fill)how, 0, &job);
        assert_null(a->xrank.straggler);
        assert_int_equal(a->cause.n_blocks, 0);
        cs_done(a, job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device), cmocka_unit_test(test_work),
        cmocka_unit_test(test_host), cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_slow_host), cmocka_unit_test(test_preempted),
        cmocka_unit_test(test_balanced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
