/* The terminal section and the JSON keys the report relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"
#include "report/xrank_render.h"

static char *print_to_string(const tsa_xrank_result *r, int color)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    tsa_xrank_print(f, r, color);
    fclose(f);
    return buf;
}

static tsa_job *straggler_job(int n, int victim)
{
    double *sd = calloc((size_t)n, sizeof *sd);
    assert_non_null(sd);
    sd[victim] = 0.2;
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = n;
    p.max_offset_ns = 1500000000ll;
    p.slowdown = sd;
    tsa_job *job = synth_job(&p, NULL);
    free(sd);
    assert_non_null(job);
    return job;
}

static void test_text(void **state)
{
    (void)state;
    tsa_job *job = straggler_job(8, 5);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    char *plain = print_to_string(&r, 0);
    assert_non_null(strstr(plain, "Across ranks"));
    assert_non_null(strstr(plain, ">     5  node-001"));   /* the marked row */
    assert_non_null(strstr(plain, "straggler: rank 5 (node-001), "));
    assert_null(strchr(plain, '\033'));
    /* one row per rank */
    size_t rows = 0;
    for (const char *s = plain; (s = strstr(s, "node-0")); s++)
        rows++;
    assert_true(rows >= 8);
    char *colored = print_to_string(&r, 1);
    assert_non_null(strstr(colored, "\033[1;31m"));
    free(plain);
    free(colored);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

static void test_text_many_ranks(void **state)
{
    (void)state;
    tsa_job *job = straggler_job(100, 77);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    char *plain = print_to_string(&r, 0);
    assert_non_null(strstr(plain, "more ranks"));
    assert_non_null(strstr(plain, ">    77"));
    free(plain);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

static void test_json(void **state)
{
    (void)state;
    tsa_job *job = straggler_job(8, 3);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    cJSON *root = cJSON_CreateObject();
    tsa_xrank_add_json(root, &r);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    /* parse back what a consumer would read */
    root = cJSON_Parse(text);
    assert_non_null(root);
    cJSON *st = cJSON_GetObjectItem(root, "straggler");
    assert_true(cJSON_IsObject(st));
    assert_int_equal(cJSON_GetObjectItem(st, "rank")->valueint, 3);
    assert_string_equal(cJSON_GetObjectItem(st, "host")->valuestring, "node-000");
    assert_true(cJSON_GetObjectItem(st, "z")->valuedouble >= 3);
    assert_true(cJSON_GetObjectItem(st, "slowdown")->valuedouble > 0.15);
    assert_true(cJSON_GetObjectItem(st, "wall_lost_ns")->valuedouble > 0);
    assert_true(cJSON_GetObjectItem(st, "whatif_saved_ns")->valuedouble > 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "imbalance")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "slow_host")));
    cJSON *clock = cJSON_GetObjectItem(root, "clock");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(clock, "offsets")), 8);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(clock, "residual_ns")));
    cJSON *off4 = cJSON_GetArrayItem(cJSON_GetObjectItem(clock, "offsets"), 4);
    assert_int_equal((int64_t)cJSON_GetObjectItem(off4, "offset_ns")->valuedouble,
                     job->ranks[4].clock_offset_ns);
    cJSON *blame = cJSON_GetObjectItem(root, "ranks_blame");
    assert_int_equal(cJSON_GetArraySize(blame), 8);
    cJSON *b3 = cJSON_GetArrayItem(blame, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(b3, "slow")));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "crossrank"),
                                            "step_source")->valuestring, "derived");
    cJSON_Delete(root);
    free(text);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

static void test_json_balanced(void **state)
{
    (void)state;
    synth_params p;
    synth_defaults(&p);
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(job, NULL, &r, NULL), 0);
    cJSON *root = cJSON_CreateObject();
    tsa_xrank_add_json(root, &r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "straggler")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "intermittent")), 0);
    cJSON_Delete(root);
    char *plain = print_to_string(&r, 0);
    assert_non_null(strstr(plain, "no straggler"));
    free(plain);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_many_ranks),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_balanced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
