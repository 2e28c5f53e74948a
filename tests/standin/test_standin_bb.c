/* Black-box mode's GPU figures on the CUDA stand-in, for real under the
 * preload (2 ranks, CUPTI and cuBLAS records): each rank's metrics file
 * against what the job did (its truth file) and the ranks' step
 * summaries.
 *   - tscope_gemm_flops_total: the FLOPs of the GEMMs of the summarized
 *     steps (steps 0 and 1 carry no sums), exactly;
 *   - tscope_gemm_peak_seconds_total: those GEMMs at the H100's fp32 peak
 *     (67 TFLOP/s, the datasheet), exactly as rounded per call;
 *   - tscope_mfu_ratio: between the smallest and largest per-step ratio;
 *   - tscope_data_stall_seconds_total: with --load-us 2000 every rank
 *     sleeps 2 ms with the GPU idle before each batch copy, so each step's
 *     stall is at least 2 ms and at most the step; without it, the stall
 *     is a small part of that. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "standin_run.h"
#include "tb_blackbox.h"

#define STEPS 60
#define GEMMS 4
#define LOAD_US 2000

typedef struct figures {
    double stall_per_step;   /* over the summarized steps 2.. */
    double step_mean_s;
} figures;

static const char *const bb_env[] = {"TSCOPE_MODE=blackbox", "TSCOPE_FLUSH_MS=100",
                                     "TSCOPE_BB_K=1000", NULL};

/* Runs the job; checks the GEMM figures of both ranks; returns rank 0's
 * data stall per step. */
static figures run(const char *load_us)
{
    const char *args[] = {"--steps", "60", "--gemms", "4", "--launches", "20", "--load-us",
                          load_us, NULL};
    sj_run r;
    if (sj_run_job(&r, 2, args, bb_env) != 0)
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
        if (access("/usr/bin/promtool", X_OK) == 0) {
            char cmd[4600];
            snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < '%s' >/dev/null", path);
            if (system(cmd) != 0)
                fail_msg("promtool check metrics fails on %s", path);
        }
        free(text);
    }
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
