/* End-to-end: the cost figure each rank records (docs/self-cost.md)
 * against an independent measure, and the budget stepping down.
 *
 * The independent measure is the job's CPU time (getrusage of the
 * launcher and its ranks, all waited for) with the preload minus without
 * it: what tscope cost those processes, seen from outside.  The figure
 * (its threads' CPU clocks plus the job's records times one record's
 * measured cost) leaves out what the preload costs before it records
 * (loading, set-up, the exit flush), so the difference is a little larger. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "tb_harness.h"
#include "tb_job.h"

/* A job whose ranks mostly sleep (20 ms compute steps), so its own CPU
 * time is small next to a telemetry thread sampling every 10 ms. */
static const char *const k_args[] = {"--steps", "250", "--compute-us", "20000", NULL};
/* The same calls with 4 KiB buckets, for the comparison of CPU times: the
 * default buckets' reductions were ~5.3 s of the job's CPU under ASan,
 * and that time's drift between runs on this VM (its speed changes by
 * more than 7% from one minute to the next) once made the difference
 * 245 ms against a 624 ms figure; with these the job takes ~0.9 s. */
static const char *const k_small_args[] = {"--steps", "250", "--compute-us", "20000", "--buckets",
                                           "4K,4K,4K,4K", NULL};

static void assert_exit0(const tb_result *r, const char *what)
{
    if (r->timed_out || !WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
        fail_msg("%s: status 0x%x%s\nstderr:\n%.4000s", what, r->status,
                 r->timed_out ? " (timed out)" : "", r->err);
}

static double children_cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* Runs the job with the ranks' arguments args; its checksum lines into
 * *sums, stderr into *err, its processes' CPU time returned. */
static double run(const char *out, int preload, const char *const *args,
                  const char *const *env, char **sums, char **err)
{
    tb_job job = {.nranks = 2, .out_dir = out, .with_preload = preload, .rank_args = args,
                  .env = env, .timeout_s = 120};
    tb_result r;
    double c0 = children_cpu_ms();
    assert_int_equal(tb_run_job(&job, &r), 0);
    double took = children_cpu_ms() - c0;
    assert_exit0(&r, preload ? "job under the preload" : "job without it");
    *sums = tb_checksum_lines(r.out);
    *err = strdup(r.err ? r.err : "");
    tb_result_free(&r);
    return took;
}

/* The report's JSON per_rank[].self_cost objects. */
static cJSON *report_json(const char *out)
{
    const char *argv[] = {tb_tool("REPORT"), "--json", out, NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    cJSON *j = cJSON_Parse(r.out);
    if (!j)
        fail_msg("report JSON does not parse:\n%.2000s\n%.2000s", r.out, r.err);
    tb_result_free(&r);
    return j;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("self_cost.%s is not a number", k);
    return v->valuedouble;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Sum of the ranks' self_cost.cpu_ms in the report of dumps in out. */
static double figure_of(const char *out)
{
    cJSON *j = report_json(out);
    const cJSON *x;
    double figure = 0;
    int n = 0;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "per_rank"))
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(x, "self_cost");
        assert_true(cJSON_IsObject(c));
        figure += num(c, "cpu_ms");
        /* the telemetry thread is most of it here */
        assert_true(num(c, "telemetry_cpu_ms") > num(c, "writer_cpu_ms"));
        assert_true(num(c, "job_record_ns") > 0);
        assert_true(num(c, "mb_written") > 0);
        n++;
    }
    assert_int_equal(n, 2);
    cJSON_Delete(j);
    return figure;
}

static void test_figure_matches_cpu_with_and_without(void **state)
{
    tb_fixture *f = *state;
    if (!f)
        skip();
    static const char *const env[] = {"TSCOPE_NVML_MS=10", "TSCOPE_BUDGET_PCT=0", NULL};
    /* Twice each, interleaved; the least CPU time of each kept (a busy
     * machine only adds to it: cache misses, frequency), the figures of
     * the two runs under the preload averaged. */
    double without = 1e18, with = 1e18, figure = 0;
    char *base = NULL;
    for (int round = 0; round < 2; round++) {
        char none[4300], out[4300], *s0, *s1, *e0, *e1;
        snprintf(none, sizeof none, "%s/none%d", f->dir, round);
        snprintf(out, sizeof out, "%s/out%d", f->dir, round);
        double w0 = run(none, 0, k_small_args, env, &s0, &e0);
        double w1 = run(out, 1, k_small_args, env, &s1, &e1);
        assert_string_equal(s0, s1);
        if (!base)
            base = strdup(s0);
        assert_string_equal(base, s1);
        without = w0 < without ? w0 : without;
        with = w1 < with ? w1 : with;
        figure += figure_of(out) / 2;
        free(s0), free(s1), free(e0), free(e1);
    }
    free(base);
    double diff = with - without;
    printf("self cost: figure %.1f ms, CPU with %.1f ms - without %.1f ms = %.1f ms\n", figure,
           with, without, diff);
    /* The margin.  Below: the difference also holds what the preload
     * costs outside the figure (loading, set-up, the exit flush: tens of
     * ms, up to a third of the difference under ASan, where 1433 ms
     * against 2161 ms was seen), so the figure may be as low as half the
     * difference, less 100 ms.  Above: the noise of runs' CPU time on a
     * loaded machine (the job's own ~0.9 s moved by up to 140 ms between
     * runs here), 35% of the difference plus 100 ms.  A figure that missed
     * the telemetry thread (~5 ms left) fails below; one that counted it
     * twice fails above in the normal build (~2x the difference). */
    assert_true(figure > 100);
    if (figure < diff * 0.5 - 100 || figure > diff * 1.35 + 100)
        fail_msg("figure %.1f ms against %.1f ms measured outside", figure, diff);
}

static void test_tiny_budget_steps_down_results_same(void **state)
{
    tb_fixture *f = *state;
    if (!f)
        skip();
    static const char *const env[] = {"TSCOPE_NVML_MS=10", "TSCOPE_BUDGET_PCT=0.01", NULL};
    char none[4300], *s0, *s1, *e0, *e1;
    snprintf(none, sizeof none, "%s/none", f->dir);
    run(none, 0, k_args, env, &s0, &e0);
    run(f->out, 1, k_args, env, &s1, &e1);
    /* the job's results are the same, byte for byte */
    assert_string_equal(s0, s1);
    /* the step down said once per rank (a later line may say that even
     * the lowest level stays above so tiny a budget) */
    if (count(e1, "above TSCOPE_BUDGET_PCT=0.01%: recording less (telemetry period x4") != 2)
        fail_msg("stderr:\n%.3000s", e1);
    cJSON *j = report_json(f->out);
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "per_rank"))
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(x, "self_cost");
        assert_true(num(c, "level") >= 1);
        assert_true(num(c, "budget_pct") == 0.01);
        const cJSON *steps = cJSON_GetObjectItemCaseSensitive(c, "level_changes_kept");
        assert_true(cJSON_GetArraySize(steps) >= 1);
        const cJSON *s = cJSON_GetArrayItem(steps, 0);
        assert_true(num(s, "from") == 0 && num(s, "to") == 1);
        assert_true(num(s, "period_pct") > 0.01);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "what")->valuestring,
                            "telemetry period x4");
    }
    cJSON_Delete(j);
    free(s0), free(s1), free(e0), free(e1);
}

/* The first level change of each rank in the report: its what and when;
 * the number of ranks. */
static int first_steps(const char *out, char what[][48], long long *at_ns)
{
    cJSON *j = report_json(out);
    const cJSON *x;
    int n = 0;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "per_rank"))
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(x, "self_cost");
        const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "level_changes_kept"), 0);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(s, "what");
        snprintf(what[n], 48, "%s", cJSON_IsString(w) ? w->valuestring : "(none)");
        at_ns[n] = s ? (long long)num(s, "at_ns") : 0;
        n++;
    }
    cJSON_Delete(j);
    return n;
}

/* Records of a kind in rank's dump (tscope-report dump --json) that start
 * before and after a time. */
static void count_kind(const char *out, int rank, const char *kind, long long at_ns,
                       int *before, int *after, long long *last)
{
    *last = 0;
    const char *argv[] = {tb_tool("REPORT"), "dump", "--json", out, NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 120, &r), 0);
    *before = *after = 0;
    for (char *line = r.out; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *e = cJSON_Parse(line);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
        const cJSON *rk = cJSON_GetObjectItemCaseSensitive(e, "rank");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "start_ns");
        if (cJSON_IsString(k) && !strcmp(k->valuestring, kind) && cJSON_IsNumber(rk) &&
            rk->valueint == rank && cJSON_IsNumber(t)) {
            /* a double holds realtime ns to within 256 ns: plenty here */
            long long start = (long long)t->valuedouble;
            *last = start > *last ? start : *last;
            if (start < at_ns)
                (*before)++;
            else
                (*after)++;
        }
        cJSON_Delete(e);
        line = nl ? nl + 1 : NULL;
    }
    tb_result_free(&r);
}

/* A job whose NCCL plugin events (8 channels, proxy steps) are most of
 * tscope's cost, no telemetry: the budget skips the levels that would cut
 * nothing and thins the plugin's events; the collectives stay, and the
 * job's results do not change. */
static void test_tiny_budget_thins_nccl_plugin_events(void **state)
{
    tb_fixture *f = *state;
    if (!f)
        skip();
    static const char *const env[] = {"TSCOPE_NVML_MS=0", "TSCOPE_BUDGET_PCT=0.01",
                                      "TSCOPE_NCCL_PROFILER=full", "FAKENCCL_CHANNELS=8",
                                      "FAKENCCL_NET_STEP_US=50", NULL};
    static const char *const args[] = {"--steps", "200", "--compute-us", "20000", NULL};
    char none[4300], *s0, *s1, *e0, *e1;
    snprintf(none, sizeof none, "%s/none", f->dir);
    tb_job job = {.nranks = 2, .out_dir = none, .with_preload = 0, .rank_args = args,
                  .env = env, .timeout_s = 120};
    tb_result r;
    assert_int_equal(tb_run_job(&job, &r), 0);
    assert_exit0(&r, "job without the preload");
    s0 = tb_checksum_lines(r.out);
    e0 = strdup("");
    tb_result_free(&r);
    job.out_dir = f->out;
    job.with_preload = 1;
    assert_int_equal(tb_run_job(&job, &r), 0);
    assert_exit0(&r, "job under the preload");
    s1 = tb_checksum_lines(r.out);
    e1 = strdup(r.err ? r.err : "");
    tb_result_free(&r);
    assert_string_equal(s0, s1);
    if (count(e1, "recording less (fewer NCCL plugin events (collectives)") != 2)
        fail_msg("stderr:\n%.3000s", e1);
    char what[8][48];
    long long at[8];
    assert_int_equal(first_steps(f->out, what, at), 2);
    for (int rank = 0; rank < 2; rank++) {
        assert_string_equal(what[rank], "fewer NCCL plugin events (collectives)");
        int before, after, coll_before, coll_after;
        long long last_proxy, last_coll;
        /* an op that started just before the step may end after it: its
         * record starts before; none starts 100 ms after */
        count_kind(f->out, rank, "np_proxy", at[rank] + 100000000ll, &before, &after, &last_proxy);
        count_kind(f->out, rank, "np_coll", at[rank] + 100000000ll, &coll_before, &coll_after, &last_coll);
        printf("rank %d: proxy ops %d before the step, %d after (the last %+.3f s from it); "
               "collectives %d, %d (the last %+.3f s)\n", rank, before, after,
               (double)(last_proxy - at[rank]) / 1e9, coll_before, coll_after,
               (double)(last_coll - at[rank]) / 1e9);
        assert_true(before > 0);
        assert_int_equal(after, 0);
        assert_true(coll_before > 0 && coll_after > 0);
    }
    free(s0), free(s1), free(e0), free(e1);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(test_figure_matches_cpu_with_and_without,
                                        tb_fixture_setup, tb_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_tiny_budget_steps_down_results_same,
                                        tb_fixture_setup, tb_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_tiny_budget_thins_nccl_plugin_events,
                                        tb_fixture_setup, tb_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(all, NULL, NULL);
}
