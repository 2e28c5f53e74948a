/* End-to-end: black-box mode (TSCOPE_MODE=blackbox) on the test bed: real
 * 4-rank jobs under the preload, the test NCCL blocking ranks on each
 * other; read back with `tscope-report blackbox`, `dump --json` and the
 * report's JSON.  Run one case with: test_e2e_blackbox NAME */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "tb_assert.h"
#include "tb_harness.h"
#include "tb_job.h"

typedef tb_fixture fx;

#define setup tb_fixture_setup
#define teardown tb_fixture_teardown

/* Steps of ~6.5 ms: two AllReduce per step, not grouped (the first opens
 * the step), small enough that the compute dominates.  Long enough that a
 * busy 2-core machine's hiccups rarely last 4 steps in a row. */
#define STEP_ARGS "--compute-us", "6000", "--buckets", "16K,4K", "--grouped-buckets", "0", \
                  "--fsdp-bytes", "0", "--ring-bytes", "0", "--no-extras"

/* Anomaly rule for these tests: 4 steps in a row over 2x the median. */
static const char *const bb_env[] = {"TSCOPE_MODE=blackbox", "TSCOPE_FLUSH_MS=100",
                                     "TSCOPE_BB_K=2",        "TSCOPE_BB_RUN=4",
                                     "TSCOPE_BB_STEPS=256",  NULL};

/* Names of the capture-* folders of dir, sorted, newline-joined. */
static char *windows(const char *dir, int *n)
{
    char *out = calloc(1, 65536);
    *n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char names[64][256];
    while ((e = readdir(d)) && *n < 64)
        if (!strncmp(e->d_name, "capture-", 8))
            snprintf(names[(*n)++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)*n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < *n; i++)
        snprintf(out + strlen(out), 65536 - strlen(out), "%s\n", names[i]);
    return out;
}

/* One window folder: 4 dumps, each saying the same capture_steps (returned,
 * "A-B"), and the same NCCL sequence numbers from every rank (the same
 * steps, matched by NCCL, not clocks). */
static void expect_same_steps(const char *win_dir, char *steps, size_t cap)
{
    assert_int_equal(tb_count_dumps(win_dir), 4);
    int st;
    cJSON *lines = tb_dump_json(win_dir, &st);
    assert_non_null(lines);
    char per_rank[4][64] = {"", "", "", ""};
    long long lo[4], hi[4];
    for (int r = 0; r < 4; r++)
        lo[r] = -1, hi[r] = -1;
    cJSON *l;
    cJSON_ArrayForEach(l, lines)
    {
        int r = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "rank"));
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(l, "kind"));
        if (r < 0 || r > 3 || !kind)
            continue;
        const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(l, "key"));
        if (!strcmp(kind, "meta") && key && !strcmp(key, "capture_steps"))
            snprintf(per_rank[r], sizeof per_rank[r], "%s",
                     cJSON_GetStringValue(cJSON_GetObjectItem(l, "value")));
        const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(l, "op"));
        if (!strcmp(kind, "nccl") && op && !strcmp(op, "AllReduce")) {
            long long q = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "seq"));
            lo[r] = lo[r] < 0 || q < lo[r] ? q : lo[r];
            hi[r] = q > hi[r] ? q : hi[r];
        }
    }
    cJSON_Delete(lines);
    for (int r = 0; r < 4; r++) {
        if (strcmp(per_rank[r], per_rank[0]) || !per_rank[r][0])
            fail_msg("%s: rank %d has steps '%s', rank 0 '%s'", win_dir, r, per_rank[r],
                     per_rank[0]);
        if (lo[r] < 0 || lo[r] != lo[0] || hi[r] != hi[0])
            fail_msg("%s: rank %d has AllReduce seq %lld-%lld, rank 0 %lld-%lld", win_dir, r,
                     lo[r], hi[r], lo[0], hi[0]);
    }
    snprintf(steps, cap, "%s", per_rank[0]);
}

/* `tscope-report blackbox DIR [more]`: stdout, status checked to be 0. */
static char *bb_report(const char *dir, const char *more1, const char *more2)
{
    const char *argv[] = {tb_tool("REPORT"), "blackbox", dir, more1, more2, NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
        fail_msg("tscope-report blackbox %s: status 0x%x\n%.2000s", dir, r.status, r.err);
    char *out = strdup(r.out);
    tb_result_free(&r);
    return out;
}

/* Every rank summarized steps 0..n-1, at most 1 KiB per step on disk. */
static void expect_summaries(const char *dir, int n)
{
    char *out = bb_report(dir, NULL, NULL);
    char want[64];
    snprintf(want, sizeof want, "4 ranks, steps 0-%d summarized", n - 1);
    if (!strstr(out, want))
        fail_msg("want '%s' in:\n%.3000s", want, out);
    const char *p = strstr(out, "RANKS\n");
    assert_non_null(p);
    p = strchr(p + 6, '\n'); /* the heading line */
    for (int r = 0; r < 4; r++) {
        int rank, steps;
        double per_step;
        assert_int_equal(sscanf(p + 1, "%d %d %lf", &rank, &steps, &per_step), 3);
        assert_int_equal(steps, n);
        if (per_step > 1024)
            fail_msg("rank %d writes %.1f bytes per step (limit 1024)", rank, per_step);
        p = strchr(p + 1, '\n');
    }
    free(out);
}

/* Runs a 2,000-step job with these extra rank options, which must end
 * well with 2,000 summaries per rank; returns its capture-* names (*n). */
static char *run_2000_steps(fx *f, const char *const *extra, int *n)
{
    const char *args[32] = {"--steps", "2000", STEP_ARGS};
    size_t k = 0;
    while (args[k])
        k++;
    for (; extra && *extra && k < 31; extra++)
        args[k++] = *extra;
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .env = bb_env, .timeout_s = 120};
    tb_run_job_ok(&job);
    expect_summaries(f->out, 2000);
    return windows(f->out, n);
}

/* 4 ranks, 2000 steps; rank 2 computes 3x as long in steps 1000-1007.
 * One window, the same steps on every rank, covering step 1000, and the
 * report of it flags rank 2 (and only rank 2) as the slow one. */
static void test_transient_slowdown_one_window(void **state)
{
    fx *f = *state;
    const char *slowdown[] = {"--slow-ranks", "2", "--slow-factor", "3", "--slow-steps",
                              "1000-1007", NULL};
    int n;
    char *names = run_2000_steps(f, slowdown, &n);
    if (n != 1)
        fail_msg("want one capture window, got %d:\n%s", n, names);
    char win[4400], steps[64];
    snprintf(win, sizeof win, "%s/%.*s", f->out, (int)strcspn(names, "\n"), names);
    expect_same_steps(win, steps, sizeof steps);
    unsigned a, b;
    assert_int_equal(sscanf(steps, "%u-%u", &a, &b), 2);
    if (!(a <= 1000 && b >= 1003))
        fail_msg("window steps %s do not cover the slow steps 1000-1003", steps);

    /* The full report of the window names rank 2. */
    const char *id = strchr(names, '-') + 1;
    char idbuf[256];
    snprintf(idbuf, sizeof idbuf, "%.*s", (int)strcspn(id, "\n"), id);
    char *json = bb_report(f->out, "--capture", idbuf);
    free(json);
    const char *argv[] = {tb_tool("REPORT"), "blackbox", f->out, "--capture", idbuf, "--json",
                          NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    cJSON *root = cJSON_Parse(r.out);
    if (!root)
        fail_msg("no JSON from the window's report:\n%.2000s", r.err);
    int slow = -1, nslow = 0;
    cJSON *rk;
    cJSON_ArrayForEach(rk, cJSON_GetObjectItem(root, "ranks_blame"))
        if (cJSON_IsTrue(cJSON_GetObjectItem(rk, "slow"))) {
            slow = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(rk, "rank"));
            nslow++;
        }
    if (nslow != 1 || slow != 2)
        fail_msg("want rank 2 alone flagged slow, got %d ranks (last %d):\n%.3000s", nslow, slow,
                 r.out);
    cJSON_Delete(root);
    tb_result_free(&r);
    free(names);
}

/* The same job without the slowdown: summaries only, no window. */
static void test_balanced_job_summaries_only(void **state)
{
    fx *f = *state;
    int n;
    char *names = run_2000_steps(f, NULL, &n);
    if (n != 0)
        fail_msg("a balanced job wrote %d capture windows:\n%s", n, names);
    free(names);
    char *out = bb_report(f->out, NULL, NULL);
    assert_non_null(strstr(out, "none: summaries only"));
    free(out);
}

/* Trigger files dropped into the job's folder by a hook while it runs. */
typedef struct ctl_plan {
    tb_signal_plan marks;  /* waits for every rank's mark */
    const char *out;
    int done;
} ctl_plan;

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int drop_triggers(int pid, void *arg)
{
    (void)pid;
    ctl_plan *p = arg;
    if (p->done)
        return 1;
    if (!p->marks.seen) {
        tb_signal_plan probe = p->marks;
        probe.sig = 0;
        probe.delay_ms = 0;
        if (!tb_signal_when_marked(-1, &probe))
            return 0;
        p->marks.seen = 1;
    }
    /* Every rank is past step 300: ask for the next 3 steps (soon), steps
     * 600-609 (ahead) and 700-701 (late), steps 0-4 (long gone:
     * TSCOPE_BB_STEPS=256), a window whose folder cannot be created (a file
     * is in the way), and a malformed trigger.  Through sh: the build
     * tree's tscope-ctl is not executable (install sets the mode). */
    const char *ctl[][9] = {
        {"/bin/sh", tb_tool("CTL"), "capture", "--next", "3", "--name", "soon", p->out, NULL},
        {"/bin/sh", tb_tool("CTL"), "capture", "--steps", "600-609", "--name", "ahead", p->out,
         NULL},
        {"/bin/sh", tb_tool("CTL"), "capture", "--steps", "700-701", "--name", "late", p->out,
         NULL}};
    for (int i = 0; i < 3; i++) {
        tb_result r;
        assert_int_equal(tb_run(ctl[i], NULL, 30, &r), 0);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status))
            fail_msg("tscope-ctl: %s", r.err);
        tb_result_free(&r);
    }
    char trig[4300];
    snprintf(trig, sizeof trig, "%s/triggers", p->out);
    put_file(p->out, "capture-blocked", "a file where a window folder would go\n");
    put_file(trig, "gone", "steps=0-4\nreason=ctl\n");
    put_file(trig, "blocked", "steps=650-651\nreason=ctl\n");
    put_file(trig, "garbage", "steps=9-x\n");
    p->done = 1;
    return 1;
}

/* Each rank's Prometheus textfile passes `promtool check metrics` (when
 * Debian's prometheus package is installed) and counts `steps` steps. */
static void expect_metrics(const char *out, int steps)
{
    for (int r = 0; r < 4; r++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/metrics/tscope_r%d.prom", out, r);
        char *text = tb_read_file(path);
        if (!text)
            fail_msg("no metrics file %s", path);
        const char *c = strstr(text, "tscope_step_duration_seconds_count{");
        const char *v = c ? strstr(c, "} ") : NULL;
        if (!v || atoi(v + 2) != steps)
            fail_msg("%s: want %d steps counted:\n%.1500s", path, steps, text);
        free(text);
        if (access("/usr/bin/promtool", X_OK) == 0) {
            char cmd[4600];
            snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < '%s' >/dev/null", path);
            if (system(cmd) != 0)
                fail_msg("promtool check metrics fails on %s", path);
        }
    }
}

/* tscope-ctl capture mid-run gives the requested steps on every rank
 * (--next K: K steps fixed by the first rank to read it); bad requests
 * each give one clear line and the job runs on to exit 0; with
 * TSCOPE_BB_KEEP_WINDOWS=2 the oldest of three windows goes, said once. */
static void test_ctl_capture_mid_run(void **state)
{
    fx *f = *state;
    char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "300:%s", f->mark);
    const char *args[] = {"--steps", "1200", STEP_ARGS, "--mark-after", mark_arg, NULL};
    ctl_plan plan = {.marks = {.mark = f->mark, .nranks = 4}, .out = f->out};
    const char *env[8] = {"TSCOPE_BB_KEEP_WINDOWS=2"};
    for (int i = 0; bb_env[i]; i++)
        env[i + 1] = bb_env[i];
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .env = env, .hook = drop_triggers, .hook_arg = &plan, .timeout_s = 120};
    tb_result r;
    assert_int_equal(tb_run_job(&job, &r), 0);
    assert_true(plan.done);
    if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status))
        fail_msg("job failed: status 0x%x\n%.3000s", r.status, r.err);
    char win[4400], steps[64];
    snprintf(win, sizeof win, "%s/capture-ahead", f->out);
    expect_same_steps(win, steps, sizeof steps);
    assert_string_equal(steps, "600-609");
    snprintf(win, sizeof win, "%s/capture-late", f->out);
    expect_same_steps(win, steps, sizeof steps);
    assert_string_equal(steps, "700-701");
    /* --next 3: steps A-(A+2) after step 300, fixed in soon.steps; that
     * window was the oldest of three: gone, with one line */
    char path[4400];
    snprintf(path, sizeof path, "%s/triggers/soon.steps", f->out);
    char *fixed = tb_read_file(path);
    unsigned a = 0, b = 0;
    if (!fixed || sscanf(fixed, "steps=%u-%u", &a, &b) != 2 || a <= 300 || b != a + 2)
        fail_msg("soon.steps: %s", fixed ? fixed : "(missing)");
    free(fixed);
    snprintf(path, sizeof path, "%s/capture-soon", f->out);
    if (access(path, F_OK) == 0)
        fail_msg("the oldest window %s is still there (TSCOPE_BB_KEEP_WINDOWS=2)", path);
    const char *drop = strstr(r.err, "retention: dropped the oldest capture window");
    if (!drop || !strstr(drop, "capture-soon") ||
        strstr(drop + 1, "retention: dropped the oldest capture window"))
        fail_msg("want one retention line naming capture-soon:\n%.3000s", r.err);
    /* One line each (rank 0 speaks for the job where all ranks agree). */
    const char *want[] = {"capture window gone: steps 0-4 are no longer",
                          "capture window blocked: cannot create a file in",
                          "trigger ", "garbage: steps must be A-B"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(r.err, want[i]))
            fail_msg("no '%s' on stderr:\n%.3000s", want[i], r.err);
    const char *g = strstr(r.err, "garbage: steps must be A-B");
    assert_null(strstr(g + 1, "garbage: steps must be A-B")); /* said once, not per rank */
    expect_summaries(f->out, 1200);
    expect_metrics(f->out, 1200);
    tb_result_free(&r);
}

/* Rank 1 stops calling NCCL at step 300, the others block in that step's
 * first AllReduce; TSCOPE_HANG_S=1 fires on ranks 0, 2, 3.  Every rank's
 * window (rank 1's too: its writer reads the trigger) is on disk before
 * the harness ends the job, and `tscope-report hang` on the window names
 * the stuck collective and rank 1 missing. */
static void test_hang_writes_every_rank_window(void **state)
{
    fx *f = *state;
    char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "300:%s", f->mark);
    const char *args[] = {"--steps", "100000", STEP_ARGS, "--stop-at", "1:300", "--mark-after",
                          mark_arg, NULL};
    /* TSCOPE_BB_K=1000: no anomaly window from a busy machine's hiccups */
    const char *env[] = {"TSCOPE_MODE=blackbox", "TSCOPE_FLUSH_MS=100", "TSCOPE_HANG_S=1",
                         "TSCOPE_BB_K=1000", NULL};
    /* Watchdog after 1 s, then two flush periods: 2.5 s is ample. */
    tb_signal_plan plan = {.mark = f->mark, .nranks = 4, .sig = SIGTERM, .delay_ms = 2500};
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .env = env, .hook = tb_signal_when_marked, .hook_arg = &plan, .timeout_s = 60};
    tb_result r;
    assert_int_equal(tb_run_job(&job, &r), 0);
    assert_true(plan.seen);
    int n;
    char *names = windows(f->out, &n);
    if (n != 1 || strncmp(names, "capture-hang-", 13))
        fail_msg("want one capture-hang-* window, got %d:\n%s\nstderr:\n%.3000s", n, names,
                 r.err);
    char win[4400];
    snprintf(win, sizeof win, "%s/%.*s", f->out, (int)strcspn(names, "\n"), names);
    assert_int_equal(tb_count_dumps(win), 4);
    const char *argv[] = {tb_tool("REPORT"), "hang", "--json", win, NULL};
    tb_result h;
    assert_int_equal(tb_run(argv, NULL, 60, &h), 0);
    cJSON *root = cJSON_Parse(h.out);
    assert_non_null(root);
    cJSON *fd, *hang = NULL;
    cJSON_ArrayForEach(fd, cJSON_GetObjectItem(root, "findings"))
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(fd, "id")), "DIST.HANG"))
            hang = fd;
    if (!hang)
        fail_msg("no DIST.HANG in the window's hang report:\n%.3000s", h.out);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(hang, "op")), "AllReduce");
    char *missing = cJSON_PrintUnformatted(cJSON_GetObjectItem(hang, "missing_ranks"));
    assert_string_equal(missing, "[1]");
    free(missing);
    cJSON_Delete(root);
    tb_result_free(&h);
    tb_result_free(&r);
    free(names);
}

/* GET /metrics from 127.0.0.1:port: the body, or NULL. */
static char *http_get_metrics(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
    if (write(fd, req, sizeof req - 1) < 0) {
        close(fd);
        return NULL;
    }
    char *buf = calloc(1, 1 << 17);
    size_t n = 0;
    ssize_t r;
    while (n < (1 << 17) - 1 && (r = read(fd, buf + n, (1 << 17) - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    return buf;
}

typedef struct usr2_plan {
    tb_signal_plan marks;
    int port;          /* TSCOPE_METRICS_PORT: rank 0's is taken, rank 1 serves port+1 */
    char *scraped;     /* what rank 1 served */
} usr2_plan;

/* A hook: once every rank is marked, scrape rank 1's /metrics, then
 * SIGUSR2 to one rank process (a child of the launcher named
 * tsc-testbed-ran), not to the launcher. */
static int usr2_one_rank(int pid, void *arg)
{
    usr2_plan *up = arg;
    tb_signal_plan *p = &up->marks;
    tb_signal_plan probe = *p;
    probe.delay_ms = 0;
    probe.sig = 0;
    if (!tb_signal_when_marked(-1, &probe))
        return 0;
    p->seen = 1;
    up->scraped = http_get_metrics(up->port + 1);
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *fp = fopen(path, "r");
        if (!fp)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
        buf[n] = 0;
        int ppid = 0;
        const char *close_paren = strrchr(buf, ')');
        if (close_paren && sscanf(close_paren + 2, "%*c %d", &ppid) == 1 && ppid == pid &&
            strstr(buf, "(tsc-testbed-ran)")) {
            kill(atoi(e->d_name), SIGUSR2);
            break;
        }
    }
    if (d)
        closedir(d);
    return 1;
}

/* SIGUSR2 to one rank: every rank writes the same steps; the rank's own
 * SIGUSR2 handler still runs, once; the signal's default action (end the
 * process) is not taken. */
static void test_sigusr2_window_and_app_handler(void **state)
{
    fx *f = *state;
    char mark_arg[4300];
    snprintf(mark_arg, sizeof mark_arg, "200:%s", f->mark);
    const char *args[] = {"--steps", "600", STEP_ARGS, "--mark-after", mark_arg,
                          "--usr2-count", NULL};
    /* A port that is taken (by this test) for rank 0's /metrics. */
    int taken = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    assert_true(taken >= 0 && bind(taken, (struct sockaddr *)&sa, sizeof sa) == 0 &&
                listen(taken, 1) == 0 && getsockname(taken, (struct sockaddr *)&sa, &sl) == 0);
    int port = ntohs(sa.sin_port);
    char port_env[64];
    snprintf(port_env, sizeof port_env, "TSCOPE_METRICS_PORT=%d", port);
    const char *env[] = {"TSCOPE_MODE=blackbox", "TSCOPE_FLUSH_MS=100", "TSCOPE_BB_K=1000",
                         port_env, NULL};
    usr2_plan plan = {.marks = {.mark = f->mark, .nranks = 4}, .port = port};
    tb_job job = {.nranks = 4, .out_dir = f->out, .with_preload = 1, .rank_args = args,
                  .env = env, .hook = usr2_one_rank, .hook_arg = &plan, .timeout_s = 60};
    tb_result r;
    assert_int_equal(tb_run_job(&job, &r), 0);
    close(taken);
    assert_true(plan.marks.seen);
    /* the port in use: one line, the job went on; rank 1 served its metrics */
    if (!strstr(r.err, "cannot serve /metrics on 127.0.0.1:"))
        fail_msg("no line about the port in use:\n%.3000s", r.err);
    if (!plan.scraped || !strstr(plan.scraped, "200 OK") ||
        !strstr(plan.scraped, "tscope_step_duration_seconds_count{") ||
        !strstr(plan.scraped, "rank=\"1\""))
        fail_msg("rank 1's /metrics:\n%.2000s", plan.scraped ? plan.scraped : "(none)");
    free(plan.scraped);
    if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status))
        fail_msg("job failed: status 0x%x\n%.3000s", r.status, r.err);
    int got = 0;
    for (const char *p = r.out; (p = strstr(p, " got ")); p++)
        got += atoi(p + 5);
    if (got != 1)
        fail_msg("the application's handler ran %d times, want 1:\n%s", got, r.out);
    int n;
    char *names = windows(f->out, &n);
    if (n != 1 || strncmp(names, "capture-signal-", 15))
        fail_msg("want one capture-signal-* window, got %d:\n%s", n, names);
    char win[4400], steps[64];
    snprintf(win, sizeof win, "%s/%.*s", f->out, (int)strcspn(names, "\n"), names);
    expect_same_steps(win, steps, sizeof steps);
    tb_result_free(&r);
    free(names);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_transient_slowdown_one_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_balanced_job_summaries_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctl_capture_mid_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_writes_every_rank_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigusr2_window_and_app_handler, setup, teardown),
    };
    if (!tb_e2e_available())
        return 77;
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
