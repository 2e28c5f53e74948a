/* Run diff: exact arithmetic on hand-made sides, then the command end to
 * end on two generated torch.profiler jobs. */
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

#include "cmds/commands.h"
#include "report/diff.h"
#include "kineto_gen.h"
#include "test_util.h"

#define MS 1000000LL

static void make_side(tsa_diff_side *s, const char *label, int64_t step_ms, int64_t wait_ms)
{
    memset(s, 0, sizeof *s);
    s->label = label;
    s->ranks = 4;
    s->hosts = 1;
    s->steps = 10;
    s->median_step_ns = step_ms * MS;
    s->mfu = NAN;
    s->n_lines = 2;
    s->line_label[0] = "useful compute";
    s->line_label[1] = "exposed comm (wait)";
    /* rank-ns over 4 ranks x 10 steps */
    s->line_ns[0] = 60 * MS * 40;
    s->line_ns[1] = wait_ms * MS * 40;
    s->phase_ns[TSA_PHASE_FORWARD] = 20 * MS * 40;
    s->kcat_ns[TSA_KCAT_GEMM] = 50 * MS * 40;
    s->n_colls = 1;
    s->coll_name[0] = "AllReduce";
    s->coll_ns[0] = (10 + wait_ms) * MS * 40;
    s->coll_busbw[0] = 100;
    s->straggler_rank = -1;
}

static const tsa_diff_row *row(const tsa_diff *d, const char *section, const char *name)
{
    for (size_t i = 0; i < d->n_rows; i++)
        if (!strcmp(d->rows[i].section, section) && !strcmp(d->rows[i].name, name))
            return &d->rows[i];
    fail_msg("no row %s/%s", section, name);
    return NULL;
}

/* Both sides of one row, each within eps. */
static void assert_row(const tsa_diff *d, const char *section, const char *name, double a,
                       double b, double eps)
{
    const tsa_diff_row *r = row(d, section, name);
    assert_float_equal(r->a, a, eps);
    assert_float_equal(r->b, b, eps);
}

static void test_arithmetic(void **state)
{
    (void)state;
    tsa_diff_side a, b;
    make_side(&a, "A", 100, 30);
    make_side(&b, "B", 80, 10);
    b.ranks = 8;            /* twice the ranks: per rank-step values halve */
    b.steps = 5;            /* and half the steps: they double back */
    b.coll_busbw[0] = 150;
    b.straggler_rank = 3;
    b.straggler_host = "node1";
    tsa_diff d;
    assert_int_equal(tsa_diff_compute(&a, &b, &d), 0);
    assert_float_equal(d.speedup, 1.25, 1e-12);
    assert_row(&d, "step", "median step time", 100, 80, 1e-12);
    assert_row(&d, "budget", "exposed comm (wait)", 30, 10, 1e-9);
    assert_row(&d, "budget", "useful compute", 60, 60, 1e-9);
    assert_float_equal(row(&d, "phases", "forward")->a, 20, 1e-9);
    assert_float_equal(row(&d, "kernels", "gemm")->b, 50, 1e-9);
    assert_row(&d, "collectives", "AllReduce busbw", 100, 150, 1e-12);
    assert_row(&d, "collectives", "AllReduce time", 40, 20, 1e-9);
    assert_true(isnan(row(&d, "step", "MFU")->a));
    /* -20 ms of wait and -20 ms of AllReduce time tie; the first wins */
    assert_true(d.most >= 0);
    assert_string_equal(d.rows[d.most].name, "exposed comm (wait)");
    assert_non_null(strstr(d.changed_most, "exposed comm (wait) went from 30.00 to 10.00"));

    char *json = tsa_diff_json(&a, &b, &d);
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    assert_float_equal(cJSON_GetObjectItem(j, "speedup")->valuedouble, 1.25, 1e-12);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "a"), "straggler")));
    cJSON *st = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "b"), "straggler");
    assert_int_equal(cJSON_GetObjectItem(st, "rank")->valueint, 3);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "changed_most"), "name")->valuestring,
                        "exposed comm (wait)");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")), (int)d.n_rows);
    cJSON_Delete(j);
    free(json);

    /* text mentions both runs, the speed-up and what changed */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    tsa_diff_print_text(mem, &a, &b, &d);
    fclose(mem);
    assert_non_null(strstr(buf, "B is 1.25x faster than A"));
    assert_non_null(strstr(buf, "rank 3 (node1)"));
    assert_non_null(strstr(buf, "changed most:"));
    free(buf);
    tsa_diff_free(&d);
}

static void test_missing_values(void **state)
{
    (void)state;
    tsa_diff_side a, b;
    make_side(&a, "A", 0, 0);
    make_side(&b, "B", 10, 0);
    b.n_colls = 0;
    a.steps = 0;   /* nothing analysed in A */
    tsa_diff d;
    assert_int_equal(tsa_diff_compute(&a, &b, &d), 0);
    assert_true(isnan(d.speedup));
    assert_true(isnan(row(&d, "budget", "useful compute")->a));
    assert_true(isnan(row(&d, "collectives", "AllReduce time")->b));
    char *json = tsa_diff_json(&a, &b, &d);
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "speedup")));
    cJSON_Delete(j);
    free(json);
    tsa_diff_free(&d);
}

static void write_job(const char *dir, int delay_us)
{
    for (int rank = 0; rank < 4; rank++) {
        char path[512];
        snprintf(path, sizeof path, "%s/node0_%d.1.pt.trace.json", dir, KGEN_PID(rank));
        kgen_opts o = {.rank = rank, .world_size = 4, .steps = 12,
                       .base_ns = 1700000000000000000LL,
                       .delay_us = rank == 2 ? delay_us : 0, .with_seq = 1};
        assert_int_equal(kgen_write(path, &o), 0);
    }
}

static void test_command_on_traces(void **state)
{
    (void)state;
    char *a = tu_tempdir("diffa"), *b = tu_tempdir("diffb");
    write_job(a, 0);
    write_job(b, 150);
    char *argv[] = {"diff", a, b, "--json", NULL};
    char *out;
    assert_int_equal(tu_capture(tsa_cmd_diff, 4, argv, &out), 0);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    /* ProfilerStep ranges are 990 us in both runs */
    assert_float_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "a"), "median_step_ms")->valuedouble,
                       0.990, 1e-9);
    assert_float_equal(cJSON_GetObjectItem(j, "speedup")->valuedouble, 1.0, 1e-9);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "a"), "ranks")->valueint, 4);
    /* B has a straggler on rank 2; A has none */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "a"), "straggler")));
    cJSON *st = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "b"), "straggler");
    assert_true(cJSON_IsObject(st));
    assert_int_equal(cJSON_GetObjectItem(st, "rank")->valueint, 2);
    /* the gemm kernels of B take 150 us more on one rank of four */
    cJSON *rows = cJSON_GetObjectItem(j, "rows"), *r;
    int seen = 0;
    cJSON_ArrayForEach(r, rows) {
        if (!strcmp(cJSON_GetObjectItem(r, "section")->valuestring, "kernels") &&
            !strcmp(cJSON_GetObjectItem(r, "name")->valuestring, "gemm")) {
            assert_float_equal(cJSON_GetObjectItem(r, "delta")->valuedouble, 0.150 / 4, 1e-9);
            seen = 1;
        }
    }
    assert_true(seen);
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(j, "changed_most")));
    cJSON_Delete(j);
    free(out);

    char *argv2[] = {"diff", a, NULL};
    assert_int_equal(tu_status(tsa_cmd_diff, argv2), 2);
    char *argv3[] = {"diff", a, "/nonexistent/tscope", NULL};
    assert_int_equal(tu_status(tsa_cmd_diff, argv3), 2);
    tu_rmtree(a);
    tu_rmtree(b);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_missing_values),
        cmocka_unit_test(test_command_on_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
