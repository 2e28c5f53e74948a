/* The budget's GPU level on the CUDA stand-in, for real under the preload:
 * a job whose per-kernel records are most of tscope's cost (2,000 kernel
 * launches a step, no telemetry) and a tiny budget.  The preload skips
 * the telemetry levels (they would cut nothing), stops tracing kernels
 * (light) and says so once; the dump keeps the kernels made before the
 * step and none after it, NCCL's launches go on being recorded, and the
 * text, JSON and HTML reports name the level and its time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "standin_run.h"

#define LIGHT "no per-kernel records (light)"

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* tscope-report with args on the run's dumps: its stdout (caller frees). */
static char *report(const sj_run *r, const char *flag)
{
    const char *argv[] = {tb_tool("REPORT"), flag, r->out, NULL};
    tb_result res;
    assert_int_equal(tb_run(argv, NULL, 120, &res), 0);
    char *out = strdup(res.out ? res.out : "");
    tb_result_free(&res);
    return out;
}

static void tiny_budget_steps_down_to_light(void **state)
{
    (void)state;
    if (!sj_available())
        skip();
    sj_run r;
    /* 100 steps of 100 ms: the step comes after 3 periods and 5 s above
     * the budget, so at about 6-7 s, with steps left after it. */
    const char *args[] = {"--steps", "100", "--launches", "2000", "--load-us", "100000", NULL};
    const char *env[] = {"TSCOPE_NVML_MS=0", "TSCOPE_BUDGET_PCT=0.01", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, env), 0);
    if (count(r.res.err, "recording less (" LIGHT) != 1)
        fail_msg("stderr:\n%.3000s", r.res.err);
    const char *step = sj_meta(&r, 0, "cost_step.1");
    assert_non_null(step);
    unsigned long long at = 0;
    unsigned from = 9, to = 9;
    assert_int_equal(sscanf(step, "%llu %u %u", &at, &from, &to), 3);
    assert_true(from == 0 && to == 1);
    assert_non_null(strstr(step, LIGHT));
    const tsa_rank *rk = sj_rank(&r, 0);
    /* Kernels up to the step (and those already on their way), none
     * launched a second after it; fewer than were launched. */
    size_t before = 0, after = 0, launched = 100 * 2000;
    for (size_t i = 0; i < rk->n_kernels; i++) {
        before += rk->kernels[i].start_ns < (int64_t)at;
        after += rk->kernels[i].start_ns > (int64_t)at + 1000000000ll;
    }
    /* NCCL's launches (one a step) are kept after it, as light mode keeps them. */
    size_t nccl_after = 0;
    for (size_t i = 0; i < rk->n_apis; i++)
        nccl_after += !strcmp(rk->strings[rk->apis[i].name], "cuLaunchKernelEx") &&
                      rk->apis[i].start_ns > (int64_t)at + 1000000000ll;
    printf("kernels %zu before the step, %zu a second after it (of %zu launched); NCCL "
           "launches a second after it: %zu\n", before, after, launched, nccl_after);
    assert_true(before > 1000);
    assert_int_equal(after, 0);
    assert_true(rk->n_kernels < launched);
    assert_true(nccl_after > 0);
    /* the reports say which records are thinner from when */
    char *text = report(&r, "--color=never");
    char *json = report(&r, "--json");
    char *html = report(&r, "--html");
    assert_int_equal(count(text, "level 0 -> 1, " LIGHT), 1);
    assert_int_equal(count(json, "\"what\":\t\"" LIGHT "\"") + count(json, "\"what\":\"" LIGHT "\""),
                     1);
    assert_int_equal(count(html, "level 0 -&gt; 1, " LIGHT), 1);
    free(text), free(json), free(html);
    sj_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_budget_steps_down_to_light),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
