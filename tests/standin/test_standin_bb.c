/* Black-box mode's GPU figures on the CUDA stand-in, for real under the
 * preload (2 ranks, 60 steps, CUPTI and cuBLAS records): each rank's
 * metrics file and its summary file against what the job did (its truth
 * file), and against each other.
 *   - tscope_gemm_flops_total: the FLOPs of the GEMMs of the summarized
 *     steps (steps 0 and 1 carry no sums), exactly;
 *   - tscope_gemm_peak_seconds_total: those GEMMs at the H100's fp32 peak
 *     (67 TFLOP/s, the datasheet), exactly as rounded per call;
 *   - tscope_mfu_ratio: between the smallest and largest per-step ratio;
 *   - tscope_data_stall_seconds_total: with --load-us 2000 every rank
 *     sleeps 2 ms with the GPU idle before each batch copy, so each step's
 *     stall is at least 2 ms and at most the step; without it, the stall
 *     is a small part of that.
 *   - the step extras on disk (STEP_EXTRA chunks, format 1.4): for steps
 *     2-59 exactly the truth's FLOPs and their time at peak, one
 *     host-to-device copy, and the data stall recomputed here from a
 *     capture window of steps 1-59 (the rank's own CUPTI records, asked
 *     for by a trigger file left before the job); steps 0 and 1 none;
 *     summed, exactly the metrics above (which the same per-step figures
 *     fed on the writer thread);
 *   - `tscope-report blackbox --json --every`: every step's data stall
 *     (sum, largest and its rank) and MFU estimate (GEMM time at peak and
 *     step time exactly, their ratio to the 15 digits cJSON prints) from
 *     those records; null for steps 0 and 1;
 *   - `tscope-report live --once`: the job's data stall (total, the last
 *     step's median, largest and its rank, the window's ratio) and MFU
 *     estimate (the mean over ranks), exactly; promtool passes on it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "reader/dump_reader.h"
#include "standin_run.h"
#include "tb_blackbox.h"

#define STEPS 60
#define GEMMS 4
#define LOAD_US 2000
#define ALL_X (TSC_STEP_X_STALL | TSC_STEP_X_GEMM | TSC_STEP_X_PEAK)

typedef struct figures {
    double stall_per_step;   /* over the summarized steps 2.. */
    double step_mean_s;
} figures;

static const char *const bb_env[] = {"TSCOPE_MODE=blackbox", "TSCOPE_FLUSH_MS=100",
                                     "TSCOPE_BB_K=1000", NULL};

/* A window of steps 1-59 on every rank, written at exit: the records the
 * data stalls are recomputed from. */
static void leave_trigger(const char *out)
{
    char path[4400];
    tbb_put_trigger(out, "all", "steps=1-59\nreason=ctl\n", path, sizeof path);
}

static void promtool_ok(const char *path)
{
    if (access("/usr/bin/promtool", X_OK) != 0)
        return;
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < '%s' >/dev/null", path);
    if (system(cmd) != 0)
        fail_msg("promtool check metrics fails on %s", path);
}

static uint64_t dur(const tsc_step_summary *s) { return s->end_ns - s->start_ns; }

/* ------------------------------------------- the capture window's records */

typedef struct gpu_rec {
    uint64_t start, end; /* on the GPU */
    int h2d;             /* a host-to-device copy */
} gpu_rec;

typedef struct window_recs {
    int rank;
    gpu_rec *r;
    size_t n, cap;
} window_recs;

static void win_meta(void *ctx, const tsr_file *f, const char *key, const char *value, int end)
{
    (void)f, (void)end;
    if (!strcmp(key, TSC_META_RANK))
        ((window_recs *)ctx)->rank = atoi(value);
}

static void win_event(void *ctx, const tsr_file *f, const tsr_event *e)
{
    (void)f;
    window_recs *w = ctx;
    gpu_rec g = {e->start_ns, e->end_ns, 0};
    tsc_desc_copy cp;
    if (e->kind == TSC_EV_KERNEL_LAUNCH) {
        tsr_launch_split sp;
        tsr_split_kernel_launch(e, &sp);
        g.start = sp.kernel_start;
        g.end = sp.kernel_end;
    } else if (e->kind == TSC_EV_MEMCPY) {
        g.h2d = tsr_decode_copy(e->desc, &cp) == 0 && cp.dir == TSC_COPY_H2D;
    } else if (e->kind != TSC_EV_KERNEL && e->kind != TSC_EV_MEMSET) {
        return;
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1024;
        w->r = realloc(w->r, w->cap * sizeof *w->r);
        assert_non_null(w->r);
    }
    w->r[w->n++] = g;
}

/* The GPU records of rank `rank`'s dump in dir. */
static window_recs window_of(const char *dir, int rank)
{
    char **paths = NULL;
    size_t n = 0;
    assert_int_equal(tsr_list_dumps(dir, &paths, &n), 0);
    window_recs w = {.rank = -1};
    for (size_t i = 0; i < n; i++) {
        free(w.r);
        w = (window_recs){.rank = -1};
        tsr_callbacks cb = {.on_meta = win_meta, .on_event = win_event};
        assert_int_equal(tsr_read_file(paths[i], &cb, &w, NULL), TSR_OK);
        if (w.rank == rank)
            break;
    }
    tsr_free_paths(paths, n);
    assert_int_equal(w.rank, rank);
    return w;
}

/* The data stall of the step (lo, hi] as docs/blackbox.md defines it: the
 * GPU idle before its first host-to-device copy c, from the step's start
 * or the latest end of GPU work (of the window, from `since`) that started
 * before c. */
static uint64_t stall_of(const window_recs *w, uint64_t since, uint64_t lo, uint64_t hi)
{
    uint64_t c = UINT64_MAX;
    for (size_t i = 0; i < w->n; i++)
        if (w->r[i].h2d && w->r[i].start > lo && w->r[i].start <= hi && w->r[i].start < c)
            c = w->r[i].start;
    if (c == UINT64_MAX)
        return 0;
    uint64_t from = lo;
    for (size_t i = 0; i < w->n; i++)
        if (w->r[i].start > since && w->r[i].start < c && w->r[i].end > from)
            from = w->r[i].end;
    return c > from ? c - from : 0;
}

/* ------------------------------------------------------ the extras on disk */

/* Rank k's extras: steps 0-1 none; 2-59 the truth's GEMMs and the stall
 * of the window's records; summed, the rank's metrics. */
static void expect_extras(const sj_run *r, const tbb_rank_steps *rs, int k, const char *metrics)
{
    assert_int_equal(rs->orphan_extras, 0);
    double per_gemm = (double)sj_truth(r, "job", k, "gemm_flops") / (STEPS * GEMMS);
    uint64_t peak_ns = (uint64_t)(GEMMS * round(per_gemm / 67e12 * 1e9));
    char win_dir[4400];
    snprintf(win_dir, sizeof win_dir, "%s/capture-all", r->out);
    window_recs w = window_of(win_dir, k);
    uint64_t stall = 0, flops = 0, peak = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const tsc_step_extra *x = &rs->x[i];
        assert_int_equal(x->step, i);
        if (i < 2) {
            assert_int_equal(x->flags, 0);
            continue;
        }
        if (x->flags != ALL_X || x->gemm_flops != (uint64_t)(per_gemm * GEMMS) ||
            x->gemm_peak_ns != peak_ns || x->gemm_no_peak || x->h2d_copies != 1)
            fail_msg("rank %d step %zu: flags %u, %llu FLOPs (want %.0f), %llu ns at peak "
                     "(want %llu), %u without a peak, %u copies in", k, i, x->flags,
                     (unsigned long long)x->gemm_flops, per_gemm * GEMMS,
                     (unsigned long long)x->gemm_peak_ns, (unsigned long long)peak_ns,
                     x->gemm_no_peak, x->h2d_copies);
        uint64_t want = stall_of(&w, rs->s[1].start_ns, rs->s[i].start_ns, rs->s[i].end_ns);
        if (x->data_stall_ns != want)
            fail_msg("rank %d step %zu: data stall %llu ns on disk, %llu ns from the window's "
                     "records", k, i, (unsigned long long)x->data_stall_ns,
                     (unsigned long long)want);
        stall += x->data_stall_ns;
        flops += x->gemm_flops;
        peak += x->gemm_peak_ns;
    }
    free(w.r);
    if (tbb_prom(metrics, "tscope_data_stall_seconds_total", NULL) != (double)stall / 1e9 ||
        tbb_prom(metrics, "tscope_gemm_flops_total", NULL) != (double)flops ||
        tbb_prom(metrics, "tscope_gemm_peak_seconds_total", NULL) != (double)peak / 1e9)
        fail_msg("rank %d: the extras sum to %llu ns of stall, %llu FLOPs, %llu ns at peak; "
                 "the metrics differ:\n%.3000s", k, (unsigned long long)stall,
                 (unsigned long long)flops, (unsigned long long)peak, metrics);
}

/* ------------------------------------------------------ blackbox --json */

static double num(cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItem(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("row %g: '%s' is not a number", cJSON_GetNumberValue(cJSON_GetObjectItem(o, "first")),
                 key);
    return cJSON_GetNumberValue(v);
}

static void expect_json_rows(const char *out, const tbb_rank_steps rs[2])
{
    char *text = tbb_report(out, "--json", "--every");
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    cJSON *row;
    size_t s = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(root, "timeline"))
    {
        assert_int_equal((size_t)num(row, "first"), s);
        if (s < 2) {
            static const char *const nulls[] = {"data_stall_ns", "max_data_stall_ns",
                                                "max_data_stall_rank", "gemm_peak_ns", "mfu"};
            assert_int_equal(num(row, "stall_rank_steps"), 0);
            assert_int_equal(num(row, "mfu_rank_steps"), 0);
            for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
                if (!cJSON_IsNull(cJSON_GetObjectItem(row, nulls[i])))
                    fail_msg("step %zu: '%s' is not null (not recorded)", s, nulls[i]);
            s++;
            continue;
        }
        const tsc_step_extra *a = &rs[0].x[s], *b = &rs[1].x[s];
        uint64_t d = dur(&rs[0].s[s]) + dur(&rs[1].s[s]), p = a->gemm_peak_ns + b->gemm_peak_ns;
        if (num(row, "stall_rank_steps") != 2 ||
            num(row, "data_stall_ns") != (double)(a->data_stall_ns + b->data_stall_ns) ||
            num(row, "max_data_stall_ns") !=
                (double)(a->data_stall_ns > b->data_stall_ns ? a->data_stall_ns : b->data_stall_ns) ||
            num(row, "max_data_stall_rank") != (b->data_stall_ns > a->data_stall_ns) ||
            num(row, "max_data_stall_step") != (double)s || num(row, "mfu_rank_steps") != 2 ||
            num(row, "gemm_peak_ns") != (double)p || num(row, "mfu_step_ns") != (double)d ||
            /* cJSON prints a double to 15 digits: the ratio to that, its two
             * integers exactly */
            fabs(num(row, "mfu") - (double)p / (double)d) > 1e-14 * ((double)p / (double)d))
            fail_msg("step %zu: the row differs from the extras (stall %llu and %llu ns, peak "
                     "%llu ns over %llu ns):\n%s", s, (unsigned long long)a->data_stall_ns,
                     (unsigned long long)b->data_stall_ns, (unsigned long long)p,
                     (unsigned long long)d, cJSON_Print(row));
        s++;
    }
    assert_int_equal(s, STEPS);
    cJSON_Delete(root);
    free(text);
}

/* ------------------------------------------------------------ live --once */

static void expect_live(const char *out, const tbb_rank_steps rs[2])
{
    const char *argv[] = {tb_tool("REPORT"), "live", out, "--once", NULL};
    tb_result res;
    assert_int_equal(tb_run(argv, NULL, 60, &res), 0);
    if (!WIFEXITED(res.status) || WEXITSTATUS(res.status))
        fail_msg("tscope-report live: 0x%x\n%.2000s", res.status, res.err);
    uint64_t stall = 0, stall_dur = 0, peak[2] = {0}, pdur[2] = {0};
    for (int k = 0; k < 2; k++)
        for (size_t s = 2; s < STEPS; s++) {
            stall += rs[k].x[s].data_stall_ns;
            stall_dur += dur(&rs[k].s[s]);
            peak[k] += rs[k].x[s].gemm_peak_ns;
            pdur[k] += dur(&rs[k].s[s]);
        }
    uint64_t a = rs[0].x[STEPS - 1].data_stall_ns, b = rs[1].x[STEPS - 1].data_stall_ns;
    double lo = (double)(a < b ? a : b), hi = (double)(a < b ? b : a);
    double mfu = ((double)peak[0] / (double)pdur[0] + (double)peak[1] / (double)pdur[1]) / 2;
    const char *t = res.out;
    if (tbb_prom(t, "tscope_job_data_stall_seconds_total", NULL) != (double)stall / 1e9 ||
        tbb_prom(t, "tscope_job_data_stall_ratio", NULL) != (double)stall / (double)stall_dur ||
        tbb_prom(t, "tscope_job_last_step_data_stall_median_seconds", NULL) != (lo + hi) / 2 / 1e9 ||
        tbb_prom(t, "tscope_job_last_step_data_stall_max_seconds", NULL) != hi / 1e9 ||
        tbb_prom(t, "tscope_job_last_step_data_stall_max_rank", NULL) != (a == b ? -1 : b > a) ||
        tbb_prom(t, "tscope_job_mfu_ratio", NULL) != mfu)
        fail_msg("live: want stall %llu ns over %llu ns, last step %llu and %llu ns, MFU %.17g:"
                 "\n%.5000s", (unsigned long long)stall, (unsigned long long)stall_dur,
                 (unsigned long long)a, (unsigned long long)b, mfu, t);
    char path[4400];
    snprintf(path, sizeof path, "%s/../live.prom", out);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(t, f);
    fclose(f);
    promtool_ok(path);
    tb_result_free(&res);
}

/* ------------------------------------------------------------------- run */

/* Runs the job; checks the GEMM figures of both ranks, their extras on
 * disk and the views of them; returns rank 0's data stall per step. */
static figures run(const char *load_us)
{
    const char *args[] = {"--steps", "60", "--gemms", "4", "--launches", "20", "--load-us",
                          load_us, NULL};
    sj_run r;
    if (sj_run_job_with(&r, 2, args, bb_env, leave_trigger) != 0)
        fail_msg("the stand-in job failed");
    tbb_rank_steps rs[2];
    assert_int_equal(tbb_load_steps(r.out, rs, 2), 2);
    figures fig = {0};
    for (int k = 0; k < 2; k++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/metrics/tscope_r%d.prom", r.out, k);
        char *text = tb_read_file(path);
        assert_non_null(text);
        size_t n = rs[k].n;
        assert_int_equal(n, STEPS);
        double per_gemm = (double)sj_truth(&r, "job", k, "gemm_flops") / (STEPS * GEMMS);
        double flops = tbb_prom(text, "tscope_gemm_flops_total", NULL);
        if (flops != per_gemm * GEMMS * (double)(n - 2))
            fail_msg("rank %d: %g GEMM FLOPs, want %g x %d x %zu", k, flops, per_gemm, GEMMS,
                     n - 2);
        double at_peak = tbb_prom(text, "tscope_gemm_peak_seconds_total", NULL);
        double want = (double)(GEMMS * (n - 2)) * round(per_gemm / 67e12 * 1e9) / 1e9;
        if (fabs(at_peak - want) > 1e-15)
            fail_msg("rank %d: GEMMs at peak %.12g s, want %.12g", k, at_peak, want);
        double lo = INFINITY, hi = 0, sum = 0;
        for (size_t i = 2; i < n; i++) {
            double d = (double)(rs[k].s[i].end_ns - rs[k].s[i].start_ns) / 1e9;
            double ratio = GEMMS * round(per_gemm / 67e12 * 1e9) / 1e9 / d;
            lo = ratio < lo ? ratio : lo;
            hi = ratio > hi ? ratio : hi;
            sum += d;
        }
        double mfu = tbb_prom(text, "tscope_mfu_ratio", NULL);
        if (!(mfu >= lo && mfu <= hi))
            fail_msg("rank %d: MFU %g outside the steps' %g-%g", k, mfu, lo, hi);
        double stall = tbb_prom(text, "tscope_data_stall_seconds_total", NULL);
        if (isnan(stall))
            fail_msg("rank %d: no data stall series:\n%.3000s", k, text);
        if (k == 0) {
            fig.stall_per_step = stall / (double)(n - 2);
            fig.step_mean_s = sum / (double)(n - 2);
        }
        promtool_ok(path);
        expect_extras(&r, &rs[k], k, text);
        free(text);
    }
    expect_json_rows(r.out, rs);
    expect_live(r.out, rs);
    tbb_free_steps(rs, 2);
    sj_free(&r);
    return fig;
}

static void test_gpu_figures(void **state)
{
    (void)state;
    figures idle = run("2000");
    if (!(idle.stall_per_step >= LOAD_US / 1e6 && idle.stall_per_step <= idle.step_mean_s))
        fail_msg("data stall %.6f s a step with a %d us load (steps of %.6f s)",
                 idle.stall_per_step, LOAD_US, idle.step_mean_s);
    figures busy = run("0");
    if (!(busy.stall_per_step < LOAD_US / 4 / 1e6))
        fail_msg("data stall %.6f s a step without a load", busy.stall_per_step);
}

int main(void)
{
    if (!sj_available())
        return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gpu_figures)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
