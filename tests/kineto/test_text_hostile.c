/* Escape sequences, newlines and invalid UTF-8 in dump strings (run id,
 * device name) and in the job directory's name (issue 13 items 4 and 5):
 * every text output shows them visibly and every JSON output is valid
 * UTF-8 that a strict parser accepts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds/commands.h"
#include "gen_job.h"
#include "kineto_gen.h"
#include "reader/record_json.h"
#include "reader/text_visible.h"
#include "test_util.h"

#define HOSTILE "\x1b[2J\x1b]0;owned\x07\r\n\xff\xc2\x9b"

static void test_visible_text(void **state)
{
    (void)state;
    char *v = tsr_text_visible_dup("a" HOSTILE "\xc3\xa9z");
    assert_string_equal(v, "a\\x1b[2J\\x1b]0;owned\\x07\\x0d\\x0a?\\u009b\xc3\xa9z");
    free(v);
    const char *clean = "kernel_\xc3\xa9";   /* valid UTF-8 is kept, as is */
    assert_ptr_equal(tsr_vis(clean), clean);
    assert_string_equal(tsr_vis("\x7f"), "\\x7f");
    assert_string_equal(tsr_vis(NULL), "");
    assert_int_equal(tsr_text_is_visible("tab\there"), 0);
}

/* No control byte but newline, and valid UTF-8 throughout. */
static void assert_visible_output(const char *what, const char *out)
{
    assert_non_null(out);
    for (const char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\n')
            fail_msg("%s: control byte 0x%02x at %td", what, (unsigned char)*p, p - out);
    if (!tsr_utf8_valid(out))
        fail_msg("%s: invalid UTF-8", what);
}

/* Strict JSON: valid UTF-8, no raw control byte but JSON whitespace, and
 * the whole text (or each line, for NDJSON) parses with nothing after. */
static void assert_json(const char *what, const char *out, int per_line)
{
    assert_non_null(out);
    assert_true(tsr_utf8_valid(out));
    for (const char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 && !strchr("\n\t\r", *p))
            fail_msg("%s: control byte 0x%02x at %td", what, (unsigned char)*p, p - out);
    char *copy = strdup(out);
    size_t docs = 0;
    for (char *l = per_line ? strtok(copy, "\n") : copy; l;
         l = per_line ? strtok(NULL, "\n") : NULL, docs++) {
        cJSON *j = cJSON_ParseWithOpts(l, NULL, 1);
        if (!j)
            fail_msg("%s: document %zu is not JSON", what, docs + 1);
        cJSON_Delete(j);
    }
    assert_true(docs > 0);
    free(copy);
}

static void test_every_output_is_visible(void **state)
{
    (void)state;
    char *root = tu_tempdir("hostile-text");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/job" HOSTILE, root);
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.steps = 5;
    o.run_id = "run" HOSTILE;
    o.device = "GPU" HOSTILE;
    o.dir = dir;
    gen_truth t;
    assert_int_equal(gen_job(&o, &t), 0);

    /* every command, its output kind (0 text, 1 JSON, 2 NDJSON), and a
     * piece the visible text must show */
    enum { TEXT, JSON, NDJSON };
    struct {
        int (*cmd)(int, char **);
        char *argv[8];
        int kind;
        const char *shows;
    } runs[] = {
        {tsa_cmd_report, {"report", dir, "--color", "never"}, TEXT, "run\\x1b[2J"},
        {tsa_cmd_report, {"report", dir, "--json"}, JSON, NULL},
        {tsa_cmd_info, {"info", dir}, TEXT, NULL},
        {tsa_cmd_info, {"info", "--json", dir}, JSON, NULL},
        {tsa_cmd_dump, {"dump", dir}, TEXT, NULL},
        {tsa_cmd_batch, {"batch", root, "-q", "--force", "--no-write"}, TEXT, "job\\x1b[2J"},
        {tsa_cmd_batch, {"batch", root, "-q", "--force", "--no-write", "--ndjson"}, NDJSON, NULL},
        {tsa_cmd_diff, {"diff", dir, dir}, TEXT, NULL},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int argc = 0;
        while (runs[i].argv[argc])
            argc++;
        char what[64], *out;
        snprintf(what, sizeof what, "%s (run %zu)", runs[i].argv[0], i);
        tu_capture(runs[i].cmd, argc, runs[i].argv, &out);
        if (runs[i].kind == TEXT)
            assert_visible_output(what, out);
        else
            assert_json(what, out, runs[i].kind == NDJSON);
        if (runs[i].shows)
            assert_non_null(strstr(out, runs[i].shows));
        free(out);
    }
    char trace_path[700];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", root);
    char *trace[] = {"trace", dir, "-o", trace_path, NULL};
    assert_int_equal(tu_status(tsa_cmd_trace, trace), 0);
    char *out = tu_read_file(trace_path, NULL);
    assert_json("trace", out, 0);
    free(out);
    tu_rmtree(root);
    free(root);
}

/* Column cuts ("%-16.16s" for hosts, "%.60s" for kernel names) cut
 * bytes, and a cut inside a UTF-8 character made the report invalid UTF-8
 * (found by the pipeline fuzzer). */
static void test_cut_columns_stay_utf8(void **state)
{
    (void)state;
    assert_string_equal(tsr_fit("a\xc3\xa9\xc3\xa9", 4), "a\xc3\xa9");
    assert_string_equal(tsr_fit("abc", 3), "abc");
    char *dir = tu_tempdir("hostile-cut");
    for (int rank = 0; rank < 2; rank++) {
        char path[700];
        /* host "a" + 9 x "é": 19 bytes, the 16-byte cut falls inside one */
        snprintf(path, sizeof path, "%s/a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                 "\xc3\xa9\xc3\xa9\xc3\xa9%d_%d.1.pt.trace.json", dir, rank, KGEN_PID(rank));
        kgen_opts k = {.rank = rank, .world_size = 2, .steps = 4, .base_ns = 1700000000000000000LL};
        assert_int_equal(kgen_write(path, &k), 0);
    }
    char *out;
    char *report[] = {"report", dir, "--color", "never", NULL};
    tu_capture(tsa_cmd_report, 4, report, &out);
    assert_non_null(strstr(out, " a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 "));
    assert_visible_output("report", out);
    free(out);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_visible_text),
        cmocka_unit_test(test_every_output_is_visible),
        cmocka_unit_test(test_cut_columns_stay_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
