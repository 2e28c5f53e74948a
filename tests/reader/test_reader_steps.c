/* The reader on black-box summary files: STEP_EXTRA records (format 1.4)
 * handed over beside the summaries of the STEPS chunk after them, matched
 * by step number, with exact values; records whose step that chunk does
 * not have are ignored and counted; a 1.3 file (summaries only) reads
 * without problems; a STEP_EXTRA chunk that is not a whole number of
 * records, or cut short by the file's end, is one problem naming the file
 * and offset and the summaries still read; a follower that has an extra
 * chunk but not yet the summaries after it waits without a problem. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dump_builder.h"
#include "reader/dump_reader.h"

#define MAX 64

typedef struct seen {
    tsc_step_summary s[MAX];
    tsc_step_extra x[MAX];
    size_t n;
    int problems;
    uint64_t problem_off;
    char problem[256], path[256];
} seen;

static void on_steps(void *ctx, const tsr_file *f, const tsc_step_summary *s,
                     const tsc_step_extra *x, size_t n)
{
    (void)f;
    seen *c = ctx;
    for (size_t i = 0; i < n && c->n < MAX; i++, c->n++) {
        c->s[c->n] = s[i];
        c->x[c->n] = x[i];
    }
}

static void on_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    seen *c = ctx;
    if (!c->problems++) {
        c->problem_off = off;
        snprintf(c->problem, sizeof c->problem, "%s", msg);
        snprintf(c->path, sizeof c->path, "%s", path);
    }
}

static const tsr_callbacks cb = {.on_steps = on_steps, .on_problem = on_problem};

static tsc_step_summary summary(uint64_t step)
{
    return (tsc_step_summary){.step = step, .opener_seq = 7 + step, .start_ns = 1000 * step,
                              .end_ns = 1000 * step + 900, .nccl_calls = 2};
}

static tsc_step_extra extra(uint64_t step)
{
    return (tsc_step_extra){.step = step, .data_stall_ns = 100 + step, .gemm_flops = 1000000 * step,
                            .gemm_peak_ns = 10 + step, .h2d_copies = 1, .gemm_no_peak = 0,
                            .flags = TSC_STEP_X_STALL | TSC_STEP_X_GEMM | TSC_STEP_X_PEAK};
}

/* A summary file: header (minor), META mode=blackbox. */
static void start(tb_buf *b, uint16_t minor)
{
    tb_header(b, 1, 2);
    if (minor != TSC_FORMAT_MINOR) {
        memcpy(b->data + offsetof(tsc_file_header, version_minor), &minor, sizeof minor);
        tb_fix_header_crc(b);
    }
    char meta[256];
    size_t ml = tb_meta(meta, sizeof meta, (const char *const[]){"mode", "blackbox", NULL});
    tb_chunk(b, TSC_CHUNK_META, 0, 0, meta, (uint32_t)ml);
}

static void expect_extra(const tsc_step_extra *got, const tsc_step_extra *want)
{
    assert_int_equal(got->step, want->step);
    assert_int_equal(got->data_stall_ns, want->data_stall_ns);
    assert_int_equal(got->gemm_flops, want->gemm_flops);
    assert_int_equal(got->gemm_peak_ns, want->gemm_peak_ns);
    assert_int_equal(got->h2d_copies, want->h2d_copies);
    assert_int_equal(got->gemm_no_peak, want->gemm_no_peak);
    assert_int_equal(got->flags, want->flags);
}

/* Extras of steps 3, 2 (out of order: sorted) and 9 before summaries of
 * steps 1-4: steps 2 and 3 get theirs, 1 and 4 none, 9 is counted; an
 * extra chunk followed by END (no summaries) is counted too. */
static void test_extras_pair_by_step(void **state)
{
    (void)state;
    tb_buf b = {0};
    start(&b, TSC_FORMAT_MINOR);
    tsc_step_extra x[3] = {extra(3), extra(2), extra(9)};
    x[0].gemm_no_peak = 3;
    x[0].flags = TSC_STEP_X_STALL | TSC_STEP_X_GEMM;
    tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, 1, x, sizeof x);
    tsc_step_summary s[4] = {summary(1), summary(2), summary(3), summary(4)};
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, 2, s, sizeof s);
    tsc_step_extra late = extra(5);
    tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, 3, &late, sizeof late);
    char end[64];
    size_t el = tb_meta(end, sizeof end, (const char *const[]){"end_reason", "exit", NULL});
    tb_chunk(&b, TSC_CHUNK_END, 0, 4, end, (uint32_t)el);
    seen c = {0};
    tsr_stats st;
    assert_int_equal(tsr_read_buffer(b.data, b.len, "r0.tsd", &cb, &c, &st), TSR_OK);
    assert_int_equal(c.problems, 0);
    assert_int_equal(c.n, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(c.s[i].step, i + 1);
        assert_int_equal(c.s[i].opener_seq, 8 + i);
    }
    tsc_step_extra none1 = {.step = 1}, none4 = {.step = 4};
    expect_extra(&c.x[0], &none1);
    expect_extra(&c.x[1], &x[1]);
    expect_extra(&c.x[2], &x[0]);
    expect_extra(&c.x[3], &none4);
    assert_int_equal(st.step_chunks, 1);
    assert_int_equal(st.steps, 4);
    assert_int_equal(st.step_extra_chunks, 2);
    assert_int_equal(st.step_extras, 4);
    assert_int_equal(st.step_extras_orphaned, 2);
    assert_string_equal(tsr_chunk_type_name(TSC_CHUNK_STEP_EXTRA), "STEP_EXTRA");
    tb_free(&b);
}

/* A 1.3 summary file: STEPS chunks only.  Every summary, no extra, no
 * problem. */
static void test_minor_3_summaries_only(void **state)
{
    (void)state;
    tb_buf b = {0};
    start(&b, 3);
    tsc_step_summary s[3] = {summary(0), summary(1), summary(2)};
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, 1, s, sizeof s);
    seen c = {0};
    tsr_stats st;
    assert_int_equal(tsr_read_buffer(b.data, b.len, "old.tsd", &cb, &c, &st), TSR_OK);
    assert_int_equal(st.version_minor, 3);
    assert_int_equal(c.problems, 0);
    assert_int_equal(c.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(c.x[i].step, i);
        assert_int_equal(c.x[i].flags, 0);
        assert_int_equal(c.x[i].data_stall_ns, 0);
    }
    assert_int_equal(st.step_extras, 0);
    assert_int_equal(st.step_extras_orphaned, 0);
    tb_free(&b);
}

/* An extra chunk of 2 records and 17 bytes (its CRC right): one problem
 * at its payload's offset naming the size; the 2 records and every
 * summary read. */
static void test_extra_chunk_not_whole(void **state)
{
    (void)state;
    tb_buf b = {0};
    start(&b, TSC_FORMAT_MINOR);
    uint8_t payload[2 * sizeof(tsc_step_extra) + 17];
    tsc_step_extra x[2] = {extra(2), extra(3)};
    memcpy(payload, x, sizeof x);
    memset(payload + sizeof x, 0xee, 17);
    size_t off = tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, 1, payload, sizeof payload);
    tsc_step_summary s[3] = {summary(2), summary(3), summary(4)};
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, 2, s, sizeof s);
    seen c = {0};
    tsr_stats st;
    assert_int_equal(tsr_read_buffer(b.data, b.len, "r1.tsd", &cb, &c, &st), TSR_PROBLEMS);
    assert_int_equal(c.problems, 1);
    assert_string_equal(c.path, "r1.tsd");
    assert_int_equal(c.problem_off, off + sizeof(tsc_chunk_header));
    assert_non_null(strstr(c.problem, "STEP_EXTRA chunk of 97 bytes is not a whole number of "
                                      "40-byte records"));
    assert_int_equal(c.n, 3);
    expect_extra(&c.x[0], &x[0]);
    expect_extra(&c.x[1], &x[1]);
    assert_int_equal(c.x[2].flags, 0);
    assert_int_equal(st.step_extras, 2);
    assert_int_equal(st.step_extras_orphaned, 0);
    tb_free(&b);
}

/* A file cut inside an extra chunk (the process died while writing it):
 * one problem at the chunk's offset; the summaries before it read, with
 * their extras. */
static void test_extra_chunk_cut_short(void **state)
{
    (void)state;
    tb_buf b = {0};
    start(&b, TSC_FORMAT_MINOR);
    tsc_step_extra x0 = extra(2), x1[2] = {extra(3), extra(4)};
    tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, 1, &x0, sizeof x0);
    tsc_step_summary s0 = summary(2);
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, 2, &s0, sizeof s0);
    size_t off = tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, 3, x1, sizeof x1);
    b.len = off + sizeof(tsc_chunk_header) + 50;
    seen c = {0};
    tsr_stats st;
    assert_int_equal(tsr_read_buffer(b.data, b.len, "r2.tsd", &cb, &c, &st), TSR_PROBLEMS);
    assert_int_equal(c.problems, 1);
    assert_int_equal(c.problem_off, off);
    assert_non_null(strstr(c.problem, "truncated STEP_EXTRA chunk seq 3"));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.s[0].step, 2);
    expect_extra(&c.x[0], &x0);
    tb_free(&b);
}

static void append_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* Following a growing file: the extra chunk is there, its summaries'
 * chunk half written.  Nothing is handed over and nothing counted or
 * reported until the rest arrives; then the summaries come with their
 * extras. */
static void test_follow_extras_wait_for_summaries(void **state)
{
    (void)state;
    tb_buf b = {0};
    start(&b, TSC_FORMAT_MINOR);
    tsc_step_extra x[2] = {extra(5), extra(6)};
    tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, 1, x, sizeof x);
    size_t off = tb_chunk(&b, TSC_CHUNK_STEPS, 0, 2,
                          (tsc_step_summary[2]){summary(5), summary(6)},
                          2 * sizeof(tsc_step_summary));
    size_t cut = off + sizeof(tsc_chunk_header) + 30;
    tb_buf first = {.data = b.data, .len = cut};
    char *path = tb_write_temp(&first, "follow_x");
    seen c = {0};
    int status;
    tsr_file *f = tsr_follow_open(path, &cb, &c, &status);
    assert_non_null(f);
    assert_int_equal(tsr_follow_read(f), TSR_OK);
    assert_int_equal(c.n, 0);
    assert_int_equal(c.problems, 0);
    assert_int_equal(tsr_file_stats(f)->step_extras, 2);
    assert_int_equal(tsr_file_stats(f)->step_extras_orphaned, 0);
    append_file(path, b.data + cut, b.len - cut);
    assert_int_equal(tsr_follow_read(f), TSR_OK);
    assert_int_equal(c.n, 2);
    expect_extra(&c.x[0], &x[0]);
    expect_extra(&c.x[1], &x[1]);
    assert_int_equal(tsr_file_stats(f)->step_extras_orphaned, 0);
    assert_int_equal(c.problems, 0);
    tsr_close(f);
    unlink(path);
    free(path);
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extras_pair_by_step),
        cmocka_unit_test(test_minor_3_summaries_only),
        cmocka_unit_test(test_extra_chunk_not_whole),
        cmocka_unit_test(test_extra_chunk_cut_short),
        cmocka_unit_test(test_follow_extras_wait_for_summaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
