/* Bounds on hostile Kineto traces (issue 13 item 6) and the bare-array
 * form (item 12).  The hostile inputs are made here, at run time, as small
 * gzip files that expand to many MB. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "load/job_build.h"
#include "load/job_load.h"
#include "load/kineto_load.h"
#include "test_util.h"

static const char event[] =
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,"
    "\"ts\":%d,\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}";

/* A gzip trace: `before` ordinary events, then (when filler > 0) one event
 * whose name is `filler` bytes of 'a', then `after` events. */
static char *write_trace(const char *dir, const char *name, int before, size_t filler,
                         int after)
{
    char *path;
    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    gzFile gz = gzopen(path, "wb1");
    assert_non_null(gz);
    gzputs(gz, "{\"traceEvents\":[");
    int k = 0;
    for (; k < before; k++) {
        gzputs(gz, k ? "," : "");
        gzprintf(gz, event, 10 * k, k);
    }
    if (filler) {
        gzputs(gz, k ? ",{\"ph\":\"X\",\"name\":\"" : "{\"ph\":\"X\",\"name\":\"");
        static char block[1 << 16];
        memset(block, 'a', sizeof block);
        for (size_t done = 0; done < filler; done += sizeof block)
            gzwrite(gz, block, (unsigned)(filler - done < sizeof block ? filler - done
                                                                        : sizeof block));
        gzputs(gz, "\",\"ts\":1,\"dur\":1}");
        k++;
    }
    for (int i = 0; i < after; i++, k++) {
        gzputs(gz, k ? "," : "");
        gzprintf(gz, event, 10 * k, k);
    }
    gzputs(gz, "]}");
    gzclose(gz);
    return path;
}

/* A 40 MiB name (the old parser's cost grew with its square) stops at the
 * default token bound with a clear message; the events before it stay. */
static void test_long_token_is_bounded(void **state)
{
    (void)state;
    tsa_kineto_set_limits(NULL);
    char *dir = tu_tempdir("klim-token");
    char *path = write_trace(dir, "big.json.gz", 3, 40u << 20, 3);
    tsa_rank r;
    char err[512] = "";
    clock_t t0 = clock();
    assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), -1);
    double cpu_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    assert_non_null(strstr(err, "a JSON token longer than 16777216 bytes at byte"));
    assert_non_null(strstr(err, "TSCOPE_KINETO_MAX_TOKEN"));
    assert_int_equal(r.n_kernels, 3);
    assert_true(cpu_s < 5);   /* generous: about 0.1 s here */
    tsa_rank_free_contents(&r);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* A bomb of events and one of bytes, under bounds set by the environment
 * (what a user would do) and by the API. */
static void test_event_and_byte_bounds(void **state)
{
    (void)state;
    char *dir = tu_tempdir("klim-bomb");
    char *path = write_trace(dir, "bomb.json.gz", 50000, 0, 0);
    setenv("TSCOPE_KINETO_MAX_EVENTS", "1000", 1);
    tsa_kineto_set_limits(NULL);
    tsa_kineto_limits lim;
    tsa_kineto_get_limits(&lim);
    assert_int_equal(lim.max_events, 1000);
    assert_int_equal(lim.max_bytes, TSA_KINETO_DEFAULT_MAX_BYTES);
    tsa_rank r;
    tsa_kineto_stats st;
    char err[512] = "";
    assert_int_equal(tsa_kineto_load_file(path, &r, &st, err, sizeof err), -1);
    unsetenv("TSCOPE_KINETO_MAX_EVENTS");
    assert_non_null(strstr(err, "more than 1000 trace events at byte"));
    assert_int_equal(st.events, 1000);
    assert_int_equal(r.n_kernels, 1000);
    tsa_rank_free_contents(&r);

    lim = (tsa_kineto_limits){.max_bytes = 100000, .max_events = 0, .max_token = 0};
    tsa_kineto_set_limits(&lim);
    assert_int_equal(tsa_kineto_load_file(path, &r, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than 100000 bytes of JSON at byte 100000"));
    assert_true(r.n_kernels > 500 && r.n_kernels < 1000);
    tsa_rank_free_contents(&r);

    /* as a job: loaded up to the bound, the file's problem listed */
    tsa_job *job;
    assert_int_equal(tsa_kineto_load_ex(dir, &job, err, sizeof err), 1);
    assert_int_equal(job->n_problems, 1);
    assert_non_null(strstr(job->problems[0].message, "TSCOPE_KINETO_MAX_BYTES"));
    tsa_job_free(job);
    tsa_kineto_set_limits(NULL);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* docs/views.md: the top level may be a bare array of events. */
static void test_bare_event_array(void **state)
{
    (void)state;
    char *dir = tu_tempdir("klim-bare");
    char text[1024];
    int n = snprintf(text, sizeof text, " \n[ ");
    for (int k = 0; k < 2; k++) {
        n += snprintf(text + n, sizeof text - (size_t)n, k ? "," : "");
        n += snprintf(text + n, sizeof text - (size_t)n, event, 10 * k, k);
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "]\n");
    char *path;
    assert_true(asprintf(&path, "%s/host_1.pt.trace.json", dir) > 0);
    assert_int_equal(tu_write_file(path, text, (size_t)n), 0);
    assert_int_equal(tsa_kineto_dir(dir), 1);
    tsa_job *job;
    char err[512] = "";
    assert_int_equal(tsa_kineto_load_ex(dir, &job, err, sizeof err), 0);
    assert_int_equal(job->n_ranks, 1);
    assert_int_equal(job->ranks[0].n_kernels, 2);
    tsa_job_free(job);
    /* an array of other things is still not a trace */
    assert_int_equal(tu_write_file(path, "[1, 2, 3]", 9), 0);
    assert_int_equal(tsa_kineto_dir(dir), 0);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bare_event_array),
        cmocka_unit_test(test_event_and_byte_bounds),
        cmocka_unit_test(test_long_token_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
