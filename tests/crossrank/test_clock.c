/* One clock: offsets recovered from symmetric collectives' end times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"

#define TOL_NS 10000   /* the bar: 10 microseconds */

/* The defaults with the three things a clock test varies. */
static synth_params clock_params(int n_ranks, int ranks_per_host, int64_t max_offset_ns)
{
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = n_ranks;
    p.ranks_per_host = ranks_per_host;
    p.max_offset_ns = max_offset_ns;
    return p;
}

/* Every one of the first n ranks recovered its true offset within TOL_NS. */
static void assert_offsets_near(const tsa_job *job, const int64_t *truth, int n)
{
    for (int i = 0; i < n; i++)
        assert_true(llabs(job->ranks[i].clock_offset_ns - truth[i]) <= TOL_NS);
}

static void free_run(tsa_findings *f, tsa_xrank_result *r, tsa_job *job)
{
    if (f)
        tsa_findings_free(f);
    tsa_xrank_free(r);
    synth_job_free(job);
}

static void check_offsets(const synth_params *p)
{
    int64_t *truth = calloc((size_t)p->n_ranks, sizeof *truth);
    assert_non_null(truth);
    tsa_job *job = synth_job(p, truth);
    assert_non_null(job);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    assert_int_equal(r.clock_reference_rank, 0);
    assert_int_equal(r.n_unaligned, 0);
    assert_false(r.clock_hosts_split);
    for (int i = 0; i < p->n_ranks; i++) {
        int64_t err = llabs(job->ranks[i].clock_offset_ns - truth[i]);
        if (err > TOL_NS)
            fail_msg("seed %llu rank %d: offset %lld, truth %lld (error %lld ns)",
                     (unsigned long long)p->seed, i, (long long)job->ranks[i].clock_offset_ns,
                     (long long)truth[i], (long long)err);
        assert_int_equal(r.ranks[i].clock_offset_ns, job->ranks[i].clock_offset_ns);
        assert_true(r.ranks[i].clock_aligned);
    }
    /* residual: the end jitter, not seconds */
    assert_true(r.clock_residual_ns <= p->end_jitter_ns + TOL_NS);
    free_run(NULL, &r, job);
    free(truth);
}

/* Hosts seconds apart, many seeds and shapes. */
static void test_offsets_seconds_apart(void **state)
{
    (void)state;
    static const int ranks[] = {2, 8, 32, 128};
    static const int per_host[] = {1, 4, 8, 8};
    for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
        for (uint64_t seed = 1; seed <= 10; seed++) {
            synth_params p = clock_params(ranks[k], per_host[k], 5000000000ll);
            p.n_steps = 20;
            p.end_jitter_ns = 20000;
            p.seed = seed;
            check_offsets(&p);
        }
    }
}

/* Lost records shift nothing: matching is by (comm, seq). */
static void test_offsets_missing_ops(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        synth_params p = clock_params(16, 4, 2000000000ll);   /* 4: the default */
        p.missing = 0.05;
        p.seed = seed;
        check_offsets(&p);
    }
}

/* No host names: every rank is aligned on its own. */
static void test_offsets_no_hosts(void **state)
{
    (void)state;
    synth_params p = clock_params(12, 0, 1000000000ll);
    check_offsets(&p);
}

/* Wild end times on a few instances (a preempted process, a bad record)
 * must not move the estimate. */
static void test_offsets_outliers(void **state)
{
    (void)state;
    synth_params p = clock_params(8, 2, 3000000000ll);
    p.n_steps = 40;
    int64_t truth[8];
    tsa_job *job = synth_job(&p, truth);
    assert_non_null(job);
    /* rank 5 (host 2, alone with rank 4 there) leaves 20 instances 50 ms late */
    for (size_t i = 0; i < 20; i++)
        job->ranks[5].nccl[i * 7].end_ns = job->ranks[5].nccl[i * 7].gpu_end_ns += 50000000;
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    assert_offsets_near(job, truth, 8);
    free_run(NULL, &r, job);
}

/* One host: one clock, offsets exactly zero. */
static void test_single_host(void **state)
{
    (void)state;
    synth_params p = clock_params(8, 8, 1000000000ll);
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(job->ranks[i].clock_offset_ns, 0);
    assert_int_equal(r.clock_samples, 0);
    free_run(NULL, &r, job);
}

/* Re-home a world-communicator job onto HSDP-like groups: even calls on a
 * per-host communicator, odd calls (when cross) on a communicator of the
 * ranks with the same local rank across hosts.  Times stay valid: every
 * call still ends together on all ranks. */
static void split_comms(tsa_job *job, int rph, int cross)
{
    for (size_t r = 0; r < job->n_ranks; r++) {
        tsa_rank *rk = &job->ranks[r];
        int host = (int)r / rph, local = (int)r % rph;
        uint64_t seq_host = 0, seq_cross = 0;
        size_t w = 0;
        for (size_t i = 0; i < rk->n_nccl; i++) {
            tsa_nccl_op o = rk->nccl[i];
            if (o.seq % 2 == 0) {
                o.comm_id = 1000 + (uint64_t)host;
                o.comm_rank = (uint32_t)local;
                o.comm_size = (uint32_t)rph;
                o.seq = seq_host++;
            } else if (cross) {
                o.comm_id = 2000 + (uint64_t)local;
                o.comm_rank = (uint32_t)host;
                o.comm_size = (uint32_t)(job->n_ranks / (size_t)rph);
                o.seq = seq_cross++;
            } else {
                continue;
            }
            rk->nccl[w++] = o;
        }
        rk->n_nccl = w;
    }
}

/* No communicator spans all hosts with rank 0: hosts are still joined
 * through the cross-host groups. */
static void test_offsets_through_subgroups(void **state)
{
    (void)state;
    synth_params p = clock_params(32, 8, 4000000000ll);
    int64_t truth[32];
    tsa_job *job = synth_job(&p, truth);
    assert_non_null(job);
    split_comms(job, 8, 1);
    tsa_xrank_result r;
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
    assert_int_equal(r.n_unaligned, 0);
    assert_offsets_near(job, truth, 32);
    assert_int_equal(f.n, 0);
    free_run(&f, &r, job);
}

/* Hosts that never talk to each other cannot share a clock: said so. */
static void test_unaligned_hosts(void **state)
{
    (void)state;
    synth_params p = clock_params(16, 8, 4000000000ll);
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    split_comms(job, 8, 0);
    tsa_xrank_result r;
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
    assert_int_equal(r.n_unaligned, 8);
    for (int i = 0; i < 16; i++)
        assert_int_equal(r.ranks[i].clock_aligned, i < 8);
    assert_int_equal(f.n, 1);
    assert_string_equal(f.items[0].id, "DIST.CLOCK_SKEW");
    assert_int_equal(f.items[0].severity, TSA_SEV_WARNING);
    free_run(&f, &r, job);
}

/* A host whose clock drifts 200 ppm during the run: a constant offset
 * cannot fit it, the residual says so. */
static void test_drift_flags_skew(void **state)
{
    (void)state;
    synth_params p = clock_params(8, 4, 1000000000ll);
    p.jitter = 0.001;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    for (size_t r = 4; r < 8; r++) {
        tsa_rank *rk = &job->ranks[r];
        int64_t t0 = rk->nccl[0].start_ns;
        for (size_t i = 0; i < rk->n_nccl; i++) {
            tsa_nccl_op *o = &rk->nccl[i];
            o->start_ns += (o->start_ns - t0) / 5000;
            o->end_ns += (o->end_ns - t0) / 5000;
            o->gpu_start_ns = o->start_ns;
            o->gpu_end_ns = o->end_ns;
        }
    }
    tsa_xrank_result r;
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
    assert_true(r.clock_residual_ns > 100000);
    size_t skew = 0;
    for (size_t i = 0; i < f.n; i++)
        skew += !strcmp(f.items[i].id, "DIST.CLOCK_SKEW");
    assert_int_equal(skew, 1);
    free_run(&f, &r, job);
}

/* Two machines whose ranks all report the host name "localhost": the
 * shared-clock assumption is detected as false and each rank is aligned
 * on its own. */
static void test_same_name_different_clocks(void **state)
{
    (void)state;
    synth_params p = clock_params(8, 4, 3000000000ll);
    int64_t truth[8];
    tsa_job *job = synth_job(&p, truth);
    assert_non_null(job);
    assert_true(llabs(truth[4]) > 100000);   /* the two machines really differ */
    for (int i = 0; i < 8; i++) {
        free(job->ranks[i].host);
        job->ranks[i].host = strdup("localhost");
        assert_non_null(job->ranks[i].host);
    }
    tsa_xrank_result r;
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
    assert_true(r.clock_hosts_split);
    assert_offsets_near(job, truth, 8);
    assert_int_equal(f.n, 0);
    free_run(&f, &r, job);
}

/* Grouped host-only calls (ncclGroupStart/End around each collective):
 * the collective returns at once, the GroupEnd waits for the last rank.
 * On one host a 30% slower rank must stay a straggler, not become a clock
 * 30 ms off: no host split, every offset 0, no DIST.CLOCK_SKEW, the
 * straggler named.  Before grouped calls completed with their GroupEnd,
 * the slow rank's late AllReduce ends split the host and its lateness was
 * aligned away. */
static void test_grouped_calls_one_host(void **state)
{
    (void)state;
    double slow[8] = {0, 0, 0, 0.3, 0, 0, 0, 0};
    synth_params p = clock_params(8, 8, 0);
    p.grouped = 1;
    p.slowdown = slow;
    p.with_steps = 1;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_result r;
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
    assert_false(r.clock_hosts_split);
    for (int i = 0; i < 8; i++)
        assert_int_equal(job->ranks[i].clock_offset_ns, 0);
    assert_true(r.clock_residual_ns <= p.end_jitter_ns + TOL_NS);
    assert_non_null(r.straggler);
    assert_int_equal(r.straggler->rank, 3);
    for (size_t i = 0; i < f.n; i++)
        assert_string_not_equal(f.items[i].id, "DIST.CLOCK_SKEW");
    free_run(&f, &r, job);
}

/* Host-timed ends on one busy host: the last rank to arrive is not woken,
 * so it leaves every collective 300 us before the ranks that waited.  One
 * host, one clock: no split, offsets 0, residual 0, no DIST.CLOCK_SKEW.
 * The same 300 us on GPU-timed ends (kernels linked) cannot come from
 * waking up: there the host name is not trusted and the host is split. */
static void test_wakeup_latency_is_no_clock(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        double slow[8] = {0, 0, 0, 0.3, 0, 0, 0, 0};
        synth_params p = clock_params(8, 8, 0);
        p.slowdown = slow;
        p.with_steps = 1;
        tsa_job *job = synth_job(&p, NULL);
        assert_non_null(job);
        for (int r = 0; r < 8; r++)
            for (size_t i = 0; i < job->ranks[r].n_nccl; i++) {
                tsa_nccl_op *o = &job->ranks[r].nccl[i];
                if (r == 3)
                    o->end_ns = o->gpu_end_ns = o->end_ns - 300000;
                o->kernel = gpu ? 0 : -1; /* "linked": only the flag is read here */
            }
        tsa_xrank_result r;
        tsa_findings f = {0};
        assert_int_equal(tsa_xrank_run(job, NULL, &r, &f), 0);
        assert_int_equal(r.clock_hosts_split, gpu);
        int skew = 0;
        for (size_t i = 0; i < f.n; i++)
            skew |= !strcmp(f.items[i].id, "DIST.CLOCK_SKEW");
        if (!gpu) {
            for (int i = 0; i < 8; i++)
                assert_int_equal(job->ranks[i].clock_offset_ns, 0);
            assert_int_equal(r.clock_residual_ns, 0);
            assert_false(skew);
            assert_non_null(r.straggler);
            assert_int_equal(r.straggler->rank, 3);
        }
        free_run(&f, &r, job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_seconds_apart),
        cmocka_unit_test(test_offsets_missing_ops),
        cmocka_unit_test(test_offsets_no_hosts),
        cmocka_unit_test(test_offsets_outliers),
        cmocka_unit_test(test_single_host),
        cmocka_unit_test(test_offsets_through_subgroups),
        cmocka_unit_test(test_unaligned_hosts),
        cmocka_unit_test(test_drift_flags_skew),
        cmocka_unit_test(test_same_name_different_clocks),
        cmocka_unit_test(test_grouped_calls_one_host),
        cmocka_unit_test(test_wakeup_latency_is_no_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
