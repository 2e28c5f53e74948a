/* The black-box views of the step extras (format 1.4), on hand-made
 * summary files with exact values: `tscope-report blackbox` (text and
 * JSON) and `tscope-report live` (the follow reader and the job series).
 *   - summaries only (a 1.3 file, or a job without CUPTI and cuBLAS): the
 *     data stall and MFU are "not recorded" (text), null (JSON), absent
 *     (live), never 0;
 *   - extras of some ranks and steps: each row sums only the ranks that
 *     measured a figure (the data stall's largest and its rank, the
 *     lowest on a tie; an MFU from GEMM time at peak only where every
 *     GEMM had a peak), and live gives the same per step and over the
 *     window;
 *   - a damaged extra chunk and an extra without a summary: the file is
 *     counted as having problems, every summary is read, the orphan is a
 *     warning. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "dump_builder.h"
#include "gen_tmpdir.h"
#include "load/bb_follow.h"
#include "load/bb_load.h"
#include "passes/bb_live.h"
#include "passes/bb_timeline.h"
#include "report/bb_text.h"
#include "report/live_prom.h"

#define ALL_X (TSC_STEP_X_STALL | TSC_STEP_X_GEMM | TSC_STEP_X_PEAK)

/* Rank r's step s: 10 ms + (r + 1) * s ns. */
static uint64_t dur_of(int r, uint64_t s) { return 10000000ull + (uint64_t)(r + 1) * s; }

static tsc_step_summary summary(int r, uint64_t s)
{
    uint64_t start = 1000000000ull + s * 20000000ull;
    return (tsc_step_summary){.step = s, .opener_seq = s, .start_ns = start,
                              .end_ns = start + dur_of(r, s), .nccl_ns = 1000};
}

typedef struct rank_file {
    int rank;
    uint16_t minor;
    const tsc_step_extra *x; /* written before the summaries of steps 0..n-1 */
    size_t nx, n;
    const void *raw_extra;   /* or this payload instead */
    size_t raw_len;
    const tsc_step_extra *late; /* one more extra chunk after the summaries */
} rank_file;

static void write_rank(const rank_file *rf)
{
    tb_buf b = {0};
    tb_header(&b, 1, 100 + (uint32_t)rf->rank);
    if (rf->minor != TSC_FORMAT_MINOR) {
        memcpy(b.data + offsetof(tsc_file_header, version_minor), &rf->minor, sizeof rf->minor);
        tb_fix_header_crc(&b);
    }
    char meta[256], rank[16];
    snprintf(rank, sizeof rank, "%d", rf->rank);
    size_t ml = tb_meta(meta, sizeof meta,
                        (const char *const[]){"mode", "blackbox", "rank", rank, "world_size", "2",
                                              "run_id", "bbx", NULL});
    uint32_t seq = 0;
    tb_chunk(&b, TSC_CHUNK_META, 0, seq++, meta, (uint32_t)ml);
    if (rf->nx)
        tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, seq++, rf->x, (uint32_t)(rf->nx * sizeof *rf->x));
    if (rf->raw_len)
        tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, seq++, rf->raw_extra, (uint32_t)rf->raw_len);
    tsc_step_summary s[16];
    for (size_t i = 0; i < rf->n; i++)
        s[i] = summary(rf->rank, i);
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, seq++, s, (uint32_t)(rf->n * sizeof s[0]));
    if (rf->late)
        tb_chunk(&b, TSC_CHUNK_STEP_EXTRA, 0, seq++, rf->late, sizeof *rf->late);
    char path[320];
    snprintf(path, sizeof path, "%s/tscope_r%d_h_%d_1.tsd", tmpdir, rf->rank, 100 + rf->rank);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    fclose(f);
    tb_free(&b);
}

typedef struct views {
    tsa_bb_folder f;
    tsa_bb_timeline t;
    char *text, *live;
    cJSON *json;
} views;

static void on_steps(void *ctx, const tsa_bb_source *src, const tsc_step_summary *s,
                     const tsc_step_extra *x, size_t n)
{
    tsa_live *L = ctx;
    tsa_live_add(L, (size_t)tsa_live_rank_index(L, src->rank), s, x, n);
}

static void on_reset(void *ctx) { tsa_live_reset(ctx); }

/* The folder as `tscope-report blackbox --every` (text, JSON) and `live
 * --once` show it. */
static views look(void)
{
    views v;
    char err[256];
    assert_int_equal(tsa_bb_load(tmpdir, &v.f, err, sizeof err), 0);
    assert_int_equal(tsa_bb_timeline_build(&v.f, 1, &v.t), 0);
    size_t len;
    FILE *m = open_memstream(&v.text, &len);
    tsa_bb_print(m, tmpdir, &v.f, &v.t);
    fclose(m);
    char *js;
    m = open_memstream(&js, &len);
    assert_int_equal(tsa_bb_print_json(m, tmpdir, &v.f, &v.t), 0);
    fclose(m);
    v.json = cJSON_Parse(js);
    assert_non_null(v.json);
    free(js);
    tsa_live L;
    tsa_live_opts o;
    tsa_live_default_opts(&o);
    assert_int_equal(tsa_live_init(&L, &o), 0);
    tsa_bb_follow fw;
    assert_int_equal(tsa_bb_follow_init(&fw, tmpdir), 0);
    assert_true(tsa_bb_follow_poll(&fw, on_steps, on_reset, &L, err, sizeof err) >= 0);
    tsa_live_update(&L);
    m = open_memstream(&v.live, &len);
    tsa_live_write_prom(m, &L, "bbx", 2);
    fclose(m);
    tsa_bb_follow_free(&fw);
    tsa_live_free(&L);
    return v;
}

static void views_free(views *v)
{
    tsa_bb_timeline_free(&v->t);
    tsa_bb_free(&v->f);
    free(v->text);
    free(v->live);
    cJSON_Delete(v->json);
}

static cJSON *row_of(const views *v, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(v->json, "timeline"), i);
}

static double num(cJSON *o, const char *key)
{
    cJSON *x = cJSON_GetObjectItem(o, key);
    if (!cJSON_IsNumber(x))
        fail_msg("'%s' is not a number", key);
    return cJSON_GetNumberValue(x);
}

static int is_null(cJSON *o, const char *key) { return cJSON_IsNull(cJSON_GetObjectItem(o, key)); }

/* The value of series `name{...}` in Prometheus text, NaN when absent. */
static double prom(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, name, len) && l[len] == '{')
            return strtod(strchr(l, '}') + 1, NULL);
    return NAN;
}

/* Two ranks, a 1.3 file and a 1.4 file without extras: every summary,
 * no figure made up. */
static void test_summaries_only_not_recorded(void **state)
{
    (void)state;
    write_rank(&(rank_file){.rank = 0, .minor = 3, .n = 5});
    write_rank(&(rank_file){.rank = 1, .minor = TSC_FORMAT_MINOR, .n = 5});
    views v = look();
    assert_int_equal(v.f.problems, 0);
    assert_int_equal(v.t.n_rows, 5);
    for (int i = 0; i < 5; i++) {
        cJSON *row = row_of(&v, i);
        assert_int_equal(num(row, "stall_rank_steps"), 0);
        assert_int_equal(num(row, "mfu_rank_steps"), 0);
        assert_true(is_null(row, "data_stall_ns") && is_null(row, "max_data_stall_ns") &&
                    is_null(row, "max_data_stall_rank") && is_null(row, "gemm_peak_ns") &&
                    is_null(row, "mfu"));
    }
    assert_non_null(strstr(v.text, "data stall: not recorded"));
    assert_non_null(strstr(v.text, "MFU estimate: not recorded"));
    assert_null(strstr(v.text, "max stall "));
    assert_int_equal(prom(v.live, "tscope_job_complete_steps_total"), 5);
    assert_true(isnan(prom(v.live, "tscope_job_data_stall_seconds_total")));
    assert_true(isnan(prom(v.live, "tscope_job_data_stall_ratio")));
    assert_true(isnan(prom(v.live, "tscope_job_last_step_data_stall_max_seconds")));
    assert_true(isnan(prom(v.live, "tscope_job_mfu_ratio")));
    views_free(&v);
}

/* Rank 0 measures everything in steps 2-4; rank 1 a data stall in steps
 * 2 and 3 and GEMMs without a peak in step 3, nothing in step 4. */
static void test_rows_and_live_from_extras(void **state)
{
    (void)state;
    tsc_step_extra x0[3], x1[2];
    for (uint64_t s = 2; s <= 4; s++)
        x0[s - 2] = (tsc_step_extra){.step = s, .data_stall_ns = 1000 * s, .gemm_flops = 7,
                                     .gemm_peak_ns = 100 * s, .h2d_copies = 1, .flags = ALL_X};
    x1[0] = (tsc_step_extra){.step = 2, .data_stall_ns = 2000, .flags = TSC_STEP_X_STALL};
    x1[1] = (tsc_step_extra){.step = 3, .data_stall_ns = 5000, .gemm_flops = 9,
                             .gemm_peak_ns = 999, .gemm_no_peak = 1,
                             .flags = TSC_STEP_X_STALL | TSC_STEP_X_GEMM};
    write_rank(&(rank_file){.rank = 0, .minor = TSC_FORMAT_MINOR, .x = x0, .nx = 3, .n = 5});
    write_rank(&(rank_file){.rank = 1, .minor = TSC_FORMAT_MINOR, .x = x1, .nx = 2, .n = 5});
    views v = look();
    assert_int_equal(v.f.problems, 0);
    assert_int_equal(v.f.orphan_extras, 0);
    for (int i = 0; i < 2; i++)
        assert_true(is_null(row_of(&v, i), "data_stall_ns") && is_null(row_of(&v, i), "mfu"));
    /* step 2: a tie at 2000 ns (rank 0, the lower, named) */
    static const struct {
        uint64_t stall, rank_steps, max, max_rank, peak;
    } want[3] = {{4000, 2, 2000, 0, 200}, {8000, 2, 5000, 1, 300}, {4000, 1, 4000, 0, 400}};
    for (int s = 2; s <= 4; s++) {
        cJSON *row = row_of(&v, s);
        assert_int_equal(num(row, "stall_rank_steps"), want[s - 2].rank_steps);
        assert_int_equal(num(row, "data_stall_ns"), want[s - 2].stall);
        assert_int_equal(num(row, "max_data_stall_ns"), want[s - 2].max);
        assert_int_equal(num(row, "max_data_stall_rank"), want[s - 2].max_rank);
        assert_int_equal(num(row, "max_data_stall_step"), s);
        assert_int_equal(num(row, "mfu_rank_steps"), 1); /* rank 1: no peak, or no GEMMs */
        assert_int_equal(num(row, "gemm_peak_ns"), want[s - 2].peak);
        assert_int_equal(num(row, "mfu_step_ns"), dur_of(0, (uint64_t)s));
        assert_true(num(row, "mfu") == (double)want[s - 2].peak / (double)dur_of(0, (uint64_t)s));
    }
    assert_non_null(strstr(v.text, "max stall"));
    assert_null(strstr(v.text, "not recorded ("));
    /* the text row of step 3: 4 us a rank-step, 5 us on rank 1, 0.003% */
    assert_non_null(strstr(v.text, "    0.004 ms   0.005 ms r1        0.003%"));
    /* live: every step complete; the last (4) measured by rank 0 only */
    double stall_dur = (double)(dur_of(0, 2) + dur_of(0, 3) + dur_of(0, 4) + dur_of(1, 2) +
                                dur_of(1, 3));
    double mfu0 = (double)(200 + 300 + 400) / (double)(dur_of(0, 2) + dur_of(0, 3) + dur_of(0, 4));
    assert_true(prom(v.live, "tscope_job_data_stall_seconds_total") == 16000 / 1e9);
    assert_true(prom(v.live, "tscope_job_data_stall_ratio") == 16000 / stall_dur);
    assert_true(prom(v.live, "tscope_job_last_step_data_stall_median_seconds") == 4000 / 1e9);
    assert_true(prom(v.live, "tscope_job_last_step_data_stall_max_seconds") == 4000 / 1e9);
    assert_true(prom(v.live, "tscope_job_last_step_data_stall_max_rank") == 0);
    assert_true(prom(v.live, "tscope_job_mfu_ratio") == mfu0);
    views_free(&v);
}

/* Rank 0's first extra chunk is 1 record and 5 bytes, and an extra of
 * step 7 follows its summaries (no summary of step 7 comes): one file with
 * problems, all 3 summaries read (step 0 with its extra), the orphan a
 * warning. */
static void test_damaged_extra_and_orphan(void **state)
{
    (void)state;
    uint8_t raw[sizeof(tsc_step_extra) + 5] = {0};
    tsc_step_extra x = {.step = 0, .data_stall_ns = 42, .flags = TSC_STEP_X_STALL},
                   late = {.step = 7, .data_stall_ns = 1, .flags = TSC_STEP_X_STALL};
    memcpy(raw, &x, sizeof x);
    write_rank(&(rank_file){.rank = 0, .minor = TSC_FORMAT_MINOR, .raw_extra = raw,
                            .raw_len = sizeof raw, .n = 3, .late = &late});
    write_rank(&(rank_file){.rank = 1, .minor = TSC_FORMAT_MINOR, .n = 3});
    views v = look();
    assert_int_equal(v.f.problems, 1);
    assert_int_equal(v.f.orphan_extras, 1);
    assert_int_equal(v.f.ranks[0].n_steps, 3);
    assert_int_equal(v.f.ranks[0].extras[0].data_stall_ns, 42);
    assert_int_equal(v.t.n_steps, 3);
    assert_int_equal(num(row_of(&v, 0), "data_stall_ns"), 42);
    int orphan = 0, unreadable = 0;
    cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(v.json, "warnings"))
    {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(w, "kind"));
        orphan += !strcmp(kind, "extra_without_summary") && num(w, "records") == 1;
        unreadable += !strcmp(kind, "unreadable") && num(w, "files") == 1;
    }
    assert_int_equal(orphan, 1);
    assert_int_equal(unreadable, 1);
    assert_non_null(strstr(v.text, "warning: 1 step extra records have no step summary"));
    views_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_summaries_only_not_recorded, tmpdir_setup,
                                        tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_rows_and_live_from_extras, tmpdir_setup,
                                        tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_extra_and_orphan, tmpdir_setup,
                                        tmpdir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
