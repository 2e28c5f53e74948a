/* Batch: rows, formats, the fleet view, isolation of bad jobs (broken
 * input, crash, hang) and the summary-file cache, on a tree of generated
 * torch.profiler jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch_jobs.h"
#include "cmds/commands.h"
#include "test_util.h"

static void write_job(const char *root, const char *name, const char *host, int straggler,
                      int delay_us)
{
    assert_int_equal(tb_write_job(root, name, host, straggler, delay_us), 0);
}

static cJSON *find_row(cJSON **rows, size_t n, const char *suffix)
{
    for (size_t i = 0; i < n; i++) {
        const char *job = cJSON_GetObjectItem(rows[i], "job")->valuestring;
        size_t a = strlen(job), b = strlen(suffix);
        if (a >= b && !strcmp(job + a - b, suffix))
            return rows[i];
    }
    fail_msg("no row for %s", suffix);
    return NULL;
}

/* ndjson output -> job rows (type "job") and fleet lines */
static size_t parse_lines(char *out, cJSON **rows, size_t cap, cJSON **fleet, size_t *n_fleet)
{
    size_t n = 0;
    *n_fleet = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        assert_non_null(j);
        const cJSON *type = cJSON_GetObjectItem(j, "type");
        assert_true(cJSON_IsString(type));
        if (strcmp(type->valuestring, "job"))
            fleet[(*n_fleet)++] = j;
        else {
            assert_true(n < cap);
            rows[n++] = j;
        }
    }
    return n;
}

static const char *str(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_batch_end_to_end(void **state)
{
    (void)state;
    char *root = tu_tempdir("batch");
    /* two jobs whose straggler sits on the same host "bad9", one clean job */
    write_job(root, "team1/jobA", "bad", 1, 200);
    write_job(root, "team1/jobB", "bad", 3, 200);
    write_job(root, "team2/clean", "good", -1, 0);
    /* a broken job: a dump that is not one */
    char path[600];
    snprintf(path, sizeof path, "%s/team2/broken", root);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/team2/broken/tscope_r0_x_1_1.tsd", root);
    assert_int_equal(tu_write_file(path, "this is not a dump", 18), 0);
    /* jobs whose analysis crashes or hangs (test hook) */
    write_job(root, "team3/crashme", "c", -1, 0);
    write_job(root, "team3/hangme", "h", -1, 0);
    snprintf(path, sizeof path, "%s/empty/deeper", root);
    mkdir(path, 0777);   /* parent missing: fine, nothing there */

    setenv("TSCOPE_BATCH_FAULT", "crash:crashme", 1);
    /* No job hangs in the first two runs: their timeout is far above what
     * a tiny job takes under ASan on a loaded machine; the third run's hang
     * is cut at 1 s. */
    char *argv[] = {"batch", root, "--ndjson", "-j", "2", "--timeout", "30", "-q", NULL};
    char *out;
    double t0 = (double)time(NULL);
    int rc = tu_capture(tsa_cmd_batch, 8, argv, &out);
    unsetenv("TSCOPE_BATCH_FAULT");
    assert_int_equal(rc, 1);   /* some jobs failed */
    (void)t0;
    cJSON *rows[16], *fleet[16];
    size_t n_fleet;
    size_t n = parse_lines(out, rows, 16, fleet, &n_fleet);
    assert_int_equal(n, 6);

    cJSON *a = find_row(rows, n, "/team1/jobA");
    assert_string_equal(str(a, "status"), "ok");
    assert_int_equal(cJSON_GetObjectItem(a, "ranks")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(a, "hosts")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(a, "straggler_rank")->valueint, 1);
    assert_string_equal(str(a, "straggler_host"), "bad9");
    /* the row says what the job's report says: its verdict and lead
     * finding, not only the largest budget line (the others' waiting) */
    assert_string_equal(str(a, "verdict"), "straggler-bound");
    assert_string_equal(str(a, "lead_finding"), "DIST.STRAGGLER");
    assert_true(cJSON_GetObjectItem(a, "lead_finding_s")->valuedouble > 0);
    assert_string_equal(str(a, "confidence"), "high");
    assert_float_equal(cJSON_GetObjectItem(a, "median_step_s")->valuedouble, 990e-6, 1e-12);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(a, "mfu")));   /* no FLOPs in the trace */
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(a, "exposed_comm_share")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(a, "data_stall_share"))); /* GPU records */
    assert_true(cJSON_GetObjectItem(a, "recoverable_gpu_hours")->valuedouble > 0);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(a, "cached")));
    cJSON *b = find_row(rows, n, "/team1/jobB");
    assert_int_equal(cJSON_GetObjectItem(b, "straggler_rank")->valueint, 3);
    cJSON *clean = find_row(rows, n, "/team2/clean");
    assert_string_equal(str(clean, "status"), "ok");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(clean, "straggler_rank")));
    cJSON *broken = find_row(rows, n, "/team2/broken");
    assert_string_equal(str(broken, "status"), "failed");
    assert_non_null(str(broken, "error"));
    assert_string_equal(str(find_row(rows, n, "/team3/crashme"), "status"), "crashed");
    assert_non_null(strstr(str(find_row(rows, n, "/team3/crashme"), "error"), "signal"));

    /* fleet: host bad9 was the straggler of jobA and jobB */
    int host_line = 0, ranked = 0;
    for (size_t i = 0; i < n_fleet; i++) {
        const char *type = str(fleet[i], "type");
        if (!strcmp(type, "fleet_host")) {
            assert_string_equal(str(fleet[i], "host"), "bad9");
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fleet[i], "jobs")), 2);
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fleet[i], "causes")), 2);
            assert_int_equal(cJSON_GetObjectItem(fleet[i], "job_count")->valueint, 2);
            host_line++;
        } else if (!strcmp(type, "fleet_job")) {
            ranked++;
            /* a list position 1, 2, ... in order, not an NCCL rank */
            assert_int_equal(cJSON_GetObjectItem(fleet[i], "position")->valueint, ranked);
            assert_null(cJSON_GetObjectItem(fleet[i], "rank"));
        }
    }
    assert_int_equal(host_line, 1);
    assert_true(ranked >= 3);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(rows[i]);
    for (size_t i = 0; i < n_fleet; i++)
        cJSON_Delete(fleet[i]);
    free(out);

    /* second run: everything that finished is cached (not the crash), so
     * the hang set on a cached job does not hit */
    setenv("TSCOPE_BATCH_FAULT", "hang:hangme", 1);
    rc = tu_capture(tsa_cmd_batch, 8, argv, &out);
    unsetenv("TSCOPE_BATCH_FAULT");
    assert_int_equal(rc, 1);
    n = parse_lines(out, rows, 16, fleet, &n_fleet);
    assert_int_equal(n, 6);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(find_row(rows, n, "/team1/jobA"), "cached")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(find_row(rows, n, "/team2/broken"), "cached")));
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(find_row(rows, n, "/team3/crashme"), "cached")));
    assert_string_equal(str(find_row(rows, n, "/team3/crashme"), "status"), "ok");
    /* hangme was analysed in run 1 and is cached: no hang this time */
    assert_string_equal(str(find_row(rows, n, "/team3/hangme"), "status"), "ok");
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(rows[i]);
    for (size_t i = 0; i < n_fleet; i++)
        cJSON_Delete(fleet[i]);
    free(out);

    /* a changed input invalidates the job's summary; the hang hits now */
    snprintf(path, sizeof path, "%s/team3/hangme/extra.json", root);
    assert_int_equal(tu_write_file(path, "{}", 2), 0);
    setenv("TSCOPE_BATCH_FAULT", "hang:hangme", 1);
    char *argv2[] = {"batch", root, "--ndjson", "-j", "2", "--timeout", "1", "-q", NULL};
    rc = tu_capture(tsa_cmd_batch, 8, argv2, &out);
    unsetenv("TSCOPE_BATCH_FAULT");
    n = parse_lines(out, rows, 16, fleet, &n_fleet);
    cJSON *hang = find_row(rows, n, "/team3/hangme");
    assert_string_equal(str(hang, "status"), "timeout");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(find_row(rows, n, "/team1/jobB"), "cached")));
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(rows[i]);
    for (size_t i = 0; i < n_fleet; i++)
        cJSON_Delete(fleet[i]);
    free(out);

    /* table and CSV from the cache */
    char *argv3[] = {"batch", root, "-q", NULL};
    tu_capture(tsa_cmd_batch, 3, argv3, &out);
    assert_non_null(strstr(out, "fleet: hosts named straggler or slow host in more than one job"));
    assert_non_null(strstr(out, "bad9: 2 jobs"));
    assert_non_null(strstr(out, "(cached)"));
    free(out);
    char *argv4[] = {"batch", root, "--csv", "-q", NULL};
    tu_capture(tsa_cmd_batch, 4, argv4, &out);
    static const char header[] =
        "job,run_id,status,ranks,hosts,steps,median_step_s,mfu,top_recoverable,"
        "top_recoverable_s,exposed_comm_share,data_stall_share,straggler_rank,straggler_host,"
        "recoverable_gpu_hours,problems,error,verdict,confidence,lead_finding,lead_finding_s,"
        "straggler_cause,slow_host,slow_host_cause\n";
    assert_true(!strncmp(out, header, sizeof header - 1));
    size_t lines = 0;
    for (char *p = out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 7);
    free(out);
    tu_rmtree(root);
    free(root);
}

static void test_csv_quoting_and_roundtrip(void **state)
{
    (void)state;
    tsa_batch_row r;
    tsa_batch_row_init(&r, "jobs/a,b \"x\"");
    tsa_batch_row_fail(&r, "failed", "line1\nline2");
    char *buf;
    size_t len;
    FILE *mem = open_memstream(&buf, &len);
    tsa_batch_print_csv(mem, &r, 1);
    fclose(mem);
    assert_non_null(strstr(buf, "\n\"jobs/a,b \"\"x\"\"\",,failed,"));
    /* no verdict, finding, cause or slow host: 7 empty cells */
    assert_non_null(strstr(buf, ",\"line1\nline2\",,,,,,,\n"));
    free(buf);
    /* JSON round trip keeps every column */
    r.ranks = 8;
    r.median_step_s = 0.25;
    r.straggler_rank = 5;
    r.straggler_host = strdup("n\"1");
    r.verdict = strdup("straggler-bound");
    r.lead_finding = strdup("DIST.STRAGGLER");
    r.lead_finding_s = 1.5;
    r.straggler_cause = strdup("device");
    r.slow_host = strdup("n2");
    r.slow_host_cause = strdup("network");
    char *text = tsa_batch_row_json_text(&r);
    cJSON *j = cJSON_Parse(text);
    tsa_batch_row back;
    assert_int_equal(tsa_batch_row_from_json(j, r.job, &back), 0);
    assert_int_equal(back.ranks, 8);
    assert_float_equal(back.median_step_s, 0.25, 0);
    assert_true(isnan(back.mfu));
    assert_int_equal(back.straggler_rank, 5);
    assert_string_equal(back.straggler_host, "n\"1");
    assert_string_equal(back.verdict, "straggler-bound");
    assert_null(back.confidence);
    assert_string_equal(back.lead_finding, "DIST.STRAGGLER");
    assert_float_equal(back.lead_finding_s, 1.5, 0);
    assert_string_equal(back.straggler_cause, "device");
    assert_string_equal(back.slow_host, "n2");
    assert_string_equal(back.slow_host_cause, "network");
    assert_string_equal(back.error, "line1\nline2");
    assert_string_equal(back.status, "failed");
    cJSON_Delete(j);
    free(text);
    tsa_batch_row_free(&back);
    tsa_batch_row_free(&r);
}

/* A host blamed as the straggler of one job and as the slow host of
 * another comes back in the fleet view with both causes. */
static void test_fleet_counts_slow_hosts(void **state)
{
    (void)state;
    tsa_batch_row r[3];
    tsa_batch_row_init(&r[0], "/j/a");
    tsa_batch_row_init(&r[1], "/j/b");
    tsa_batch_row_init(&r[2], "/j/c");
    r[0].straggler_rank = 3;
    r[0].straggler_host = strdup("n7");
    r[0].straggler_cause = strdup("link");
    r[1].slow_host = strdup("n7");
    r[1].slow_host_cause = strdup("network");
    r[2].straggler_rank = 1;
    r[2].straggler_host = strdup("n1");
    tsa_batch_host *h;
    assert_int_equal(tsa_batch_blamed_hosts(r, 3, 2, &h), 1);
    assert_string_equal(h[0].host, "n7");
    assert_int_equal(h[0].jobs, 2);
    free(h);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tsa_batch_print_fleet(f, r, 3, 10);
    tsa_batch_print_fleet_ndjson(f, r, 3, 10);
    fclose(f);
    assert_non_null(strstr(text, "n7: 2 jobs: /j/a (rank 3, cause: link) /j/b (slow host, cause: "
                                 "network)"));
    assert_non_null(strstr(text, "\"causes\":[\"link\",\"network\"]"));
    free(text);
    for (int i = 0; i < 3; i++)
        tsa_batch_row_free(&r[i]);
}

static void test_no_jobs(void **state)
{
    (void)state;
    char *root = tu_tempdir("nojobs");
    char *argv[] = {"batch", root, "-q", NULL};
    assert_int_equal(tu_status(tsa_cmd_batch, argv), 2);
    char *argv2[] = {"batch", "-j", "0", root, NULL};
    assert_int_equal(tu_status(tsa_cmd_batch, argv2), 2);
    tu_rmtree(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quoting_and_roundtrip),
        cmocka_unit_test(test_no_jobs),
        cmocka_unit_test(test_fleet_counts_slow_hosts),
        cmocka_unit_test(test_batch_end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
