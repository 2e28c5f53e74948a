/* End-to-end: `tscope-report live` on running 4-rank black-box jobs under
 * the preload (the test NCCL blocking ranks on each other).  While the job
 * runs, the live series name a persistently slow rank with its
 * persistence, and name nobody in a balanced job; once it has ended, every
 * series equals what the ranks' summary files give, recomputed here from
 * the files themselves; each rank's per-op metrics equal what the rank
 * program says it called.  Run one case with: test_e2e_bb_live NAME */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include "tb_blackbox.h"
#include "tb_check.h"
#include "tb_harness.h"
#include "tb_job.h"

typedef tb_fixture fx;

#define setup tb_fixture_setup
#define teardown tb_fixture_teardown

#define WINDOW 100

/* `tscope-report live DIR --once --window 100`: its output (caller frees). */
static char *live_once(const char *out)
{
    const char *argv[] = {tb_tool("REPORT"), "live", out, "--once", "--window", "100", NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status))
        fail_msg("tscope-report live: 0x%x\n%.2000s", r.status, r.err);
    char *text = strdup(r.out);
    tb_result_free(&r);
    return text;
}

typedef struct live_plan {
    tb_signal_plan marks;
    const char *out;
    char *text;      /* live --once while the job ran */
} live_plan;

/* A hook: once every rank is past its mark, the live series of the
 * running job. */
static int live_while_running(int pid, void *arg)
{
    (void)pid;
    live_plan *p = arg;
    tb_signal_plan probe = p->marks;
    probe.sig = 0;
    if (!tb_signal_when_marked(-1, &probe))
        return 0;
    p->marks.seen = 1;
    p->text = live_once(p->out);
    return 1;
}

static void near(const char *what, double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12))
        fail_msg("%s: live says %.17g, the summaries %.17g", what, got, want);
}

static uint64_t dur(const tsc_step_summary *s) { return s->end_ns - s->start_ns; }

static uint64_t own(const tsc_step_summary *s)
{
    return dur(s) - (s->nccl_ns < dur(s) ? s->nccl_ns : dur(s));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median4(uint64_t v[4])
{
    qsort(v, 4, sizeof v[0], cmp_u64);
    return ((double)v[1] + (double)v[2]) / 2;
}

/* The rank (0-3) with the most time outside NCCL in step s, -1 on a tie. */
static int slowest(tbb_rank_steps *rs, size_t s)
{
    int who = 0, tie = 0;
    for (int k = 1; k < 4; k++) {
        if (own(&rs[k].s[s]) > own(&rs[who].s[s])) {
            who = k;
            tie = 0;
        } else if (own(&rs[k].s[s]) == own(&rs[who].s[s])) {
            tie = 1;
        }
    }
    return tie ? -1 : who;
}

/* Every series of the live text against the summaries of out, recomputed
 * here; returns the straggler the summaries name (-1 none). */
static int expect_exact(const char *out, const char *text)
{
    tbb_rank_steps rs[4];
    assert_int_equal(tbb_load_steps(out, rs, 4), 4);
    size_t n = rs[0].n;
    uint64_t dropped = 0;
    for (int k = 0; k < 4; k++) {
        assert_int_equal(rs[k].rank, k);
        n = rs[k].n < n ? rs[k].n : n;
        for (size_t i = 0; i < rs[k].n; i++) {
            assert_int_equal(rs[k].s[i].step, i);
            dropped += rs[k].s[i].dropped;
        }
    }
    double job_sum = 0, nccl = 0;
    for (size_t s = 0; s < n; s++) {
        uint64_t mx = 0;
        for (int k = 0; k < 4; k++) {
            mx = dur(&rs[k].s[s]) > mx ? dur(&rs[k].s[s]) : mx;
            nccl += (double)rs[k].s[s].nccl_ns;
        }
        job_sum += (double)mx;
    }
    near("ranks", tbb_prom(text, "tscope_job_ranks", NULL), 4);
    near("complete steps", tbb_prom(text, "tscope_job_complete_steps_total", NULL), (double)n);
    near("incomplete steps", tbb_prom(text, "tscope_job_incomplete_steps_total", NULL), 0);
    near("histogram count", tbb_prom(text, "tscope_job_step_duration_seconds_count", NULL),
         (double)n);
    near("histogram sum", tbb_prom(text, "tscope_job_step_duration_seconds_sum", NULL),
         job_sum / 1e9);
    near("NCCL host time", tbb_prom(text, "tscope_job_nccl_host_seconds_total", NULL),
         nccl / 1e9);
    near("dropped", tbb_prom(text, "tscope_job_dropped_records_total", NULL), (double)dropped);
    /* no CUPTI, no cuBLAS on the test bed: the GPU series are absent, not 0 */
    static const char *const absent[] = {"tscope_job_data_stall_seconds_total",
                                         "tscope_job_last_step_data_stall_max_seconds",
                                         "tscope_job_mfu_ratio"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        if (!isnan(tbb_prom(text, absent[i], NULL)))
            fail_msg("%s on a job without GPU records", absent[i]);
    /* the last complete step */
    size_t L = n - 1;
    uint64_t d[4], o[4];
    for (int k = 0; k < 4; k++)
        d[k] = dur(&rs[k].s[L]);
    uint64_t mx = d[0] > d[1] ? d[0] : d[1];
    mx = d[2] > mx ? d[2] : mx;
    mx = d[3] > mx ? d[3] : mx;
    near("last step", tbb_prom(text, "tscope_job_last_step", NULL), (double)L);
    near("last step max", tbb_prom(text, "tscope_job_last_step_max_seconds", NULL), mx / 1e9);
    near("last step median", tbb_prom(text, "tscope_job_last_step_median_seconds", NULL),
         median4(d) / 1e9);
    int slow = slowest(rs, L);
    near("last step slowest", tbb_prom(text, "tscope_job_last_step_slowest_rank", NULL), slow);
    if (slow >= 0) {
        double mean = 0, sq = 0;
        for (int k = 0; k < 4; k++)
            mean += k == slow ? 0 : (double)own(&rs[k].s[L]) / 3;
        for (int k = 0; k < 4; k++)
            sq += k == slow ? 0 : pow((double)own(&rs[k].s[L]) - mean, 2);
        double sd = sqrt(sq / 2);
        near("last step z", tbb_prom(text, "tscope_job_last_step_slowest_zscore", NULL),
             ((double)own(&rs[slow].s[L]) - mean) / (sd > 1000 ? sd : 1000));
    }
    /* the straggler window: the last 100 complete steps */
    size_t from = n > WINDOW ? n - WINDOW : 0, W = n - from;
    int count[4] = {0};
    double wn = 0, wd = 0;
    uint64_t med_own[WINDOW];
    for (size_t s = from; s < n; s++) {
        int w = slowest(rs, s);
        if (w >= 0)
            count[w]++;
        for (int k = 0; k < 4; k++) {
            wn += (double)rs[k].s[s].nccl_ns;
            wd += (double)dur(&rs[k].s[s]);
            o[k] = own(&rs[k].s[s]);
        }
        med_own[s - from] = (uint64_t)median4(o);
    }
    near("window steps", tbb_prom(text, "tscope_job_straggler_window_steps", NULL), (double)W);
    near("NCCL ratio", tbb_prom(text, "tscope_job_nccl_host_ratio", NULL), wn / wd);
    int top = 0;
    for (int k = 1; k < 4; k++)
        top = count[k] > count[top] ? k : top;
    double rel[WINDOW];
    size_t m = 0;
    for (size_t s = from; s < n; s++)
        if (med_own[s - from])
            rel[m++] = (double)own(&rs[top].s[s]) / (double)med_own[s - from] - 1;
    qsort(rel, m, sizeof rel[0], cmp_double);
    double slowdown = m % 2 ? rel[m / 2] : (rel[m / 2 - 1] + rel[m / 2]) / 2;
    double z = (count[top] - W * 0.25) / sqrt(W * 0.25 * 0.75);
    char label[32];
    snprintf(label, sizeof label, "rank=\"%d\"", top);
    near("persistence", tbb_prom(text, "tscope_job_straggler_persistence_ratio", label),
         (double)count[top] / (double)W);
    near("binomial z", tbb_prom(text, "tscope_job_straggler_zscore", label), z);
    near("slowdown", tbb_prom(text, "tscope_job_straggler_slowdown_ratio", label), slowdown);
    int named = W >= 10 && z >= 3 && slowdown >= 0.03 ? top : -1;
    near("straggler", tbb_prom(text, "tscope_job_straggler_rank", NULL), named);
    tbb_free_steps(rs, 4);
    return named;
}

/* Each rank's last metrics file (written at exit): calls and bytes by op
 * equal the rank program's own tally of its collective and point-to-point
 * calls. */
static void expect_ops_match_tally(const char *out, const char *exp)
{
    static const char *const ops[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                      "Send", "Recv"};
    for (int r = 0; r < 4; r++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/metrics/tscope_r%d.prom", out, r);
        char *text = tb_read_file(path);
        cJSON *tally = tb_load_expect(exp, r);
        assert_non_null(text);
        assert_non_null(tally);
        cJSON *by_op = cJSON_GetObjectItem(tally, "ops");
        int seen = 0;
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            cJSON *t = cJSON_GetObjectItem(by_op, ops[i]);
            double calls = t ? cJSON_GetNumberValue(cJSON_GetObjectItem(t, "calls")) : 0,
                   bytes = t ? cJSON_GetNumberValue(cJSON_GetObjectItem(t, "bytes")) : 0;
            char label[48];
            snprintf(label, sizeof label, "op=\"%s\"", ops[i]);
            double mc = tbb_prom(text, "tscope_nccl_op_calls_total", label),
                   mb = tbb_prom(text, "tscope_nccl_op_bytes_total", label);
            if (isnan(mc))
                mc = mb = 0; /* an op never called has no series */
            if (mc != calls || mb != bytes)
                fail_msg("rank %d %s: metrics %g calls %g bytes, the rank made %g calls of %g "
                         "bytes", r, ops[i], mc, mb, calls, bytes);
            seen += calls > 0;
        }
        assert_int_equal(seen, 6); /* the job calls each of them (Broadcast once) */
        cJSON_Delete(tally);
        free(text);
    }
}

/* 600 steps of ~3.5 ms (two AllReduce buckets, an FSDP pair, a send/recv
 * ring); extra: more rank options. */
static void run_live_job(fx *f, const char *const *extra, live_plan *plan, tb_result *r)
{
    static char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "300:%s", f->mark);
    const char *args[32] = {"--steps", "600", "--compute-us", "3000", "--buckets", "16K,4K",
                            "--grouped-buckets", "0", "--fsdp-bytes", "16K", "--ring-bytes",
                            "8K", "--no-extras", "--mark-after", mark_arg};
    size_t k = 15;
    for (; extra && *extra && k < 31; extra++)
        args[k++] = *extra;
    args[k] = NULL;
    const char *env[] = {"TSCOPE_MODE=blackbox", "TSCOPE_FLUSH_MS=100", "TSCOPE_BB_K=1000",
                         NULL};
    *plan = (live_plan){.marks = {.mark = f->mark, .nranks = 4}, .out = f->out};
    tb_job job = {.nranks = 4, .out_dir = f->out, .expect_prefix = f->exp, .with_preload = 1,
                  .rank_args = args, .env = env, .hook = live_while_running, .hook_arg = plan,
                  .timeout_s = 120};
    assert_int_equal(tb_run_job(&job, r), 0);
    if (r->timed_out || !WIFEXITED(r->status) || WEXITSTATUS(r->status))
        fail_msg("job failed: 0x%x\n%.3000s", r->status, r->err);
    if (!plan->text)
        fail_msg("the job ended before every rank passed step 300");
    /* it was running: steps were still to come */
    double done = tbb_prom(plan->text, "tscope_job_complete_steps_total", NULL);
    if (!(done >= WINDOW && done < 600))
        fail_msg("live while running: %g complete steps\n%.3000s", done, plan->text);
}

/* Rank 2 computes 2.5x as long in every step: while the job runs, the live
 * series name it, slowest in most steps of the window (at least half;
 * nearly all on an idle machine); after the end every series matches the
 * summaries. */
static void test_live_names_persistent_straggler(void **state)
{
    fx *f = *state;
    const char *slow[] = {"--slow-ranks", "2", "--slow-factor", "2.5", NULL};
    live_plan plan;
    tb_result r;
    run_live_job(f, slow, &plan, &r);
    double who = tbb_prom(plan.text, "tscope_job_straggler_rank", NULL),
           share = tbb_prom(plan.text, "tscope_job_straggler_persistence_ratio", "rank=\"2\""),
           z = tbb_prom(plan.text, "tscope_job_straggler_zscore", "rank=\"2\"");
    if (who != 2 || !(share >= 0.5) || !(z >= 3)) /* chance: 0.25; a busy machine's
                                                      hiccups make others slowest at times */
        fail_msg("while running: straggler %g, rank 2 slowest in %g of the window (z %g)\n%.4000s",
                 who, share, z, plan.text);
    char *final = live_once(f->out);
    assert_int_equal(expect_exact(f->out, final), 2);
    expect_ops_match_tally(f->out, f->exp);
    free(final);
    free(plan.text);
    tb_result_free(&r);
}

/* Bad input to `tscope-report live`: a damaged file among the summaries
 * is named on stderr (exit status 1) and the rest is read; a port in use
 * is one line and exit status 2. */
static void expect_bad_input_said(const char *out)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/tscope_r9_junk.tsd", out);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 500; i++)
        fputc((i * 37) & 0xff, fp);
    fclose(fp);
    const char *argv[] = {tb_tool("REPORT"), "live", out, "--once", NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1 || !strstr(r.err, "tscope_r9_junk") ||
        tbb_prom(r.out, "tscope_job_ranks", NULL) != 4)
        fail_msg("live on a damaged file: 0x%x\n%.2000s\n%.2000s", r.status, r.err, r.out);
    tb_result_free(&r);
    unlink(path);
    int taken = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    assert_true(taken >= 0 && bind(taken, (struct sockaddr *)&sa, sizeof sa) == 0 &&
                listen(taken, 1) == 0 && getsockname(taken, (struct sockaddr *)&sa, &sl) == 0);
    char port[16];
    snprintf(port, sizeof port, "%d", ntohs(sa.sin_port));
    const char *serve[] = {tb_tool("REPORT"), "live", out, "--port", port, NULL};
    assert_int_equal(tb_run(serve, NULL, 60, &r), 0);
    close(taken);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 2 ||
        !strstr(r.err, "cannot serve /metrics on 127.0.0.1:") || strchr(r.err, '\n') != strrchr(r.err, '\n'))
        fail_msg("live on a port in use: 0x%x\n%.2000s", r.status, r.err);
    tb_result_free(&r);
}

/* The same job with no slow rank: nobody is named, while it runs or after. */
static void test_live_balanced_names_nobody(void **state)
{
    fx *f = *state;
    live_plan plan;
    tb_result r;
    run_live_job(f, NULL, &plan, &r);
    if (tbb_prom(plan.text, "tscope_job_straggler_rank", NULL) != -1)
        fail_msg("a balanced job has a straggler while running:\n%.4000s", plan.text);
    char *final = live_once(f->out);
    assert_int_equal(expect_exact(f->out, final), -1);
    expect_bad_input_said(f->out);
    free(final);
    free(plan.text);
    tb_result_free(&r);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_live_names_persistent_straggler, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_balanced_names_nobody, setup, teardown),
    };
    if (!tb_e2e_available())
        return 77;
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
