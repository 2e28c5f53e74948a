/* End-to-end: hangs, desyncs and early exits on the test bed, with real
 * processes blocking in the test NCCL, read back by `tscope-report hang`.
 * Run one case with: test_e2e_hang NAME */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "tb_check.h"
#include "tb_harness.h"
#include "tb_job.h"

typedef tb_fixture fx;

#define setup tb_fixture_setup
#define teardown tb_fixture_teardown

static void show(const char *what, const tb_result *r)
{
    fprintf(stderr, "%s: status 0x%x%s\nstdout:\n%.3000s\nstderr:\n%.3000s\n", what, r->status,
            r->timed_out ? " (timed out)" : "", r->out, r->err);
}

/* `tscope-report hang [--json] DIR`: its output and exit status. */
static char *report_hang(const char *dir, int json, int *status)
{
    const char *argv[] = {tb_tool("REPORT"), "hang", json ? "--json" : dir, json ? dir : NULL,
                          NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    *status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
    char *out = strdup(r.out);
    if (*status > 1)
        show("tscope-report hang", &r);
    tb_result_free(&r);
    return out;
}

/* The findings with this id from `hang --json` (a new array of copies). */
static cJSON *findings(const char *json_text, const char *id)
{
    cJSON *root = cJSON_Parse(json_text);
    assert_non_null(root);
    cJSON *out = cJSON_CreateArray();
    cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(root, "findings"))
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), id))
            cJSON_AddItemToArray(out, cJSON_Duplicate(f, 1));
    cJSON_Delete(root);
    return out;
}

/* Exactly n findings with this id; the first one (copied) when n is 1. */
static cJSON *expect_findings(const char *json_text, const char *id, int n)
{
    cJSON *all = findings(json_text, id);
    if (cJSON_GetArraySize(all) != n)
        fail_msg("want %d %s:\n%s", n, id, json_text);
    cJSON *first = n ? cJSON_Duplicate(cJSON_GetArrayItem(all, 0), 1) : NULL;
    cJSON_Delete(all);
    return first;
}

/* A job that must fail by itself (not time out, not succeed). */
static void run_failing_job(fx *f, const char *const *args, const char *what)
{
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .timeout_s = 40};
    tb_result r;
    assert_int_equal(tb_run_job(&job, &r), 0);
    if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1) {
        show(what, &r);
        fail_msg("the launcher should report a failed rank and exit 1");
    }
    tb_result_free(&r);
}

/* "[1]" style text of a JSON array of ranks. */
static void ranks_text(const cJSON *arr, char *buf, size_t cap)
{
    char *s = cJSON_PrintUnformatted(arr);
    snprintf(buf, cap, "%s", s ? s : "(none)");
    free(s);
}

static void expect_ranks(const cJSON *f, const char *key, const char *want)
{
    char got[256];
    ranks_text(cJSON_GetObjectItem(f, key), got, sizeof got);
    if (strcmp(got, want))
        fail_msg("%s = %s, want %s", key, got, want);
}

/* World communicator: a Broadcast, then 6 calls per step (4 gradient
 * AllReduce, Send, Recv): the first AllReduce of step s has seq 1 + 6 s. */
static int first_allreduce_seq(int step) { return 1 + 6 * step; }

/* Rank 1 stops calling NCCL at step 20; ranks 0, 2, 3 block in that step's
 * first AllReduce.  With TSCOPE_HANG_S=1 each stuck rank writes a HANG
 * marker and one stderr line while the job is hung; then the harness
 * SIGTERMs the job.  DIST.HANG names the AllReduce and its seq, rank 1
 * missing, ranks 0,2,3 stuck. */
/* `hang --json` of that job: the one DIST.HANG names step 20's first
 * AllReduce, rank 1 missing, ranks 0, 2, 3 stuck; returned (copy) with
 * the JSON text in *json. */
static cJSON *expect_step20_hang(fx *f, char **json)
{
    int st;
    *json = report_hang(f->out, 1, &st);
    if (st != 1)
        fail_msg("hang --json exited %d, want 1 (a hang):\n%.4000s", st, *json);
    cJSON *h = expect_findings(*json, "DIST.HANG", 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(h, "op")), "AllReduce");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(h, "seq")),
                     first_allreduce_seq(20));
    expect_ranks(h, "missing_ranks", "[1]");
    expect_ranks(h, "stuck_ranks", "[0,2,3]");
    expect_ranks(h, "exited_ranks", "[]");
    return h;
}

/* Runs the job with these rank options (ending with --mark-after) and
 * sends `sig` delay_ms after every rank wrote its mark; it must end by it. */
static void run_marked_job(fx *f, const char *const *args, int sig, int delay_ms,
                           const char *const *env, tb_result *r)
{
    tb_signal_plan plan = {.mark = f->mark, .nranks = 4, .sig = sig, .delay_ms = delay_ms,
                           .whole_group = sig == SIGKILL};
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .env = env, .hook = tb_signal_when_marked, .hook_arg = &plan, .timeout_s = 40};
    assert_int_equal(tb_run_job(&job, r), 0);
    assert_true(plan.seen);
    if (r->timed_out || !WIFSIGNALED(r->status) || WTERMSIG(r->status) != sig) {
        show("hang", r);
        fail_msg("the job should end by the harness's signal %d", sig);
    }
}

/* Runs the job where rank 1 stops at step 20 and sends `sig` delay_ms
 * after every rank finished step 19. */
static void run_hang_job(fx *f, int sig, int delay_ms, const char *const *env, tb_result *r)
{
    char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "20:%s", f->mark);
    const char *args[] = {"--steps", "100000", "--compute-us", "500", "--stop-at", "1:20",
                          "--mark-after", mark_arg, NULL};
    run_marked_job(f, args, sig, delay_ms, env, r);
}

static void test_rank_stops_others_hang(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    tb_result r;
    /* 2.5 s: the watchdog (1 s) has fired by then */
    run_hang_job(f, SIGTERM, 2500,
                 (const char *const[]){"TSCOPE_HANG_S=1", "TSCOPE_FLUSH_MS=200", NULL}, &r);
    /* One watchdog line per stuck rank, naming op, comm and seq. */
    char want_seq[64];
    snprintf(want_seq, sizeof want_seq, " seq %d in flight", first_allreduce_seq(20));
    int lines = 0;
    for (const char *p = r.err; (p = strstr(p, "tscope: rank ")); p++) {
        const char *eol = strchr(p, '\n');
        if (eol && strstr(p, "ncclAllReduce on comm ") < eol && strstr(p, want_seq) &&
            strstr(p, want_seq) < eol)
            lines++;
    }
    if (lines != 3) {
        show("hang", &r);
        fail_msg("%d watchdog lines, want 3 (ranks 0, 2, 3)", lines);
    }
    assert_null(strstr(r.err, "tscope: rank 1 "));
    tb_result_free(&r);

    /* The HANG markers are in the stuck ranks' dumps, written before the
     * END that the SIGTERM flush wrote. */
    int st;
    cJSON *all = tb_dump_json(f->out, &st);
    assert_non_null(all);
    for (int rank = 0; rank < 4; rank++) {
        cJSON *hangs = tb_records_of(all, rank, "hang");
        assert_int_equal(cJSON_GetArraySize(hangs), rank == 1 ? 0 : 1);
        cJSON_Delete(hangs);
        /* The stuck call was written as in flight, once (calls that were
         * in flight at a drain and returned later have one too). */
        cJSON *enters = tb_records_of(all, rank, "nccl_enter"), *e;
        int stuck_enters = 0;
        cJSON_ArrayForEach(e, enters)
            stuck_enters += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "seq")) ==
                            first_allreduce_seq(20);
        assert_int_equal(stuck_enters, rank == 1 ? 0 : 1);
        cJSON_Delete(enters);
    }
    cJSON_Delete(all);

    char *json;
    cJSON *h = expect_step20_hang(f, &json);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(h, "watchdog")));
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(h, "last_step")) >= 18);
    cJSON_Delete(h);
    expect_findings(json, "DIST.DESYNC", 0);
    expect_findings(json, "RANK.EXITED_EARLY", 0);
    free(json);

    /* The text view: one line per group of ranks. */
    char *text = report_hang(f->out, 0, &st);
    assert_int_equal(st, 1);
    if (!strstr(text, "DIST.HANG  AllReduce seq") || !strstr(text, "ranks 0,2-3") ||
        !strstr(text, "rank 1 "))
        fail_msg("text view:\n%s", text);
    free(text);
}

/* The same hang ended by SIGKILL of every process, no watchdog: no END
 * record anywhere, yet the periodic flush (200 ms) had already written the
 * stuck calls' ENTER records, so the hang is named all the same. */
static void test_hang_survives_sigkill(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    tb_result r;
    /* No watchdog: the dump shows the call in flight for 1 s (the
     * analyzer's least for a hang) only once a periodic metadata write
     * (every 200 ms) comes after that second; 4 s leaves a loaded, ASan
     * machine's writer 3 s to make one. */
    run_hang_job(f, SIGKILL, 4000, (const char *const[]){"TSCOPE_FLUSH_MS=200", NULL}, &r);
    tb_result_free(&r);
    char *json;
    cJSON *h = expect_step20_hang(f, &json);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(h, "watchdog")));
    cJSON_Delete(h);
    free(json);
}

/* A hang below the collective: from a collective after step 0 on, rank
 * 2's proxy posts its step to rank 3 on channel 1 of the test NCCL's ring
 * and that step never completes (FAKENCCL_PROXY_STUCK), so the collective
 * hangs on every rank; the NCCL profiler plugin in full capture.  4.5 s
 * after step 0 (the stall threshold is 1 s, drains every 200 ms) the
 * harness SIGTERMs the job.  In black-box mode the watchdog (2 s) writes
 * a capture-hang-* window first.  Either way the hang report names the
 * link that stopped: rank 2 -> rank 3 on channel 1, the sender's step
 * posted and its receiver waiting for it. */
static void run_proxy_stuck_job(fx *f, int blackbox, tb_result *r)
{
    char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "0:%s", f->mark);
    const char *args[] = {"--steps", "100000", "--compute-us", "500", "--no-extras",
                          "--buckets", "64K", "--mark-after", mark_arg, NULL};
    /* TSCOPE_BB_K=1000: no anomaly window from a busy machine's hiccups
     * (the hang's window must be the one taken) */
    const char *env[] = {"TSCOPE_NCCL_PROFILER=full", "FAKENCCL_NET_STEP_US=200",
                         "FAKENCCL_CHANNELS=2", "FAKENCCL_PROXY_STUCK=2:3:1:4",
                         "TSCOPE_FLUSH_MS=200", "TSCOPE_HANG_S=2", "TSCOPE_BB_K=1000",
                         blackbox ? "TSCOPE_MODE=blackbox" : NULL, NULL};
    run_marked_job(f, args, SIGTERM, 4500, env, r);
}

static void expect_stopped_link(const char *dir)
{
    int st;
    char *json = report_hang(dir, 1, &st);
    cJSON *h = expect_findings(json, "DIST.HANG", 1);
    char *links = cJSON_PrintUnformatted(cJSON_GetObjectItem(h, "stopped_links"));
    if (!links || strcmp(links, "[{\"src_rank\":2,\"dst_rank\":3,\"channel\":1,\"step\":0,"
                                "\"sender_posted\":true,\"receiver_waits\":true}]"))
        fail_msg("stopped_links %s, want rank 2 -> 3 on channel 1:\n%s", links, json);
    free(links);
    cJSON_Delete(h);
    free(json);
    char *text = report_hang(dir, 0, &st);
    if (!strstr(text, "proxy steps stopped on link rank 2 -> rank 3, channel 1") ||
        !strstr(text, "its send to rank 3 on channel 1 posted step 0 and never completed"))
        fail_msg("the hang view does not name the link:\n%s", text);
    free(text);
}

static void test_proxy_stuck_names_link(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    tb_result r;
    run_proxy_stuck_job(f, 0, &r);
    tb_result_free(&r);
    expect_stopped_link(f->out);
}

static void test_proxy_stuck_names_link_blackbox(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    tb_result r;
    run_proxy_stuck_job(f, 1, &r);
    tb_result_free(&r);
    DIR *d = opendir(f->out);
    assert_non_null(d);
    struct dirent *e;
    char win[4600] = "";
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "capture-hang-", 13))
            snprintf(win, sizeof win, "%s/%s", f->out, e->d_name);
    closedir(d);
    if (!*win)
        fail_msg("no capture-hang-* window in %s", f->out);
    expect_stopped_link(win);
}

/* Rank 2 calls AllGather where the others call AllReduce at step 5: the
 * test NCCL fails that collective on every rank (no deadlock), they exit. */
static void test_wrong_collective_is_a_desync(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    const char *args[] = {"--steps", "8", "--compute-us", "300", "--desync-at", "2:5", NULL};
    run_failing_job(f, args, "desync");
    int st;
    char *json = report_hang(f->out, 1, &st);
    assert_int_equal(st, 1);
    cJSON *x = expect_findings(json, "DIST.DESYNC", 1);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(x, "seq")),
                     first_allreduce_seq(5));
    expect_ranks(x, "ranks", "[0,1,2,3]");
    /* Two lines: ranks 0,1,3 called AllReduce, rank 2 AllGather. */
    const cJSON *groups = cJSON_GetObjectItem(x, "groups");
    assert_int_equal(cJSON_GetArraySize(groups), 2);
    char g0[64], g1[64];
    ranks_text(cJSON_GetObjectItem(cJSON_GetArrayItem(groups, 0), "ranks"), g0, sizeof g0);
    ranks_text(cJSON_GetObjectItem(cJSON_GetArrayItem(groups, 1), "ranks"), g1, sizeof g1);
    assert_string_equal(g0, "[0,1,3]");
    assert_string_equal(g1, "[2]");
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(
                               cJSON_GetArrayItem(groups, 1), "what")), "AllGather"));
    cJSON_Delete(x);
    /* Everyone failed together: nobody went on, and nothing hung. */
    expect_findings(json, "RANK.EXITED_EARLY", 0);
    expect_findings(json, "DIST.HANG", 0);
    free(json);
}

/* Rank 1 (100 ms slower to compute) calls exit(3) in step 10, after the
 * others entered its first AllReduce; the launcher stops them. */
static void test_rank_exit_is_exited_early_with_code(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    const char *args[] = {"--steps", "100000", "--compute-us", "500", "--fail-at", "1:10:3",
                          "--slow-ranks", "1", "--slow-ms", "100", NULL};
    run_failing_job(f, args, "exit early");
    int st;
    char *json = report_hang(f->out, 1, &st);
    assert_int_equal(st, 1);
    cJSON *x = expect_findings(json, "RANK.EXITED_EARLY", 1);
    expect_ranks(x, "ranks", "[1]");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(x, "exit_code")), 3);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(x, "signal")));
    /* Its last call: step 9's Recv (the last of the step on the world). */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(x, "op")), "Recv");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(x, "seq")),
                     first_allreduce_seq(10) - 1);
    cJSON_Delete(x);
    free(json);
}

/* Rank 2 never creates its communicator: ranks 0, 1, 3 block inside
 * ncclCommInitRank (the test NCCL, like NCCL, returns only when every
 * member joined), each writes its watchdog marker, and the harness
 * SIGTERMs the job.  DIST.HANG names the creation: stuck [0,1,3], rank 2
 * never came (no dump: it never called NCCL); no collective hang, desync
 * or early exit is claimed. */
static void test_rank_never_joins_init(void **state)
{
    fx *f = *state;
    if (!f)
        skip();
    char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "0:%s", f->mark);
    const char *args[] = {"--steps", "5", "--compute-us", "500", "--stop-at", "2:init",
                          "--mark-after", mark_arg, NULL};
    tb_signal_plan plan = {.mark = f->mark, .nranks = 4, .sig = SIGTERM, .delay_ms = 2500};
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .env = (const char *const[]){"TSCOPE_HANG_S=1", "TSCOPE_FLUSH_MS=200", NULL},
                  .hook = tb_signal_when_marked, .hook_arg = &plan, .timeout_s = 40};
    tb_result r;
    assert_int_equal(tb_run_job(&job, &r), 0);
    assert_true(plan.seen);
    if (r.timed_out || !WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGTERM) {
        show("init hang", &r);
        fail_msg("the job should end by the harness's SIGTERM");
    }
    int lines = 0;
    for (const char *p = r.err; (p = strstr(p, "tscope: rank ")); p++) {
        const char *eol = strchr(p, '\n');
        const char *name = strstr(p, "ncclCommInitRank on comm ");
        lines += eol && name && name < eol;
    }
    if (lines != 3) {
        show("init hang", &r);
        fail_msg("%d watchdog lines naming ncclCommInitRank, want 3", lines);
    }
    tb_result_free(&r);

    int st;
    char *json = report_hang(f->out, 1, &st);
    assert_int_equal(st, 1);
    cJSON *h = expect_findings(json, "DIST.HANG", 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(h, "op")), "CommInitRank");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(h, "seq")), 0);
    expect_ranks(h, "stuck_ranks", "[0,1,3]");
    /* Rank 2 never called NCCL, so it wrote no dump: "no data", named. */
    expect_ranks(h, "missing_ranks", "[]");
    expect_ranks(h, "no_data_ranks", "[2]");
    expect_ranks(h, "exited_ranks", "[]");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(h, "watchdog")));
    const char *title = cJSON_GetStringValue(cJSON_GetObjectItem(h, "title"));
    if (!strstr(title, "was never created") || !strstr(title, "rank 2 (no dump) never entered"))
        fail_msg("title: %s", title);
    cJSON_Delete(h);
    expect_findings(json, "DIST.DESYNC", 0);
    expect_findings(json, "RANK.EXITED_EARLY", 0);
    free(json);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rank_stops_others_hang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_survives_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_collective_is_a_desync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_exit_is_exited_early_with_code, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rank_never_joins_init, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proxy_stuck_names_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proxy_stuck_names_link_blackbox, setup, teardown),
    };
    if (!tb_e2e_available())
        return 77;
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
