/* The launcher on its own: torchrun's environment for every rank, a run id
 * unique per launch, failure and signal propagation, cleanup of the
 * rendezvous directory.  Uses /usr/bin/env and sh as the "ranks". */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tb_harness.h"

static int count(const char *text, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += len)
        if ((p == text || p[-1] == '\n') && (p[len] == '\n' || p[len] == 0))
            n++;
    return n;
}

/* The value of KEY= on the first line that has it; caller frees. */
static char *value_of(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\n%s=", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    return strndup(p, strcspn(p, "\n"));
}

static void launch(const char *const *argv, tb_result *r)
{
    assert_int_equal(tb_run(argv, (const char *const[]){"TORCHELASTIC_RUN_ID", NULL}, 30, r), 0);
    assert_false(r->timed_out);
}

static void test_every_rank_gets_torchrun_environment(void **state)
{
    (void)state;
    const char *argv[] = {tb_tool("LAUNCH"), "-n", "3", "--", "/usr/bin/env", NULL};
    tb_result r;
    launch(argv, &r);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    char *text = malloc(strlen(r.out) + 2);
    sprintf(text, "\n%s", r.out);
    for (int i = 0; i < 3; i++) {
        char line[64];
        snprintf(line, sizeof line, "RANK=%d", i);
        assert_int_equal(count(text, line), 1);
        snprintf(line, sizeof line, "LOCAL_RANK=%d", i);
        assert_int_equal(count(text, line), 1);
    }
    assert_int_equal(count(text, "WORLD_SIZE=3"), 3);
    assert_int_equal(count(text, "LOCAL_WORLD_SIZE=3"), 3);
    assert_int_equal(count(text, "GROUP_RANK=0"), 3);
    assert_int_equal(count(text, "MASTER_ADDR=127.0.0.1"), 3);
    char *run = value_of(text, "TORCHELASTIC_RUN_ID");
    assert_non_null(run);
    char line[256];
    snprintf(line, sizeof line, "TORCHELASTIC_RUN_ID=%s", run);
    assert_int_equal(count(text, line), 3);
    /* The rendezvous directory is the launcher's and goes away with it. */
    char *rdzv = value_of(text, "TSC_TESTBED_RDZV");
    assert_non_null(rdzv);
    assert_int_not_equal(access(rdzv, F_OK), 0);
    free(rdzv);
    tb_result_free(&r);

    /* A second launch gets another run id. */
    launch(argv, &r);
    sprintf(text = realloc(text, strlen(r.out) + 2), "\n%s", r.out);
    char *run2 = value_of(text, "TORCHELASTIC_RUN_ID");
    assert_non_null(run2);
    assert_string_not_equal(run, run2);
    free(run);
    free(run2);
    free(text);
    tb_result_free(&r);
}

/* --env R:VAR=VALUE reaches rank R only; a malformed one is refused. */
static void test_env_for_one_rank(void **state)
{
    (void)state;
    const char *argv[] = {tb_tool("LAUNCH"), "-n", "3", "--env", "1:TB_ONLY=one", "--env",
                          "2:TB_ONLY=two", "--", "/bin/sh", "-c",
                          "echo r$RANK=${TB_ONLY:-none}", NULL};
    tb_result r;
    launch(argv, &r);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(count(r.out, "r0=none"), 1);
    assert_int_equal(count(r.out, "r1=one"), 1);
    assert_int_equal(count(r.out, "r2=two"), 1);
    tb_result_free(&r);
    const char *bad[] = {tb_tool("LAUNCH"), "-n", "2", "--env", "1:NOEQUALS", "--", "/bin/true",
                         NULL};
    launch(bad, &r);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
    tb_result_free(&r);
}

static void test_given_run_id_is_kept(void **state)
{
    (void)state;
    const char *argv[] = {tb_tool("LAUNCH"), "-n", "2", "--run-id", "job42", "--",
                          "/bin/sh", "-c", "echo id=$TORCHELASTIC_RUN_ID", NULL};
    tb_result r;
    launch(argv, &r);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(count(r.out, "id=job42"), 2);
    tb_result_free(&r);
}

/* One rank failing stops the others (which would otherwise run for 60 s). */
static void test_failing_rank_fails_the_job(void **state)
{
    (void)state;
    const char *argv[] = {tb_tool("LAUNCH"), "-n", "3", "--", "/bin/sh", "-c",
                          "if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60", NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tb_result r;
    launch(argv, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1);
    assert_non_null(strstr(r.err, "rank 1 ("));
    assert_non_null(strstr(r.err, "exited with 3"));
    assert_true(t1.tv_sec - t0.tv_sec < 10);
    tb_result_free(&r);
}

/* SIGINT once both ranks' shells have set their trap (each touches a file
 * in the folder after `trap`): a fixed delay could come before a slow
 * machine's shells are there. */
static int sigint_when_trapped(int pid, void *arg)
{
    const char *dir = arg;
    int ready = 0;
    for (int r = 0; r < 2; r++) {
        char path[256];
        snprintf(path, sizeof path, "%s/trapped.%d", dir, r);
        ready += access(path, F_OK) == 0;
    }
    if (ready < 2)
        return 0;
    kill(pid, SIGINT);
    return 1;
}

/* SIGINT to the launcher reaches every rank; the launcher then ends by the
 * same signal, as the job would without it. */
static void test_signal_is_forwarded_and_reraised(void **state)
{
    (void)state;
    char dir[] = "/tmp/tsc-launch-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char script[512];
    snprintf(script, sizeof script,
             "trap 'echo got INT; exit 0' INT; : >%s/trapped.$RANK; "
             "while :; do sleep 0.05; done",
             dir);
    const char *argv[] = {tb_tool("LAUNCH"), "-n", "2", "--", "/bin/sh", "-c", script, NULL};
    tb_result r;
    assert_int_equal(tb_run_with(argv, NULL, 30, sigint_when_trapped, dir, &r), 0);
    assert_false(r.timed_out);
    assert_int_equal(count(r.out, "got INT"), 2);
    assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGINT);
    tb_result_free(&r);
    for (int k = 0; k < 2; k++) {
        char path[256];
        snprintf(path, sizeof path, "%s/trapped.%d", dir, k);
        unlink(path);
    }
    rmdir(dir);
}

static void test_bad_usage(void **state)
{
    (void)state;
    const char *argv[] = {tb_tool("LAUNCH"), "-n", "0", "--", "/bin/true", NULL};
    tb_result r;
    launch(argv, &r);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
    tb_result_free(&r);
    const char *argv2[] = {tb_tool("LAUNCH"), "-n", "2", "--", "/nonexistent/program", NULL};
    launch(argv2, &r);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1);
    tb_result_free(&r);
}

int main(void)
{
    if (!tb_tool("LAUNCH")) {
        fprintf(stderr, "TB_LAUNCH not set\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_rank_gets_torchrun_environment),
        cmocka_unit_test(test_given_run_id_is_kept),
        cmocka_unit_test(test_env_for_one_rank),
        cmocka_unit_test(test_failing_rank_fails_the_job),
        cmocka_unit_test(test_signal_is_forwarded_and_reraised),
        cmocka_unit_test(test_bad_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
