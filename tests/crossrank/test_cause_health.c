/* The cause pass's rules on contention and broken hardware, on synthetic
 * jobs whose truth is known: the slow rank's extra work is made of slower
 * copies (link), of slower kernels on a GPU reporting errors (gpu-health),
 * of time its main thread waited for a CPU or its cgroup was throttled
 * (host); the same evidence where the rank is not slower that way names
 * nothing of it.  The network cause is proven on the test bed
 * (cause_e2e_cpu-network): a synthetic job has no send/recv to slow. */
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

#define MB 10000000ull   /* bytes of each rank's copy per interval */
#define DT 5000000       /* telemetry sample period, ns */

/* One telemetry sample through the loader's hook. */
static void sample(tsa_rank *r, uint8_t kind, uint16_t aux, uint32_t desc, int64_t t, uint64_t v)
{
    assert_int_equal(tsa_telemetry_on_event(r, kind, 0, aux, desc, (uint64_t)t, v, 0, 0, NULL, 0),
                     0);
}

/* The values a rank's NVML reports, as functions of time since its first
 * record (ns): the faults are in the slow rank's. */
typedef struct gpu_faults {
    int clock_mhz;               /* SM clock */
    int pcie_width;              /* 16: healthy */
    int xid;                     /* critical XID code, 0 none */
    int ecc_per_s;               /* aggregate uncorrected ECC errors per second */
} gpu_faults;

static void add_gpu(tsa_rank *r, const gpu_faults *f)
{
    for (int64_t t = r->first_ns; t <= r->last_ns; t += DT) {
        double s = (double)(t - r->first_ns) / 1e9;
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_SM_CLOCK_MHZ, 0, t, (uint64_t)f->clock_mhz);
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_PCIE_WIDTH, 0, t, (uint64_t)f->pcie_width);
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_PCIE_WIDTH_MAX, 0, t, 16);
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_PCIE_GEN, 0, t, f->pcie_width < 16 ? 3 : 4);
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_PCIE_GEN_MAX, 0, t, 4);
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_ECC_UNCORRECTED_AGG, 0, t,
               (uint64_t)(s * f->ecc_per_s));
        sample(r, TSC_EV_GPU_METRIC, TSC_GPU_XID_EVENTS, 0, t, f->xid ? 1 : 0);
        if (f->xid)
            sample(r, TSC_EV_GPU_METRIC, TSC_GPU_XID_LAST, 0, t, (uint64_t)f->xid);
    }
    tsa_telemetry_finish(r);
}

/* A 10 MB host-to-device copy at the end of every interval between two
 * collectives: 1 ms, and on the slow rank (slow_copy) as long as the
 * extra time the interval has beyond base. */
static void add_copies(tsa_rank *r, int slow_copy, int64_t base)
{
    for (size_t j = 1; j < r->n_nccl; j++) {
        int64_t a = r->nccl[j - 1].end_ns, b = r->nccl[j].start_ns;
        int64_t d = 1000000 + (slow_copy && b - a > base ? b - a - base : 0);
        tsa_copy c = {.start_ns = b - d, .end_ns = b, .bytes = MB, .dir = TSA_COPY_H2D};
        assert_int_equal(tsa_rank_add_copy(r, &c), 0);
    }
}

static const tsa_cause *cause_of(const tsa_cause_block *b, tsa_cause_kind k)
{
    for (size_t i = 0; i < b->n_causes; i++)
        if (b->causes[i].kind == k)
            return &b->causes[i];
    return NULL;
}

/* 4 ranks, rank 2 30% slower with its extra time filled as `how` says,
 * copies on every rank (slower on rank 2 when slow_copy) and NVML samples
 * (rank 2's with `bad`). */
static tsa_analysis *run_gpu(fill how, int slow_copy, const gpu_faults *bad, tsa_job **job_out)
{
    double sd[4] = {0, 0, 0.3, 0};
    int64_t base;
    tsa_job *job = cs_make_job(4, 4, sd, &base);
    static const gpu_faults healthy = {1980, 16, 0, 0};
    for (size_t i = 0; i < job->n_ranks; i++) {
        tsa_rank *r = &job->ranks[i];
        int slow = r->rank == SLOW_RANK;
        cs_add_kernels(r, how, slow, base);
        add_copies(r, slow && slow_copy, base);
        add_gpu(r, slow ? bad : &healthy);
    }
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    *job_out = job;
    return a;
}

/* Its copies move a byte 16x slower over a link down-trained to x8: link,
 * explaining the copies' extra time. */
static void test_link(void **state)
{
    (void)state;
    tsa_job *job;
    gpu_faults bad = {1980, 8, 0, 0};
    tsa_analysis *a = run_gpu(FILL_PACKED, 1, &bad, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_true(b->n_causes >= 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_GPU_LINK);
    assert_string_equal(b->causes[0].metric, "copy_ns_per_byte");
    /* 1 ms per 10 MB on its peers: 0.1 ns a byte; its own ~16 ms */
    assert_true(b->causes[0].peers > 0.099 && b->causes[0].peers < 0.101);
    assert_true(b->causes[0].own / b->causes[0].peers > 12);
    assert_in_range(b->causes[0].explained_ns, 24000000, 33000000);
    assert_non_null(strstr(b->causes[0].evidence, "PCIe link down-trained to gen 3 x8 of gen 4 x16"));
    assert_non_null(strstr(b->causes[0].fix, "nvidia-smi"));
    cs_done(a, job);
}

/* The same slower copies with a healthy link: nothing says why (unknown);
 * a down-trained link whose copies are not slower: nothing either. */
static void test_link_needs_both(void **state)
{
    (void)state;
    gpu_faults ok = {1980, 16, 0, 0}, bad = {1980, 8, 0, 0};
    for (int variant = 0; variant < 2; variant++) {
        tsa_job *job;
        tsa_analysis *a = run_gpu(FILL_PACKED, variant == 0, variant == 0 ? &ok : &bad, &job);
        const tsa_cause_block *b = cs_slow_block(a);
        assert_null(cause_of(b, TSA_CAUSE_GPU_LINK));
        assert_int_equal(b->n_causes, 0);
        assert_non_null(strstr(b->checked, "copy and send/receive rates"));
        assert_non_null(strstr(b->checked, "GPU links and health (PCIe"));
        cs_done(a, job);
    }
}

/* The same kernels 30% slower at its peers' clocks on a GPU that had an
 * XID and keeps counting uncorrectable ECC errors: gpu-health takes the
 * device cause's time; with its clock held down instead, device comes
 * first and gpu-health second. */
static void test_gpu_health(void **state)
{
    (void)state;
    for (int throttled = 0; throttled < 2; throttled++) {
        tsa_job *job;
        gpu_faults bad = {throttled ? 1100 : 1980, 16, 48, 20};
        tsa_analysis *a = run_gpu(FILL_DEVICE, 0, &bad, &job);
        const tsa_cause_block *b = cs_slow_block(a);
        const tsa_cause *h = cause_of(b, TSA_CAUSE_GPU_HEALTH), *d = cause_of(b, TSA_CAUSE_DEVICE);
        assert_non_null(h);
        assert_in_range(h->explained_ns, 26000000, 30000000);
        assert_non_null(strstr(h->evidence, "the last XID 48"));
        assert_non_null(strstr(h->evidence, "uncorrectable ECC errors in the window"));
        assert_non_null(strstr(h->evidence, "the same kernels run 30% longer"));
        if (!throttled) {
            assert_int_equal(b->causes[0].kind, TSA_CAUSE_GPU_HEALTH);
            assert_null(d);
            assert_non_null(strstr(h->evidence, "SM clock 1980 vs 1980 MHz"));
        } else {
            assert_int_equal(b->causes[0].kind, TSA_CAUSE_DEVICE);
            assert_int_equal(b->causes[1].kind, TSA_CAUSE_GPU_HEALTH);
        }
        assert_null(cause_of(b, TSA_CAUSE_GPU_LINK));
        cs_done(a, job);
    }
}

/* More kernels on a rank whose GPU and link report every fault: work is
 * the cause; its kernels and copies are not slower, so neither gpu-health
 * nor link is named.  A balanced job with the same faults on one rank
 * gets no block at all. */
static void test_evidence_alone_names_nothing(void **state)
{
    (void)state;
    gpu_faults bad = {1980, 8, 79, 20};
    tsa_job *job;
    tsa_analysis *a = run_gpu(FILL_WORK, 0, &bad, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_WORK);
    assert_null(cause_of(b, TSA_CAUSE_GPU_HEALTH));
    assert_null(cause_of(b, TSA_CAUSE_GPU_LINK));
    assert_null(cause_of(b, TSA_CAUSE_DEVICE));
    cs_done(a, job);

    double sd[4] = {0};
    int64_t base;
    job = cs_make_job(4, 4, sd, &base);
    static const gpu_faults healthy = {1980, 16, 0, 0};
    for (size_t i = 0; i < job->n_ranks; i++) {
        cs_add_kernels(&job->ranks[i], FILL_DEVICE, 0, base);
        add_gpu(&job->ranks[i], job->ranks[i].rank == SLOW_RANK ? &bad : &healthy);
    }
    a = tsa_analyze(job, NULL);
    assert_non_null(a);
    assert_null(a->xrank.straggler);
    assert_int_equal(a->cause.n_blocks, 0);
    cs_done(a, job);
}

/* Host-only ranks (no kernels) with schedstat and cpu.stat samples every
 * 5 ms: per 100 ms of wall time each main thread runs run_ms; the slow
 * rank waits wait_ms (its peers 2 ms), its cgroup is throttled thr_ms and
 * its main thread preempted `switches` times (its peers 4) and sampled on
 * a CPU slow_cpu of the time (its peers 0.1). */
static tsa_analysis *run_host_sw(double run_ms, double slow_run_ms, double wait_ms, double thr_ms,
                                 double switches, double slow_cpu, tsa_job **job_out)
{
    double sd[4] = {0, 0, 0.3, 0};
    int64_t base;
    tsa_job *job = cs_make_job(4, 4, sd, &base);
    for (size_t i = 0; i < job->n_ranks; i++) {
        tsa_rank *r = &job->ranks[i];
        int slow = r->rank == SLOW_RANK;
        for (int64_t t = r->first_ns; t <= r->last_ns; t += DT) {
            double f = (double)(t - r->first_ns) / 1e8; /* in 100 ms */
            uint64_t cpu = (uint64_t)((double)(t - r->first_ns) * (slow ? slow_cpu : 0.1));
            sample(r, TSC_EV_PROC_CPU, 1, 4, t, cpu);
            assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_TASK_CPU, 0, 'S', 0, (uint64_t)t,
                                                    cpu, 100, TSC_TASK_MAIN, "python", 6), 0);
            sample(r, TSC_EV_SCHED_RUN, 0, 0, t, (uint64_t)(f * (slow ? slow_run_ms : run_ms) * 1e6));
            sample(r, TSC_EV_SCHED_WAIT, 0, 0, t, (uint64_t)(f * (slow ? wait_ms : 2) * 1e6));
            sample(r, TSC_EV_CPU_THROTTLE, 0, 3, t, (uint64_t)(f * (slow ? thr_ms : 0) * 1e6));
            sample(r, TSC_EV_PROC_SWITCHES, 0, 0, t, (uint64_t)(f * (slow ? switches : 4)));
        }
        tsa_telemetry_finish(r);
    }
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    *job_out = job;
    return a;
}

static tsa_analysis *run_host(double run_ms, double slow_run_ms, double wait_ms, double thr_ms,
                              tsa_job **job_out)
{
    return run_host_sw(run_ms, slow_run_ms, wait_ms, thr_ms, 4, 0.1, job_out);
}

/* Its main thread waited 20 ms per 100 ms for a CPU (2 per ms it ran)
 * against 2 ms (0.2) on its peers: host, from the run-queue wait, the
 * excess over what its CPU time would have waited at its peers' rate. */
static void test_runqueue_wait(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run_host(10, 10, 20, 0, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_int_equal(b->n_causes, 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_HOST);
    assert_string_equal(b->causes[0].metric, "main_thread_runqueue_wait_ns_per_step");
    /* per step of ~130 ms: 26 ms waited against 2.6 ms; 13 ms on a CPU at
     * the peers' 0.2 would have waited 2.6 ms: ~23 ms explained */
    double ratio = b->causes[0].own / b->causes[0].peers;
    assert_true(ratio > 9.5 && ratio < 10.5);
    assert_in_range(b->causes[0].explained_ns, 21000000, 25500000);
    assert_non_null(strstr(b->causes[0].evidence, "runnable but not running"));
    assert_non_null(strstr(b->checked, "run-queue wait (recorded), cgroup throttling (recorded)"));
    cs_done(a, job);
}

/* Twice the CPU time and twice the wait: the same wait per CPU ms as its
 * peers (a busy machine, more work), not contention: no cause. */
static void test_wait_in_proportion_is_not_contention(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run_host(10, 20, 4, 0, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_int_equal(b->n_causes, 0);
    cs_done(a, job);
}

/* Preempted 10 times as often as its peers, but its main thread waited for
 * a CPU at their rate: the run-queue wait decides, no cause (without
 * schedstat records the switches alone name host: crossrank_cause). */
static void test_preempted_without_waiting(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run_host_sw(10, 10, 2, 0, 40, 0.1, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_int_equal(b->n_causes, 0);
    cs_done(a, job);
}

/* Its cgroup throttled 20 ms per 100 ms, its peers' never: host, from the
 * throttled time. */
static void test_cgroup_throttled(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run_host(10, 10, 2, 20, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_int_equal(b->n_causes, 1);
    assert_int_equal(b->causes[0].kind, TSA_CAUSE_HOST);
    assert_string_equal(b->causes[0].metric, "cgroup_throttled_ns_per_step");
    assert_true(b->causes[0].peers == 0);
    assert_in_range(b->causes[0].explained_ns, 23000000, 30000000);
    assert_non_null(strstr(b->causes[0].evidence, "CPU quota throttled it"));
    cs_done(a, job);
}

/* A rank that mostly sleeps (its peers on a CPU a tenth of the time), 30%
 * slower, its main thread on a CPU half as much again as its peers' and
 * waiting for one at their rate: the extra CPU time costs wall time at the
 * peers' pace on a CPU (1 + 0.2 waited per ms run), not at their step's
 * pace (mostly sleep, ~10 per CPU ms), so work explains a share of the
 * extra, not all of it (a sleeping rank slowed by its network was once
 * blamed on its work this way). */
static void test_work_at_the_cpu_pace(void **state)
{
    (void)state;
    tsa_job *job;
    tsa_analysis *a = run_host_sw(10, 15, 3, 0, 4, 0.15, &job);
    const tsa_cause_block *b = cs_slow_block(a);
    assert_true(b->n_causes >= 1);
    const tsa_cause *w = cause_of(b, TSA_CAUSE_WORK);
    assert_non_null(w);
    assert_string_equal(w->metric, "main_thread_cpu_ns_per_step");
    assert_in_range((int64_t)(100 * w->own / w->peers), 149, 151);
    double want = (w->own - w->peers) * 1.2;
    assert_in_range(w->explained_ns, (int64_t)(0.98 * want), (int64_t)(1.02 * want));
    assert_true(w->explained_ns < b->extra_ns / 2);
    assert_non_null(strstr(w->evidence, "1.20 ms of wall time per CPU ms on its peers"));
    cs_done(a, job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link),
        cmocka_unit_test(test_link_needs_both),
        cmocka_unit_test(test_gpu_health),
        cmocka_unit_test(test_evidence_alone_names_nothing),
        cmocka_unit_test(test_runqueue_wait),
        cmocka_unit_test(test_wait_in_proportion_is_not_contention),
        cmocka_unit_test(test_cgroup_throttled),
        cmocka_unit_test(test_preempted_without_waiting),
        cmocka_unit_test(test_work_at_the_cpu_pace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
