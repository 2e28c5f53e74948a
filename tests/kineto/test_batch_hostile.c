/* Batch against hostile job directories (issue 13): planted symlinks and
 * FIFOs at the summary file's names, fixed permissions served stale from
 * the cache, one directory under several spellings, and CSV cells a
 * spreadsheet would run as formulas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch.h"
#include "test_util.h"

static char *path_in(const char *dir, const char *name)
{
    char *p;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* Item 1: the old writer opened "<summary>.tmp.<pid>" with O_CREAT|O_TRUNC
 * and followed a symlink planted there onto any file the user can write. */
static void test_summary_temp_follows_no_link(void **state)
{
    (void)state;
    char *job = tu_tempdir("hostile-job"), *elsewhere = tu_tempdir("hostile-victim");
    char *victim = path_in(elsewhere, "precious");
    assert_int_equal(tu_write_file(victim, "keep me", 7), 0);
    char planted[600];
    snprintf(planted, sizeof planted, "%s/%s.tmp.%d", job, TSA_BATCH_SUMMARY_FILE, (int)getpid());
    assert_int_equal(symlink(victim, planted), 0);

    tsa_batch_row row;
    tsa_batch_row_init(&row, job);
    row.ranks = 4;
    assert_int_equal(tsa_batch_cache_store(job, "fp\n", &row), 0);
    size_t len;
    char *kept = tu_read_file(victim, &len);
    assert_non_null(kept);
    assert_string_equal(kept, "keep me");
    free(kept);
    /* the summary is a regular file of its own and reads back */
    char *summary = path_in(job, TSA_BATCH_SUMMARY_FILE);
    struct stat st;
    assert_int_equal(lstat(summary, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    tsa_batch_row back;
    assert_int_equal(tsa_batch_cache_load(job, "fp\n", &back), 1);
    assert_int_equal(back.ranks, 4);
    tsa_batch_row_free(&back);
    tsa_batch_row_free(&row);
    free(summary);
    free(victim);
    tu_rmtree(job);
    tu_rmtree(elsewhere);
    free(job);
    free(elsewhere);
}

/* Item 2: a FIFO at the summary's name blocked the batch's parent in
 * open() forever.  The alarm turns the old hang into a failure. */
static void test_summary_fifo_does_not_block(void **state)
{
    (void)state;
    char *job = tu_tempdir("hostile-fifo");
    char *summary = path_in(job, TSA_BATCH_SUMMARY_FILE);
    assert_int_equal(mkfifo(summary, 0644), 0);
    tsa_batch_row row;
    tsa_batch_row_init(&row, job);
    alarm(10);
    assert_int_equal(tsa_batch_cache_load(job, "fp\n", &row), 0);
    alarm(0);
    /* nor is a summary reached through a symlink trusted */
    unlink(summary);
    char *other = tu_tempdir("hostile-fifo-other");
    tsa_batch_row good;
    tsa_batch_row_init(&good, other);
    assert_int_equal(tsa_batch_cache_store(other, "fp\n", &good), 0);
    char *real = path_in(other, TSA_BATCH_SUMMARY_FILE);
    assert_int_equal(symlink(real, summary), 0);
    assert_int_equal(tsa_batch_cache_load(job, "fp\n", &row), 0);
    tsa_batch_row_free(&good);
    tsa_batch_row_free(&row);
    free(real);
    free(summary);
    tu_rmtree(other);
    tu_rmtree(job);
    free(other);
    free(job);
}

/* Item 7: chmod changes neither size nor mtime; the fingerprint must see
 * it, or a job whose unreadable dump was fixed is served from the cache. */
static void test_fingerprint_sees_permissions(void **state)
{
    (void)state;
    char *job = tu_tempdir("hostile-perm");
    char *dump = path_in(job, "tscope_r0_h_1_1.tsd");
    assert_int_equal(tu_write_file(dump, "x", 1), 0);
    struct stat st;
    assert_int_equal(stat(dump, &st), 0);
    char *before = tsa_batch_fingerprint(job);
    assert_int_equal(chmod(dump, 0), 0);
    struct timespec keep[2] = {st.st_atim, st.st_mtim};
    assert_int_equal(utimensat(AT_FDCWD, dump, keep, 0), 0);
    char *after = tsa_batch_fingerprint(job);
    assert_non_null(before);
    assert_non_null(after);
    assert_string_not_equal(before, after);
    free(before);
    free(after);
    free(dump);
    tu_rmtree(job);
    free(job);
}

/* Item 8: "base", "base/", "base/." and a symlink to it are one job. */
static void test_one_job_under_many_spellings(void **state)
{
    (void)state;
    char *root = tu_tempdir("hostile-spell");
    char *base = path_in(root, "base");
    assert_int_equal(mkdir(base, 0777), 0);
    char *dump = path_in(base, "tscope_r0_h_1_1.tsd");
    assert_int_equal(tu_write_file(dump, "x", 1), 0);
    char *link = path_in(root, "alias");
    assert_int_equal(symlink(base, link), 0);
    char slash[600], dot[600];
    snprintf(slash, sizeof slash, "%s/", base);
    snprintf(dot, sizeof dot, "%s/.", base);
    char *roots[] = {base, slash, dot, link};
    char **jobs;
    size_t n;
    assert_int_equal(tsa_batch_find_jobs(roots, 3, &jobs, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(jobs[0], base);
    free(jobs[0]);
    free(jobs);
    assert_int_equal(tsa_batch_find_jobs(roots, 4, &jobs, &n), 0);
    assert_int_equal(n, 1);
    free(jobs[0]);
    free(jobs);
    free(link);
    free(dump);
    free(base);
    tu_rmtree(root);
    free(root);
}

/* Item 11: text cells starting = + - @ (tab, CR) are quoted behind an
 * apostrophe; numbers are left as they are. */
static void test_csv_formula_cells_defused(void **state)
{
    (void)state;
    tsa_batch_row r;
    tsa_batch_row_init(&r, "=HYPERLINK(\"http://x\")");
    r.straggler_host = strdup("@SUM(A1)");
    r.run_id = strdup("+1");
    r.top_recoverable = strdup("-2");
    r.ranks = 3;
    tsa_batch_row_fail(&r, "failed", "\tcmd");
    char *buf;
    size_t len;
    FILE *mem = open_memstream(&buf, &len);
    tsa_batch_print_csv(mem, &r, 1);
    fclose(mem);
    const char *row = strchr(buf, '\n') + 1;
    assert_true(!strncmp(row, "\"'=HYPERLINK(\"\"http://x\"\")\",\"'+1\",failed,3,", 43));
    assert_non_null(strstr(row, ",\"'-2\","));
    assert_non_null(strstr(row, ",\"'@SUM(A1)\","));
    /* then the 4 empty verdict columns, the empty straggler cause, slow
     * host and its cause */
    assert_non_null(strstr(row, ",\"'\tcmd\",,,,,,,\n"));
    free(buf);
    tsa_batch_row_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_temp_follows_no_link),
        cmocka_unit_test(test_summary_fifo_does_not_block),
        cmocka_unit_test(test_fingerprint_sees_permissions),
        cmocka_unit_test(test_one_job_under_many_spellings),
        cmocka_unit_test(test_csv_formula_cells_defused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
