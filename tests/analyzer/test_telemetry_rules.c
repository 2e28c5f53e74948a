/* The telemetry rules on generated jobs (gen_job.h) with synthetic samples
 * put into the loaded ranks through the loader's hooks: exact window
 * figures, HOST.DATALOADER (no workers, saturated workers, idle workers, no
 * stall), HW.THROTTLE's edges and its citation in DIST.STRAGGLER. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "findings/telemetry.h"
#include "gen_run.h"
#include "load/rank_telemetry.h"
#include "tsc_format.h"
#include "report/report.h"

#define MS 1000000ll

/* Process CPU growing at busy_pct, `runnable` threads, every 10 ms from
 * 50 ms before the rank's first record to 50 ms after its last. */
static void add_cpu(tsa_rank *r, double busy_pct, uint16_t runnable)
{
    int64_t t0 = r->first_ns - 50 * MS, t1 = r->last_ns + 50 * MS;
    for (int64_t t = t0; t <= t1; t += 10 * MS)
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_PROC_CPU, 0, runnable, 5, (uint64_t)t,
                                                (uint64_t)((double)(t - t0) * busy_pct / 100),
                                                0, 0, NULL, 0), 0);
}

/* n worker processes each using `cpus` of a CPU. */
static void add_workers(tsa_rank *r, int n, double cpus)
{
    int64_t t0 = r->first_ns - 50 * MS, t1 = r->last_ns + 50 * MS;
    for (int w = 0; w < n; w++)
        for (int64_t t = t0; t <= t1; t += 10 * MS)
            assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_TASK_CPU, 0, 'R', 9,
                                                    (uint64_t)t, (uint64_t)((double)(t - t0) * cpus),
                                                    (uint32_t)(7000 + w), TSC_TASK_WORKER,
                                                    "pt_data_worker", 14), 0);
}

static void gpu(tsa_rank *r, int64_t t, uint16_t metric, uint64_t v)
{
    assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_GPU_METRIC, 0, metric, 0, (uint64_t)t, v,
                                            0, 0, NULL, 0), 0);
}

/* Clock `mhz` with reasons `bits` from the window start + from_share of
 * the window to its end; 1980 MHz and no reasons before. */
static void add_throttle(tsa_rank *r, const tsa_rank_result *rr, double from_share,
                         uint32_t mhz, uint64_t bits)
{
    int64_t w0 = rr->window_start_ns, w1 = rr->window_end_ns;
    int64_t at = w0 + (int64_t)((double)(w1 - w0) * from_share);
    gpu(r, w0 - MS, TSC_GPU_SM_CLOCK_MHZ, 1980);
    gpu(r, w0 - MS, TSC_GPU_CLOCK_REASONS, 0);
    gpu(r, at, TSC_GPU_SM_CLOCK_MHZ, mhz);
    gpu(r, at, TSC_GPU_CLOCK_REASONS, bits);
    assert_int_equal(tsa_telemetry_on_meta(r, TSC_META_GPU_MAX_SM_CLOCK, "1980"), 0);
}

static tsa_analysis *reanalyze(run *x)
{
    for (size_t i = 0; i < x->job->n_ranks; i++)
        tsa_telemetry_finish(&x->job->ranks[i]);
    tsa_analysis_free(x->a);
    x->a = tsa_analyze(x->job, NULL);
    assert_non_null(x->a);
    return x->a;
}

static const tsa_finding *find(const tsa_analysis *a, const char *id, int rank)
{
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, id) && a->findings.items[i].rank == rank)
            return &a->findings.items[i];
    return NULL;
}

static size_t count(const tsa_analysis *a, const char *id)
{
    size_t n = 0;
    for (size_t i = 0; i < a->findings.n; i++)
        n += !strcmp(a->findings.items[i].id, id);
    return n;
}

static void test_window_figures_exact(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    run x;
    generate_and_analyze(&o, "figures", &x);
    tsa_rank *r = &x.job->ranks[0];
    add_cpu(r, 150, 3);
    assert_int_equal(tsa_telemetry_on_meta(r, TSC_META_CPU_QUOTA, "2.500"), 0);
    assert_int_equal(tsa_telemetry_on_meta(r, TSC_META_CPU_AFFINITY, "8"), 0);
    add_workers(r, 2, 0.25);
    add_throttle(r, &x.a->ranks[0], 0.25, 1500, TSC_GPU_REASON_HW_THERMAL | TSC_GPU_REASON_IDLE);
    tsa_telemetry_finish(r);
    const tsa_rank_result *rr = &x.a->ranks[0];
    tsa_cpu_window c;
    tsa_cpu_window_of(r, rr->window_start_ns, rr->window_end_ns, &c);
    assert_true(c.have);
    assert_float_equal(c.busy_pct, 150, 1e-6);
    assert_float_equal(c.runnable_mean, 3, 0);
    assert_float_equal(c.quota_cpus, 2.5, 0);
    assert_float_equal(c.limit_cpus, 2.5, 0); /* the quota is below the 8 CPUs */
    assert_int_equal(c.workers, 2);
    /* Task samples are 10 ms apart: the window's ends fall between two. */
    assert_float_equal(c.worker_cpus_mean, 0.25, 0.03);
    tsa_gpu_window g;
    tsa_gpu_window_of(r, rr->window_start_ns, rr->window_end_ns, &g);
    assert_true(g.have);
    assert_float_equal(g.throttled_share, 0.75, 1e-9);
    assert_float_equal(g.sm_clock_mean, 0.25 * 1980 + 0.75 * 1500, 1e-6);
    assert_int_equal(g.sm_clock_min, 1500);
    assert_int_equal(g.reasons, TSC_GPU_REASON_HW_THERMAL); /* idle is not a slowdown */
    /* Outside the samples: nothing. */
    tsa_gpu_window_of(r, 1, 2, &g);
    assert_false(g.have);
    tsa_cpu_window_of(r, 1, 2, &c);
    assert_false(c.have);
    done(&x);
}

static void test_dataloader(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.stall = 0.3;
    run x;
    generate_and_analyze(&o, "stall", &x);
    add_cpu(&x.job->ranks[0], 100, 1);                 /* no workers */
    add_cpu(&x.job->ranks[1], 100, 1);
    add_workers(&x.job->ranks[1], 4, 0.97);            /* saturated */
    add_cpu(&x.job->ranks[2], 100, 1);
    add_workers(&x.job->ranks[2], 4, 0.30);            /* idle enough */
    add_cpu(&x.job->ranks[3], 100, 1);                 /* no workers, but none could be seen */
    assert_int_equal(tsa_telemetry_on_meta(&x.job->ranks[3], TSC_META_WORKERS_VISIBLE, "0"), 0);
    tsa_analysis *a = reanalyze(&x);
    const tsa_finding *f0 = find(a, "HOST.DATALOADER", 0), *f1 = find(a, "HOST.DATALOADER", 1);
    assert_non_null(f0);
    assert_non_null(strstr(f0->title, "no DataLoader workers"));
    assert_true(f0->recoverable_s == 0);
    assert_non_null(f1);
    assert_non_null(strstr(f1->title, "4 DataLoader workers are saturated"));
    assert_int_equal(count(a, "HOST.DATALOADER"), 2);
    assert_int_equal(count(a, "HOST.CPU_OVERSUBSCRIBED"), 0);
    done(&x);

    /* The same host picture without a data stall: nothing to explain. */
    gen_default_options(&o);
    generate_and_analyze(&o, "nostall", &x);
    add_cpu(&x.job->ranks[0], 100, 1);
    a = reanalyze(&x);
    assert_int_equal(count(a, "HOST.DATALOADER"), 0);
    done(&x);
}

/* A job whose step-start gaps have no DataLoader span and no input copy
 * (issue 38, item 1), written as dumps with the host sampler's worker
 * records: `workers` DataLoader workers running `cpus` of a CPU during
 * each gap and idle otherwise. */
static void generate_worker_job(run *x, const char *name, int workers, double cpus)
{
    gen_options o;
    gen_default_options(&o);
    o.stall = 0.2;
    o.stall_no_copy = 1;
    o.workers = workers;
    o.worker_cpus = cpus;
    generate_and_analyze(&o, name, x);
}

static size_t worker_gaps(const tsa_analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_ranks; i++)
        n += a->ranks[i].input.gaps[TSA_INPUT_WORKERS];
    return n;
}

/* Workers busy through every gap (the dumps' TSC_EV_TASK_CPU records grow
 * by 20 ms of CPU over each 20 ms gap): each gap is a data stall, as long
 * as the generator wrote it, and DATA.STALL names the workers. */
static void test_stall_on_busy_workers(void **state)
{
    (void)state;
    run x;
    generate_worker_job(&x, "workers_busy", 2, 1.0);
    const tsa_analysis *a = x.a;
    int64_t w = x.t.wall_ns;
    assert_true(x.t.stall_ns > 0);
    assert_true(llabs(a->budget.line_ns[TSA_BL_DATA_STALL] - x.t.stall_ns) <= w / 1000);
    /* every analysed step of every rank opens with a stall */
    assert_int_equal(worker_gaps(a), (size_t)x.t.steps_analysed * a->n_ranks);
    assert_int_equal(a->ranks[0].input.gaps[TSA_INPUT_H2D], 0);
    assert_int_equal(a->ranks[0].input.gaps[TSA_INPUT_LOADER], 0);
    const tsa_finding *f = find(a, "DATA.STALL", -1);
    assert_non_null(f);
    assert_non_null(strstr(f->title, "DataLoader workers busy"));
    int named = 0;
    for (size_t i = 0; i < f->n_evidence; i++)
        named |= strstr(f->evidence[i], "DataLoader worker processes busy around 32 step-start "
                                        "gap(s)") != NULL &&
                 strstr(f->evidence[i], "100% CPU each") != NULL;
    assert_true(named);
    done(&x);
}

/* The same gaps with the workers recorded idle (no CPU during them), with
 * workers below the busy mark (40% of a CPU each), and with no workers
 * recorded: nothing shows input work, so no data stall; the gap is GPU
 * idle with nothing traced on the host, and no DataLoader advice. */
static void test_no_stall_without_busy_workers(void **state)
{
    (void)state;
    const struct {
        const char *name;
        int workers;
        double cpus;
    } cases[] = {{"workers_idle", 2, 0}, {"workers_light", 2, 0.4}, {"workers_none", 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        run x;
        generate_worker_job(&x, cases[c].name, cases[c].workers, cases[c].cpus);
        const tsa_analysis *a = x.a;
        int64_t w = x.t.wall_ns;
        assert_int_equal(a->budget.line_ns[TSA_BL_DATA_STALL], 0);
        assert_int_equal(worker_gaps(a), 0);
        assert_true(a->idle_ns[TSA_IDLE_UNTRACED] >= x.t.stall_ns - w / 1000);
        assert_null(find(a, "DATA.STALL", -1));
        assert_null(find(a, "HOST.DATALOADER", 0));
        done(&x);
    }
}

static void test_oversubscribed_edges(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    run x;
    generate_and_analyze(&o, "oversub", &x);
    const char *quota[4] = {"1.000", "1.000", "2.000", "max"};
    uint16_t runnable[4] = {2, 1, 3, 3};
    for (int i = 0; i < 4; i++) {
        add_cpu(&x.job->ranks[i], 100, runnable[i]);
        assert_int_equal(tsa_telemetry_on_meta(&x.job->ranks[i], TSC_META_CPU_QUOTA, quota[i]), 0);
        assert_int_equal(tsa_telemetry_on_meta(&x.job->ranks[i], TSC_META_CPU_AFFINITY, "4"), 0);
    }
    tsa_analysis *a = reanalyze(&x);
    /* 2 for 1 CPU and 3 for 2 fire; 1 for 1 and 3 for 4 CPUs do not. */
    assert_non_null(find(a, "HOST.CPU_OVERSUBSCRIBED", 0));
    assert_non_null(find(a, "HOST.CPU_OVERSUBSCRIBED", 2));
    assert_int_equal(count(a, "HOST.CPU_OVERSUBSCRIBED"), 2);
    assert_non_null(strstr(find(a, "HOST.CPU_OVERSUBSCRIBED", 0)->title, "cgroup quota 1"));
    done(&x);
}

static void test_throttle_edges_and_citation(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.straggler = 1;
    o.slowdown = 0.3;
    run x;
    generate_and_analyze(&o, "throttle", &x);
    assert_non_null(find(x.a, "DIST.STRAGGLER", 1));
    /* rank 1: thermal for 60% at 1200 MHz -> fires, and is cited;
     * rank 0: power cap for 3% of the window -> under the share;
     * rank 2: reasons set but the clock is at its maximum -> no slowdown;
     * rank 3: idle bit only -> not a throttle. */
    add_throttle(&x.job->ranks[1], &x.a->ranks[1], 0.4, 1200, TSC_GPU_REASON_SW_THERMAL);
    add_throttle(&x.job->ranks[0], &x.a->ranks[0], 0.97, 1200, TSC_GPU_REASON_SW_POWER_CAP);
    add_throttle(&x.job->ranks[2], &x.a->ranks[2], 0.0, 1980, TSC_GPU_REASON_SW_POWER_CAP);
    add_throttle(&x.job->ranks[3], &x.a->ranks[3], 0.0, 1200, TSC_GPU_REASON_IDLE);
    tsa_analysis *a = reanalyze(&x);
    const tsa_finding *t = find(a, "HW.THROTTLE", 1);
    assert_non_null(t);
    assert_int_equal(count(a, "HW.THROTTLE"), 1);
    assert_non_null(strstr(t->title, "thermal limits for 60%"));
    assert_int_equal(t->severity, TSA_SEV_WARNING);
    const tsa_finding *s = find(a, "DIST.STRAGGLER", 1);
    assert_non_null(s);
    assert_non_null(strstr(s->title, "evidence: its GPU was held down by thermal limits"));
    char *json = tsa_report_json(a);
    assert_non_null(strstr(json, "\"throttled_share\""));
    free(json);
    done(&x);
}

/* A counter written only when it changes: its silence over a window is a
 * 0 only where the sampler's every-tick CPU sample shows it ran inside
 * the window; one starved through the window wrote nothing either, and
 * the count is unknown (-1), never 0. */
static void test_counter_silence_needs_ticks(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    run x;
    generate_and_analyze(&o, "silence", &x);
    tsa_rank *r = &x.job->ranks[0];
    const int64_t w0 = 1000 * MS, w1 = 2000 * MS;
    /* switches: 40 at 500 ms, then nothing until 2,500 ms (90) */
    assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_PROC_SWITCHES, 0, 0, 0, 500 * MS, 40, 0, 0,
                                            NULL, 0), 0);
    assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_PROC_SWITCHES, 0, 0, 0, 2500 * MS, 90, 0,
                                            0, NULL, 0), 0);
    /* ticks every 100 ms up to 900 ms, none for 1,600 ms, then from 2,500 */
    for (int64_t t = 0; t <= 3000 * MS; t += 100 * MS)
        if (t < 900 * MS + 1 || t >= 2500 * MS)
            assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_PROC_CPU, 0, 1, 5, (uint64_t)t,
                                                    (uint64_t)t / 2, 0, 0, NULL, 0), 0);
    tsa_telemetry_finish(r);
    const struct tsa_telemetry *tm = r->telemetry;
    assert_non_null(tm);
    /* starved through [1,000, 2,000]: unknown */
    assert_int_equal(tsa_sampler_ticked(tm, w0, w1), 0);
    assert_true(tsa_counter_delta(tm->switches, tm->n_switches, w0, w1, 0) == -1);
    /* [600, 1,000]: ticks at 700-900, the counter silent: unchanged */
    assert_int_equal(tsa_sampler_ticked(tm, 600 * MS, w0), 1);
    assert_true(tsa_counter_delta(tm->switches, tm->n_switches, 600 * MS, w0, 1) == 0);
    /* a tick exactly at the window's start is not inside it; at its end is */
    assert_int_equal(tsa_sampler_ticked(tm, 900 * MS, 950 * MS), 0);
    assert_int_equal(tsa_sampler_ticked(tm, 2400 * MS, 2500 * MS), 1);
    /* two samples by the end: their difference, ticks or not */
    assert_true(tsa_counter_delta(tm->switches, tm->n_switches, w0, 2600 * MS, 0) == 50);
    /* before the first sample: unknown */
    assert_true(tsa_counter_delta(tm->switches, tm->n_switches, 0, 400 * MS, 1) == -1);
    done(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_figures_exact),
        cmocka_unit_test(test_dataloader),
        cmocka_unit_test(test_stall_on_busy_workers),
        cmocka_unit_test(test_no_stall_without_busy_workers),
        cmocka_unit_test(test_oversubscribed_edges),
        cmocka_unit_test(test_throttle_edges_and_citation),
        cmocka_unit_test(test_counter_silence_needs_ticks),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
