/* Findings people can trust (issue 11), on generated jobs (gen_job.h):
 * the verdict follows the cross-rank pass, recoverable time is counted
 * once (the findings add up to at most the wall, exactly), ns fields are
 * exact integers in JSON, lost writes and duplicate ranks lower the
 * confidence, throughput and step percentiles, host-only phases. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "gen_run.h"
#include "passes/throughput.h"
#include "driver/analyze.h"
#include "report/report.h"
#include "findings/verdict.h"

static const tsa_finding *find(const tsa_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, id))
            return &a->findings.items[i];
    return NULL;
}

/* The job's findings claim each recoverable nanosecond once: exactly, in
 * integer ns, their sum is at most the job's wall. */
static void assert_disjoint(const tsa_analysis *a)
{
    int64_t sum = 0;
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        assert_true(f->recoverable_ns >= 0);
        assert_true(f->recoverable_s == (double)f->recoverable_ns / 1e9);
        sum += f->recoverable_ns;
    }
    if (sum > a->wall_ns)
        fail_msg("findings claim %lld ns, wall is %lld ns", (long long)sum, (long long)a->wall_ns);
}

static char *text_of(const tsa_analysis *a)
{
    char *txt = tsa_report_text(a, 0);
    assert_non_null(txt);
    return txt;
}

/* Every "..._ns" value in the JSON text is an integer literal (or null). */
static void assert_ns_fields_integer(const char *json)
{
    size_t checked = 0;
    for (const char *p = strstr(json, "_ns\":"); p; p = strstr(p + 1, "_ns\":")) {
        const char *v = p + 5;
        while (*v == ' ' || *v == '\t')
            v++;
        if (!strncmp(v, "null", 4) || *v == '{' || *v == '[')
            continue;
        const char *e = v + (*v == '-');
        assert_true(*e >= '0' && *e <= '9');
        while (*e >= '0' && *e <= '9')
            e++;
        if (*e != ',' && *e != '\n' && *e != '}')
            fail_msg("not an integer: %.40s", p);
        checked++;
    }
    assert_true(checked > 10);
}

/* A slow rank, low MFU and exposed waiting: the old model counted the
 * waiting in COMM.EXPOSED and in DIST.STRAGGLER, and the slow rank's
 * extra compute again in EFF.LOW_MFU. */
static void test_straggler_sets_the_verdict(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 6;
    o.steps = 14;
    o.straggler = 4;
    o.slowdown = 0.6;
    o.flops = 1e9;  /* MFU near 0: nearly all compute is overhead */
    run r;
    generate(&o, "straggler", &r);
    load_and_analyze(&r, NULL);
    const tsa_analysis *a = r.a;
    assert_non_null(a->xrank.straggler);
    assert_int_equal(a->verdict, TSA_VERDICT_STRAGGLER_BOUND);
    assert_string_equal(tsa_verdict_name(a->verdict), "straggler-bound");
    assert_int_equal(a->verdict_rank, 4);
    assert_non_null(strstr(a->verdict_reason, "rank 4"));
    /* The straggler's cost comes first. */
    assert_string_equal(a->findings.items[0].id, "DIST.STRAGGLER");
    assert_int_equal(a->findings.items[0].rank, 4);
    /* At most what the what-if says: the waiting hidden behind compute
     * is not recoverable. */
    const tsa_finding *st = &a->findings.items[0];
    assert_true(st->recoverable_ns <= a->xrank.straggler->whatif_saved_ns);
    assert_true(st->recoverable_ns >= a->xrank.straggler->whatif_saved_ns * 8 / 10);
    /* The old sum would pass the wall: that is the double count. */
    double old = (double)a->overlap.exposed_ns / 6 +
                 (double)a->xrank.straggler->whatif_saved_ns +
                 (double)a->budget.line_ns[TSA_BL_OVERHEAD] / 6;
    assert_true(old > (double)a->wall_ns);
    assert_disjoint(a);
    /* COMM.EXPOSED keeps only what the straggler did not cause. */
    const tsa_finding *ce = find(a, "COMM.EXPOSED");
    assert_non_null(ce);
    assert_true(ce->recoverable_ns < a->overlap.exposed_ns / 6);
    assert_non_null(strstr(ce->title, "counted there"));

    char *json = tsa_report_json(a);
    assert_non_null(json);
    assert_ns_fields_integer(json);
    char want[64];
    snprintf(want, sizeof want, "\"window_start_ns\":\t%lld",
             (long long)a->ranks[0].window_start_ns);
    assert_non_null(strstr(json, want));
    assert_non_null(strstr(json, "\"kind\":\t\"straggler-bound\""));
    free(json);

    /* Units are named; the two "last" figures differ; one slowdown figure. */
    char *txt = text_of(a);
    assert_non_null(strstr(txt, "EFFICIENCY BUDGET (per rank"));
    assert_non_null(strstr(txt, "COLLECTIVES (sum over all ranks"));
    assert_non_null(strstr(txt, "CROSS-RANK (one row per rank"));
    assert_non_null(strstr(txt, "last-coll"));
    assert_null(strstr(txt, "vs med"));
    assert_non_null(strstr(txt, "latest to arrive in"));
    assert_non_null(strstr(txt, "VERDICT  straggler-bound"));
    free(txt);
    done(&r);
}

static void test_healthy_job_is_gpu_bound(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 4;
    o.steps = 10;
    o.overlap = 0.9;
    run r;
    generate(&o, "healthy", &r);
    load_and_analyze(&r, NULL);
    assert_int_equal(r.a->verdict, TSA_VERDICT_GPU_BOUND);
    assert_int_equal(r.a->verdict_rank, -1);
    assert_int_equal(r.a->confidence, TSA_CONF_HIGH);
    assert_disjoint(r.a);
    char *txt = text_of(r.a);
    assert_non_null(strstr(txt, "CONFIDENCE high"));
    free(txt);
    done(&r);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

/* Three dumps claim rank 0: one is analysed, the others are listed. */
static void test_duplicate_ranks(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 4;
    o.steps = 10;
    run r;
    generate(&o, "dup", &r);
    /* A shorter dump of rank 0 (fewer records), named to sort first, and
     * a byte copy of the real one. */
    gen_options s;
    gen_default_options(&s);
    s.ranks = 1;
    s.steps = 4;
    run small;
    generate(&s, "dup_small", &small);
    char from[600], to[600];
    snprintf(from, sizeof from, "%s/tscope_r0_node0_10000_gen-run.tsd", small.dir);
    snprintf(to, sizeof to, "%s/tscope_r0_a_short.tsd", r.dir);
    copy_file(from, to);
    snprintf(from, sizeof from, "%s/tscope_r0_node0_10000_gen-run.tsd", r.dir);
    snprintf(to, sizeof to, "%s/tscope_r0_z_copy.tsd", r.dir);
    copy_file(from, to);
    load_and_analyze(&r, NULL);
    assert_int_equal(r.job->n_ranks, 4);
    assert_int_equal(r.job->n_duplicates, 2);
    for (size_t i = 0; i < r.job->n_duplicates; i++) {
        assert_int_equal(r.job->duplicates[i].rank, 0);
        assert_non_null(strstr(r.job->duplicates[i].kept_file, "node0_10000_gen-run"));
    }
    const tsa_finding *f = find(r.a, "LOAD.DUPLICATE_RANK");
    assert_non_null(f);
    assert_int_equal(f->rank, 0);
    assert_int_equal(r.a->confidence, TSA_CONF_MEDIUM);
    assert_disjoint(r.a);
    char *txt = text_of(r.a);
    assert_non_null(strstr(txt, "CONFIDENCE medium: lowered by LOAD.DUPLICATE_RANK"));
    assert_non_null(strstr(txt, "DUPLICATE RANKS"));
    free(txt);
    char *json = tsa_report_json(r.a);
    assert_non_null(strstr(json, "\"level\":\t\"medium\""));
    free(json);
    done(&r);
}

static void test_lost_writes(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 3;
    o.steps = 8;
    o.lossy_rank = 1;
    o.lost_write_bytes = 4096;
    run r;
    generate(&o, "lossy", &r);
    load_and_analyze(&r, NULL);
    assert_int_equal(r.job->ranks[1].dropped_write_bytes, 4096);
    const tsa_finding *f = find(r.a, "LOAD.LOST_WRITES");
    assert_non_null(f);
    assert_int_equal(f->rank, 1);
    assert_int_equal(r.a->confidence, TSA_CONF_MEDIUM); /* a small share */
    done(&r);

    o.lost_write_bytes = 1ull << 40; /* most of the data */
    generate(&o, "lossy_big", &r);
    load_and_analyze(&r, NULL);
    assert_int_equal(r.a->confidence, TSA_CONF_LOW);
    char *json = tsa_report_json(r.a);
    assert_non_null(strstr(json, "\"level\":\t\"low\""));
    free(json);
    done(&r);
}

static void test_throughput_host_only(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 3;
    o.steps = 12;
    o.host_only = 1;
    run r;
    generate(&o, "tput", &r);
    tsa_analysis_options opt;
    tsa_analysis_default_options(&opt);
    opt.samples_per_step = 32;
    opt.tokens_per_step = 4096;
    load_and_analyze(&r, &opt);
    const tsa_analysis *a = r.a;
    const tsa_throughput *t = &a->throughput;
    double sps = (double)a->steps / ((double)a->wall_ns / 1e9);
    assert_true(t->steps_per_s == sps);
    assert_true(t->samples_per_s == 32.0 * 3 * sps);
    assert_true(t->tokens_per_s == 4096.0 * 3 * sps);
    /* Step k of the job is the longest rank's step k. */
    assert_int_equal(t->n_steps, a->steps);
    for (size_t k = 0; k < t->n_steps; k++) {
        int64_t m = 0;
        for (size_t i = 0; i < r.job->n_ranks; i++) {
            const tsa_step *s = &r.job->ranks[i].steps[(size_t)a->warmup + k];
            if (s->end_ns - s->start_ns > m)
                m = s->end_ns - s->start_ns;
        }
        assert_int_equal(t->step_ns[k], m);
    }
    assert_true(t->step_p50_ns <= t->step_p95_ns && t->step_p95_ns <= t->step_p99_ns);
    /* Host-only: no "forward" (it was not measured), "compute (host)". */
    char *txt = text_of(a);
    char *ph = strstr(txt, "PHASES");
    assert_non_null(ph);
    char *end = strstr(ph, "\n\n");
    if (end)
        *end = 0; /* the section only */
    assert_non_null(strstr(ph, "compute (host)"));
    assert_null(strstr(ph, "forward"));
    assert_null(strstr(ph, "backward"));
    assert_non_null(strstr(txt, "samples/s"));
    assert_non_null(strstr(txt, "step time p95"));
    assert_null(strstr(txt, "p50")); /* the median has one name: "median step" */
    free(txt);
    char *json = tsa_report_json(a);
    assert_non_null(strstr(json, "\"forward\":\tnull"));
    assert_non_null(strstr(json, "\"compute\":\t"));
    assert_non_null(strstr(json, "\"samples_per_s\""));
    free(json);
    /* No GPU records: never gpu-bound.  Its exposed communication is over
     * a quarter of the wall, which names the verdict (verdict.h). */
    double comm = (double)(a->budget.line_ns[TSA_BL_COMM_WAIT] +
                           a->budget.line_ns[TSA_BL_COMM_TRANSFER]) / (double)a->budget.wall_ns;
    assert_true(comm >= TSA_TH_LOSS_VERDICT);
    assert_int_equal(a->verdict, TSA_VERDICT_COMM_BOUND);
    done(&r);
}

/* A budget line that the records cannot measure says so instead of "0":
 * host-only dumps see neither data stalls, launch idle nor copies, and
 * without MFU the compute overhead is unknown.  GPU dumps measure all. */
static void test_unmeasured_budget_lines(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.steps = 8;
    o.host_only = 1;
    run r;
    generate(&o, "unmeasured", &r);
    load_and_analyze(&r, NULL);
    const tsa_budget *b = &r.a->budget;
    static const tsa_budget_line unseen[] = {TSA_BL_OVERHEAD, TSA_BL_DATA_STALL,
                                             TSA_BL_HOST_IDLE, TSA_BL_COPY};
    for (size_t i = 0; i < sizeof unseen / sizeof unseen[0]; i++)
        assert_false(tsa_budget_line_measured(b, unseen[i], r.a->gpu));
    assert_true(tsa_budget_line_measured(b, TSA_BL_COMM_WAIT, r.a->gpu));
    char *txt = text_of(r.a);
    assert_non_null(strstr(txt, "data stall                  not measured (no GPU records)"));
    assert_null(strstr(txt, "data stall 0.0%"));
    free(txt);
    char *json = tsa_report_json(r.a);
    assert_non_null(strstr(json, "\"measured\":\tfalse"));
    free(json);
    done(&r);

    o.host_only = 0;
    o.flops = 1e12; /* GEMM records: MFU known on the H100 default device */
    generate(&o, "measured", &r);
    load_and_analyze(&r, NULL);
    assert_false(isnan(r.a->budget.mfu));
    for (int l = 0; l < TSA_BL_COUNT; l++)
        assert_true(tsa_budget_line_measured(&r.a->budget, (tsa_budget_line)l, r.a->gpu));
    json = tsa_report_json(r.a);
    assert_null(strstr(json, "\"measured\":\tfalse"));
    free(json);
    done(&r);
}

static void test_percentiles_and_sparkline(void **state)
{
    (void)state;
    int64_t v[100];
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    assert_int_equal(tsa_percentile_sorted(v, 100, 50), 50);
    assert_int_equal(tsa_percentile_sorted(v, 100, 95), 95);
    assert_int_equal(tsa_percentile_sorted(v, 100, 99), 99);
    assert_int_equal(tsa_percentile_sorted(v, 1, 99), 1);
    assert_int_equal(tsa_percentile_sorted(v, 0, 50), 0);
    char buf[256];
    int64_t ramp[8] = {10, 20, 30, 40, 50, 60, 70, 80};
    tsa_sparkline(ramp, 8, 60, 0, buf, sizeof buf);
    assert_string_equal(buf, "_.-~=+*#");
    tsa_sparkline(ramp, 8, 4, 0, buf, sizeof buf); /* each cell: its slowest */
    assert_string_equal(buf, ".~+#");
    int64_t two[2] = {5, 9};
    tsa_sparkline(two, 2, 60, 1, buf, sizeof buf);
    assert_string_equal(buf, "\u2581\u2588");
    tsa_sparkline(v, 100, 60, 1, buf, sizeof buf);
    assert_int_equal(strlen(buf), 60 * 3); /* 3-byte blocks, never split */
    tsa_sparkline(v, 100, 60, 1, buf, 10);
    assert_int_equal(strlen(buf), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straggler_sets_the_verdict),
        cmocka_unit_test(test_healthy_job_is_gpu_bound),
        cmocka_unit_test(test_duplicate_ranks),
        cmocka_unit_test(test_lost_writes),
        cmocka_unit_test(test_throughput_host_only),
        cmocka_unit_test(test_unmeasured_budget_lines),
        cmocka_unit_test(test_percentiles_and_sparkline),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
