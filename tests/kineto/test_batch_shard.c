/* Batch rows for warehouses: the NDJSON schema of every row type,
 * `--shard I/N` (disjoint, covering, stable) and `batch merge` (the same
 * output as one unsharded run), on a tree of generated jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "batch_jobs.h"
#include "cmds/commands.h"
#include "test_util.h"

/* ------------------------------------------------------------ schema */

enum { T_STR = 1, T_NUM = 2, T_NULL = 4, T_BOOL = 8, T_STRS = 16, T_STRS_NULLS = 32 };

typedef struct field {
    const char *key;
    int types;   /* the JSON types the key may hold */
} field;

/* docs/batch-schema.md, schema_version 1: a change here is a change there */
static const field job_fields[] = {
    {"type", T_STR}, {"schema_version", T_NUM}, {"job", T_STR}, {"run_id", T_STR | T_NULL},
    {"status", T_STR}, {"ranks", T_NUM | T_NULL}, {"hosts", T_NUM | T_NULL},
    {"steps", T_NUM | T_NULL}, {"median_step_s", T_NUM | T_NULL}, {"mfu", T_NUM | T_NULL},
    {"top_recoverable", T_STR | T_NULL}, {"top_recoverable_s", T_NUM | T_NULL},
    {"exposed_comm_share", T_NUM | T_NULL}, {"data_stall_share", T_NUM | T_NULL},
    {"straggler_rank", T_NUM | T_NULL}, {"straggler_host", T_STR | T_NULL},
    {"recoverable_gpu_hours", T_NUM | T_NULL}, {"problems", T_NUM | T_NULL},
    {"error", T_STR | T_NULL}, {"verdict", T_STR | T_NULL}, {"confidence", T_STR | T_NULL},
    {"lead_finding", T_STR | T_NULL}, {"lead_finding_s", T_NUM | T_NULL},
    {"straggler_cause", T_STR | T_NULL}, {"cached", T_BOOL}, {"slow_host", T_STR | T_NULL},
    {"slow_host_cause", T_STR | T_NULL}, {NULL, 0}};
static const field host_fields[] = {
    {"type", T_STR}, {"schema_version", T_NUM}, {"host", T_STR}, {"job_count", T_NUM},
    {"jobs", T_STRS}, {"causes", T_STRS | T_STRS_NULLS}, {NULL, 0}};
static const field fleet_job_fields[] = {
    {"type", T_STR}, {"schema_version", T_NUM}, {"position", T_NUM}, {"job", T_STR},
    {"recoverable_gpu_hours", T_NUM}, {"top_recoverable", T_STR | T_NULL},
    {"lead_finding", T_STR | T_NULL}, {NULL, 0}};

static int json_type(const cJSON *v)
{
    if (cJSON_IsString(v))
        return T_STR;
    if (cJSON_IsNumber(v))
        return T_NUM;
    if (cJSON_IsNull(v))
        return T_NULL;
    if (cJSON_IsBool(v))
        return T_BOOL;
    if (cJSON_IsArray(v)) {   /* of strings, or of strings and nulls */
        const cJSON *e;
        int nulls = 0;
        cJSON_ArrayForEach(e, v) {
            if (cJSON_IsNull(e))
                nulls = 1;
            else if (!cJSON_IsString(e))
                return 0;
        }
        return nulls ? T_STRS_NULLS : T_STRS;
    }
    return 0;
}

/* Exactly the documented keys, each of a documented type; returns the type. */
static const char *check_row_schema(const cJSON *o)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    assert_true(cJSON_IsString(type));
    const field *f = !strcmp(type->valuestring, "job")          ? job_fields
                     : !strcmp(type->valuestring, "fleet_host") ? host_fields
                     : !strcmp(type->valuestring, "fleet_job")  ? fleet_job_fields
                                                                : NULL;
    if (!f)
        fail_msg("undocumented row type %s", type->valuestring);
    int n = 0;
    for (; f[n].key; n++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f[n].key);
        if (!v || !(json_type(v) & f[n].types))
            fail_msg("%s row: key %s missing or of another type", type->valuestring, f[n].key);
    }
    assert_int_equal(cJSON_GetArraySize(o), n);   /* no undocumented key */
    assert_int_equal(cJSON_GetObjectItem(o, "schema_version")->valueint, TSA_BATCH_NDJSON_SCHEMA);
    return type->valuestring;
}

/* ------------------------------------------------------------ jobs */

#define N_JOBS 8
static char *g_root;

/* Eight jobs: three whose straggler is on host bad9, two on slow9, three clean. */
static int make_jobs(void **state)
{
    (void)state;
    g_root = tu_tempdir("shard");
    static const struct {
        const char *name, *host;
        int straggler;
    } jobs[N_JOBS] = {{"j0", "bad", 1}, {"j1", "bad", 2}, {"j2", "bad", 3}, {"j3", "slow", 0},
                      {"j4", "slow", 2}, {"j5", "ok", -1}, {"j6", "ok", -1}, {"j7", "ok", -1}};
    for (int i = 0; i < N_JOBS; i++)
        if (tb_write_job(g_root, jobs[i].name, jobs[i].host, jobs[i].straggler, 200))
            return -1;
    return 0;
}

static int remove_jobs(void **state)
{
    (void)state;
    tu_rmtree(g_root);
    free(g_root);
    return 0;
}

/* `batch ROOT --ndjson [--shard SPEC]` with fresh analyses (no summary
 * files read or written, so every run's rows are alike); asserts rc. */
static char *run_batch(const char *spec, int want_rc)
{
    char shard[64];
    snprintf(shard, sizeof shard, "--shard=%s", spec ? spec : "");
    char *argv[] = {"batch", g_root, "--ndjson", "--force", "--no-write", "-q", "-j", "2",
                    spec ? shard : NULL, NULL};
    char *out;
    assert_int_equal(tu_capture(tsa_cmd_batch, spec ? 9 : 8, argv, &out), want_rc);
    return out;
}

/* Lines of text (malloc'd copies) whose "type" is / is not "job". */
static size_t lines_of(const char *text, int jobs, char **v, size_t cap)
{
    char *copy = strdup(text);
    size_t n = 0;
    for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        int is_job = !strncmp(l, "{\"type\":\"job\",", 14);
        if (is_job == jobs) {
            assert_true(n < cap);
            v[n++] = strdup(l);
        }
    }
    free(copy);
    return n;
}

static void free_lines(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

static char *write_temp(const char *dir, const char *name, const char *text)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
    return path;
}

/* ------------------------------------------------------------ tests */

static void test_every_row_has_its_schema(void **state)
{
    (void)state;
    char *out = run_batch(NULL, 0);
    int seen_job = 0, seen_host = 0, seen_fleet_job = 0;
    char *copy = strdup(out);
    for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(l);
        assert_non_null(o);
        const char *type = check_row_schema(o);
        seen_job += !strcmp(type, "job");
        seen_host += !strcmp(type, "fleet_host");
        seen_fleet_job += !strcmp(type, "fleet_job");
        cJSON_Delete(o);
    }
    assert_int_equal(seen_job, N_JOBS);
    assert_int_equal(seen_host, 2);          /* bad9 (3 jobs), slow9 (2 jobs) */
    assert_int_equal(seen_fleet_job, N_JOBS);   /* every job has a figure; top 10 */
    /* a failed job's row has the same keys, its unknowns null */
    tsa_batch_row r;
    tsa_batch_row_init(&r, "x");
    tsa_batch_row_fail(&r, "failed", "no dumps");
    cJSON *o = tsa_batch_row_to_json(&r);
    check_row_schema(o);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "ranks")));
    cJSON_Delete(o);
    tsa_batch_row_free(&r);
    free(copy);
    free(out);
}

static void test_shard_spec(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "1", "1/", "/2", "a/b", "2/2", "5/3", "0/0",
                                      "-1/2", "1/-2", "1/2x", " 1/2", "0/99999999", "1/2/3"};
    tsa_batch_shard s;
    char err[160];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        if (!tsa_batch_shard_parse(bad[i], &s, err, sizeof err))
            fail_msg("shard spec '%s' accepted", bad[i]);
        assert_non_null(strstr(err, "bad --shard"));
    }
    assert_int_equal(tsa_batch_shard_parse("5/3", &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "I must be 0..2"));
    assert_int_equal(tsa_batch_shard_parse("3/4", &s, err, sizeof err), 0);
    assert_int_equal(s.index, 3);
    assert_int_equal(s.count, 4);
    assert_int_equal(tsa_batch_shard_parse("0/1", &s, err, sizeof err), 0);
    /* the command refuses before it looks for jobs */
    char *argv[] = {"batch", g_root, "--shard", "4/4", "-q", NULL};
    assert_int_equal(tu_status(tsa_cmd_batch, argv), 2);
}

static void test_shard_hash_is_fixed_and_canonical(void **state)
{
    (void)state;
    /* FNV-1a 64 of the path, pinned: a changed hash would re-shard every
     * fleet (value computed independently) */
    assert_int_equal(tsa_batch_shard_of("/nonexistent/tscope-job", 1000), 92);
    assert_int_equal(tsa_batch_shard_of("/nonexistent/tscope-job", 7), 3);
    /* spellings of one directory are one job, in one shard */
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/j3", g_root);
    snprintf(b, sizeof b, "%s/./j3/", g_root);
    for (unsigned long n = 2; n < 50; n++)
        assert_int_equal(tsa_batch_shard_of(a, n), tsa_batch_shard_of(b, n));
}

/* Shards are disjoint and cover the list; adding jobs moves no other job. */
static void test_shards_partition_stably(void **state)
{
    (void)state;
    enum { N = 40, SHARDS = 5 };
    char *all[N + 10];
    int owner[N];
    for (int i = 0; i < N + 10; i++) {
        all[i] = malloc(32);
        snprintf(all[i], 32, "/nonexistent/job%02d", i);
    }
    for (int i = 0; i < N; i++)
        owner[i] = -1;
    for (unsigned long s = 0; s < SHARDS; s++) {
        char *v[N + 10];
        for (int i = 0; i < N; i++)   /* the first N jobs */
            v[i] = strdup(all[i]);
        size_t n = N;
        tsa_batch_shard sh = {s, SHARDS};
        tsa_batch_shard_filter(&sh, v, &n);
        for (size_t k = 0; k < n; k++) {
            int i = atoi(v[k] + strlen("/nonexistent/job"));
            assert_int_equal(owner[i], -1);   /* disjoint */
            owner[i] = (int)s;
        }
        free_lines(v, n);
        /* with 10 more jobs, every earlier job keeps its shard */
        for (int i = 0; i < N + 10; i++)
            v[i] = strdup(all[i]);
        n = N + 10;
        tsa_batch_shard_filter(&sh, v, &n);
        for (size_t k = 0; k < n; k++) {
            int i = atoi(v[k] + strlen("/nonexistent/job"));
            if (i < N)
                assert_int_equal(owner[i], (int)s);
        }
        free_lines(v, n);
    }
    for (int i = 0; i < N; i++)
        assert_int_not_equal(owner[i], -1);   /* covering */
    free_lines(all, N + 10);
}

static void test_shard_and_merge_equal_unsharded(void **state)
{
    (void)state;
    char *whole = run_batch(NULL, 0);
    char *jobs[N_JOBS + 1], *fleet[64];
    assert_int_equal(lines_of(whole, 1, jobs, N_JOBS + 1), N_JOBS);
    size_t n_fleet = lines_of(whole, 0, fleet, 64);
    assert_true(n_fleet > 0);

    /* N=1: the job rows of the unsharded run, and no fleet rows */
    char *one = run_batch("0/1", 0);
    char *v[N_JOBS + 1];
    assert_int_equal(lines_of(one, 1, v, N_JOBS + 1), N_JOBS);
    for (int i = 0; i < N_JOBS; i++)
        assert_string_equal(v[i], jobs[i]);
    free_lines(v, N_JOBS);
    assert_int_equal(lines_of(one, 0, v, N_JOBS + 1), 0);
    free(one);

    /* three shards: disjoint, covering, each row as the unsharded one */
    char *tmp = tu_tempdir("shardout");
    char *files[3];
    int taken[N_JOBS] = {0};
    for (int s = 0; s < 3; s++) {
        char spec[8], name[16];
        snprintf(spec, sizeof spec, "%d/3", s);
        snprintf(name, sizeof name, "s%d.ndjson", s);
        char *out = run_batch(spec, 0);
        size_t n = lines_of(out, 1, v, N_JOBS + 1);
        for (size_t k = 0; k < n; k++) {
            int hit = 0;
            for (int i = 0; i < N_JOBS; i++)
                if (!strcmp(v[k], jobs[i])) {
                    assert_int_equal(taken[i]++, 0);
                    hit = 1;
                }
            assert_true(hit);
        }
        free_lines(v, n);
        assert_int_equal(lines_of(out, 0, v, N_JOBS + 1), 0);   /* no partial fleet view */
        files[s] = write_temp(tmp, name, out);
        free(out);
    }
    for (int i = 0; i < N_JOBS; i++)
        assert_int_equal(taken[i], 1);

    /* merge, inputs in any order: byte for byte the unsharded output */
    char *margv[] = {"merge", files[2], files[0], files[1], NULL};
    char *merged;
    assert_int_equal(tu_capture(tsa_cmd_batch_merge, 4, margv, &merged), 0);
    assert_string_equal(merged, whole);
    free(merged);
    /* through `batch merge`, and fleet lines in the inputs are ignored */
    char *with_fleet = write_temp(tmp, "whole.ndjson", whole);
    char *bargv[] = {"batch", "merge", with_fleet, "--top", "3", NULL};
    assert_int_equal(tu_capture(tsa_cmd_batch, 5, bargv, &merged), 0);
    assert_int_equal(lines_of(merged, 1, v, N_JOBS + 1), N_JOBS);
    free_lines(v, N_JOBS);
    size_t n = lines_of(merged, 0, v, N_JOBS + 1);
    assert_int_equal(n, 2 + 3);   /* two hosts, the top 3 jobs */
    for (size_t k = 0; k < n; k++)
        assert_string_equal(v[k], fleet[k]);   /* the top 3 of the same list */
    free_lines(v, n);
    free(merged);

    free(with_fleet);
    for (int s = 0; s < 3; s++)
        free(files[s]);
    tu_rmtree(tmp);
    free(tmp);
    free_lines(jobs, N_JOBS);
    free_lines(fleet, n_fleet);
    free(whole);
}

static void test_empty_shard(void **state)
{
    (void)state;
    /* a shard no job hashes to: no rows, status 0 (an array task with
     * nothing to do has not failed) */
    char *names[N_JOBS];
    for (int i = 0; i < N_JOBS; i++) {
        names[i] = malloc(strlen(g_root) + 8);
        sprintf(names[i], "%s/j%d", g_root, i);
    }
    unsigned long empty = 0;
    for (int busy = 1; busy; empty++) {
        busy = 0;
        for (int i = 0; i < N_JOBS; i++)
            busy |= tsa_batch_shard_of(names[i], 64) == empty;
    }
    empty--;
    free_lines(names, N_JOBS);
    char spec[16];
    snprintf(spec, sizeof spec, "%lu/64", empty);
    char *out = run_batch(spec, 0);
    assert_string_equal(out, "");
    free(out);
}

static void test_merge_rejects_bad_input(void **state)
{
    (void)state;
    char *tmp = tu_tempdir("mergebad");
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"not json\n", "bad.ndjson:1: not a batch --ndjson row"},
        {"\n{\"job\":\"a\",\"status\":\"ok\"}\n", "bad.ndjson:2: not a batch --ndjson row"},
        {"{\"type\":\"job\",\"schema_version\":99,\"job\":\"a\",\"status\":\"ok\"}\n",
         "schema_version 99"},
        {"{\"type\":\"job\",\"schema_version\":1,\"status\":\"ok\"}\n", "without a \"job\""},
        {"{\"type\":\"job\",\"schema_version\":1,\"job\":\"a\"}\n", "without a \"status\""},
        {"{\"type\":\"job\",\"schema_version\":1,\"job\":\"a\",\"status\":\"ok\"}\n"
         "{\"type\":\"job\",\"schema_version\":1,\"job\":\"a\",\"status\":\"ok\"}\n",
         "job a is in"},
    };
    char err[1024];
    tsa_batch_row *rows;
    size_t n;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *path = write_temp(tmp, "bad.ndjson", cases[i].text);
        err[0] = '\0';
        assert_int_equal(tsa_batch_merge_read(&path, 1, &rows, &n, err, sizeof err), -1);
        if (!strstr(err, cases[i].message))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].message);
        char *argv[] = {"batch", "merge", path, NULL};
        assert_int_equal(tu_status(tsa_cmd_batch, argv), 2);
        free(path);
    }
    char missing[600];
    snprintf(missing, sizeof missing, "%s/gone.ndjson", tmp);
    char *files[] = {missing};
    assert_int_equal(tsa_batch_merge_read(files, 1, &rows, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file"));
    /* empty shard outputs merge to nothing, status 0 */
    char *empty = write_temp(tmp, "empty.ndjson", "");
    char *argv[] = {"merge", empty, empty, NULL};
    char *out;
    assert_int_equal(tu_capture(tsa_cmd_batch_merge, 3, argv, &out), 0);
    assert_string_equal(out, "");
    free(out);
    free(empty);
    tu_rmtree(tmp);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_spec),
        cmocka_unit_test(test_shard_hash_is_fixed_and_canonical),
        cmocka_unit_test(test_shards_partition_stably),
        cmocka_unit_test(test_merge_rejects_bad_input),
        cmocka_unit_test(test_every_row_has_its_schema),
        cmocka_unit_test(test_shard_and_merge_equal_unsharded),
        cmocka_unit_test(test_empty_shard),
    };
    return cmocka_run_group_tests(tests, make_jobs, remove_jobs);
}
