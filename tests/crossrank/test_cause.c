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

#include "driver/analyze.h"
#include "load/job_build.h"
#include "load/rank_telemetry.h"
#include "tsc_format.h"
#include "synth_job.h"

#define SLOW_RANK 2
#define K 10   /* kernels per interval between collectives on a healthy rank */

typedef enum fill { FILL_DEVICE, FILL_WORK, FILL_HOST, FILL_PACKED } fill;

/* Kernels into every interval between two collectives of rank r.  Healthy
 * ranks (and every rank in FILL_DEVICE) get K kernels spread evenly over
 * 95% of the interval; the slow rank's extra time goes where `how` says. */
static void add_kernels(tsa_rank *r, fill how, int slow, int64_t base)
{
    uint32_t name = tsa_rank_intern(r, "ampere_sgemm_128x64_nn");
    int64_t d_base = base * 95 / 100 / K;
    size_t n_ops = r->n_nccl;
    for (size_t j = 1; j < n_ops; j++) {
        int64_t a = r->nccl[j - 1].end_ns, b = r->nccl[j].start_ns, len = b - a;
        if (len <= 0)
            continue;
        int n = K;
        int64_t d = len * 95 / 100 / K, step = len / K;
        if (slow && how == FILL_WORK) {
            d = d_base;
            n = (int)((double)len / (double)base * K + 0.5);
            step = len / n;
        } else if (slow && how == FILL_HOST) {
            d = d_base;
        } else if (how == FILL_PACKED) {
            d = d_base;
            step = d_base + base / 20 / K;
        }
        for (int i = 0; i < n; i++) {
            tsa_kernel k = {.start_ns = a + i * step, .end_ns = a + i * step + d, .name = name,
                            .grid = {4, 1, 1}, .block = {128, 1, 1}, .nccl = -1, .gemm = -1};
            assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
        }
    }
}

/* n_ranks ranks, ranks_per_host a host; the ranks whose slowdown is
 * non-zero get the slow fill. */
/* 40 steps of two intervals; *base: one interval's work. */
static tsa_job *make_job(int n_ranks, int ranks_per_host, const double *sd, int64_t *base)
{
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = n_ranks;
    p.ranks_per_host = ranks_per_host;
    p.per_step = 2;
    p.n_steps = 40;
    p.jitter = 0.005;
    p.with_steps = 1;
    p.seed = 7;
    p.slowdown = sd;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    *base = p.work_ns / p.per_step;
    return job;
}

static tsa_analysis *run_sd(fill how, int n_ranks, int ranks_per_host, const double *sd,
                            tsa_job **job_out)
{
    int64_t base;
    tsa_job *job = make_job(n_ranks, ranks_per_host, sd, &base);
    for (size_t i = 0; i < job->n_ranks; i++)
        add_kernels(&job->ranks[i], how, sd[job->ranks[i].rank] > 0, base);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    *job_out = job;
    return a;
}

static tsa_analysis *run(fill how, double slowdown, tsa_job **job_out)
{
    double sd[4] = {0};
    sd[SLOW_RANK] = slowdown;
    return run_sd(how, 4, 4, sd, job_out);
}

static const tsa_cause_block *slow_block(const tsa_analysis *a)
{
    assert_int_equal(a->cause.n_blocks, 1);
    const tsa_cause_block *b = &a->cause.blocks[0];
    assert_int_equal(b->rank, SLOW_RANK);
    assert_string_equal(b->blamed_as, "straggler");
    assert_int_equal(b->peers, 3);
    /* 30% more work per 50 ms interval, two intervals a step: ~30 ms */
    assert_in_range(b->extra_ns, 27000000, 33000000);
    return b;
}

/* The synthetic job frees what it built; the kernels and names added here
 * are freed here. */
static void done(tsa_analysis *a, tsa_job *job)
{
    tsa_analysis_free(a);
    for (size_t i = 0; i < job->n_ranks; i++) {
        free(job->ranks[i].kernels);
        tsa_rank_strings_free(&job->ranks[i]);
    }
    synth_job_free(job);
}

static void test_device(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run(FILL_DEVICE, 0.3, &job);
    const tsa_cause_block *b = slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_DEVICE);
    /* 95% of the extra is kernel time: the same 20 kernels, 30% longer */
    assert_in_range(b->causes[0].explained_ns, 26000000, 30000000);
    assert_true(b->causes[0].own / b->causes[0].peers > 1.27);
    assert_true(b->causes[0].own / b->causes[0].peers < 1.33);
    assert_non_null(strstr(b->causes[0].evidence, "the same 20 kernels per step"));
    for (size_t k = 1; k < b->n_causes; k++)
        assert_int_not_equal(b->causes[k].kind, TSA_CAUSE_WORK);
    done(a, job);
}

static void test_work(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run(FILL_WORK, 0.3, &job);
    const tsa_cause_block *b = slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_WORK);
    /* 13 kernels in each of its two intervals a step, 10 on its peers */
    assert_true(b->causes[0].own > 25.5 && b->causes[0].own < 26.5);
    assert_true(b->causes[0].peers > 19.5 && b->causes[0].peers < 20.5);
    for (size_t k = 1; k < b->n_causes; k++)
        assert_int_not_equal(b->causes[k].kind, TSA_CAUSE_DEVICE);
    done(a, job);
}

static void test_host(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run(FILL_HOST, 0.3, &job);
    const tsa_cause_block *b = slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_HOST);
    for (size_t k = 1; k < b->n_causes; k++)
        assert_int_not_equal(b->causes[k].kind, TSA_CAUSE_DEVICE);
    done(a, job);
}

/* The extra time is idle after the same kernels: nothing recorded says
 * why, so no cause is named and the checks are listed. */
static void test_unknown(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run(FILL_PACKED, 0.3, &job);
    const tsa_cause_block *b = slow_block(a);
    assert_int_equal(b->n_causes, 0);
    assert_non_null(strstr(b->checked, "kernels by signature (recorded)"));
    done(a, job);
}

/* Both ranks of one host (of four) run longer kernels: one host block,
 * compared with the six ranks of the other hosts. */
static void test_slow_host(void **state)
{
    (void)state;
    double sd[8] = {0, 0, 0, 0, 0.3, 0.3, 0, 0};
    tsa_job *job;
    tsa_analysis *a = run_sd(FILL_DEVICE, 8, 2, sd, &job);
    assert_non_null(a->xrank.slow_host);
    assert_int_equal(a->cause.n_blocks, 1);
    const tsa_cause_block *b = &a->cause.blocks[0];
    assert_int_equal(b->rank, -1);
    assert_string_equal(b->host, a->xrank.slow_host);
    assert_string_equal(b->blamed_as, "slow host");
    assert_int_equal(b->peers, 6);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_DEVICE);
    done(a, job);
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
        tsa_job *job = make_job(4, 4, sd, &base);
        for (size_t i = 0; i < job->n_ranks; i++)
            add_host_samples(&job->ranks[i], variant == 0 && job->ranks[i].rank == SLOW_RANK ? 40 : 4);
        tsa_analysis *a = tsa_analyze(job, NULL);
        assert_non_null(a);
        const tsa_cause_block *b = slow_block(a);
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
        tsa_analysis *a = run((fill)how, 0, &job);
        assert_null(a->xrank.straggler);
        assert_int_equal(a->cause.n_blocks, 0);
        done(a, job);
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
