/* Loading a job directory that holds files which are not dumps (issue 13
 * item 3): unreadable, empty or garbage *.tsd files are problems of their
 * own and never form a run that out-votes or replaces the real ranks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "gen_job.h"
#include "load/job_load.h"
#include "gen_tmpdir.h"

static void put(const char *dir, const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static size_t problems_with(const tsa_job *job, const char *needle)
{
    size_t n = 0;
    for (size_t i = 0; i < job->n_problems; i++)
        n += strstr(job->problems[i].message, needle) != NULL;
    return n;
}

/* Two good ranks and three non-dumps (the old code grouped the three under
 * an empty run id, which won the vote and failed the whole job). */
static void test_non_dumps_never_form_a_run(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/job", tmpdir);
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.steps = 4;
    o.dir = dir;
    gen_truth t;
    assert_int_equal(gen_job(&o, &t), 0);
    put(dir, "empty.tsd", "");
    put(dir, "garbage.tsd", "this is not a dump at all, just some text");
    put(dir, "cut.tsd", "\x89TSCOPE");   /* the magic, then nothing */

    tsa_load_options lo = {.quiet = 1};
    tsa_job *job = NULL;
    char err[512] = "";
    assert_int_equal(tsa_job_load_ex(dir, &lo, &job, err, sizeof err), 0);
    assert_int_equal(job->n_ranks, 2);
    assert_string_equal(job->run_id, "gen-run");
    assert_int_equal(problems_with(job, "not a tscope dump"), 3);
    assert_int_equal(problems_with(job, "not a tscope dump (empty file)"), 1);
    assert_int_equal(problems_with(job, "not a tscope dump (no tscope dump header)"), 2);
    tsa_job_free(job);

    /* only non-dumps: nothing loadable, and the reason says why */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad", tmpdir);
    o.ranks = 0;
    assert_int_equal(mkdir(bad, 0777), 0);
    put(bad, "a.tsd", "garbage");
    put(bad, "b.tsd", "");
    assert_int_equal(tsa_job_load_ex(bad, &lo, &job, err, sizeof err), -1);
    assert_null(job);
    assert_non_null(strstr(err, "no readable dump (not a tscope dump"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_non_dumps_never_form_a_run),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
