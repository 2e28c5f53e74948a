/* `tscope-report trace` end to end: the analysis fills steps,
 * phases and clock offsets, and the command writes what the options ask. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds/commands.h"
#include "kineto_gen.h"
#include "test_util.h"

static size_t count(cJSON *doc, const char *ph, const char *cat)
{
    size_t n = 0;
    cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(doc, "traceEvents")) {
        cJSON *p = cJSON_GetObjectItem(ev, "ph"), *c = cJSON_GetObjectItem(ev, "cat");
        if (!strcmp(p->valuestring, ph) && (!cat || (c && !strcmp(c->valuestring, cat))))
            n++;
    }
    return n;
}

static void test_trace_command(void **state)
{
    (void)state;
    char *dir = tu_tempdir("cmdtrace");
    for (int rank = 0; rank < 2; rank++) {
        char path[512];
        snprintf(path, sizeof path, "%s/node%d_%d.1.pt.trace.json", dir, rank, KGEN_PID(rank));
        kgen_opts o = {.rank = rank, .world_size = 2, .steps = 10,
                       .base_ns = 1700000000000000000LL, .delay_us = rank ? 50 : 0, .with_seq = 1};
        assert_int_equal(kgen_write(path, &o), 0);
    }
    char out[600];
    snprintf(out, sizeof out, "%s/t.json.gz", dir);
    char *argv[] = {"trace", dir, "-o", out, "--steps", "3-5", NULL};
    char *text;
    assert_int_equal(tu_status(tsa_cmd_trace, argv), 0);
    text = tu_read_file(out, NULL);   /* gzip, by the name */
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    assert_int_equal(count(doc, "X", "step"), 2 * 3);
    assert_int_equal(count(doc, "X", "kernel"), 2 * 3 * 4);
    /* the phase pass ran: per step the data stall (5 us until the H2D
     * copy) and runs of forward, backward, optimizer kernels */
    assert_int_equal(count(doc, "X", "phase"), 2 * 3 * 4);
    cJSON_Delete(doc);

    /* a tiny cap splits the output into parts that all parse */
    snprintf(out, sizeof out, "%s/split.json", dir);
    char *argv2[] = {"trace", dir, "-o", out, "--max-mb", "0.01", NULL};
    assert_int_equal(tu_status(tsa_cmd_trace, argv2), 0);
    size_t parts = 0, kernels = 0;
    for (int k = 1; k < 100; k++) {
        char p[700];
        if (k == 1)
            snprintf(p, sizeof p, "%s", out);
        else
            snprintf(p, sizeof p, "%s/split.part%d.json", dir, k);
        if (access(p, F_OK))
            break;
        char *t = tu_read_file(p, NULL);
        cJSON *d = cJSON_Parse(t);
        free(t);
        assert_non_null(d);
        kernels += count(d, "X", "kernel");
        cJSON_Delete(d);
        parts++;
    }
    assert_true(parts > 2);
    assert_int_equal(kernels, 2 * 10 * 4);

    /* usage errors */
    char *bad1[] = {"trace", dir, NULL};
    assert_int_equal(tu_status(tsa_cmd_trace, bad1), 2);
    char *bad2[] = {"trace", dir, "-o", out, "--steps", "5-3", NULL};
    assert_int_equal(tu_status(tsa_cmd_trace, bad2), 2);
    char *bad3[] = {"trace", "/nonexistent/tscope", "-o", out, NULL};
    assert_int_equal(tu_status(tsa_cmd_trace, bad3), 2);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
