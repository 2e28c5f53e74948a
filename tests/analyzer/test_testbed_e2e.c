/* End to end on the multi-process test bed (tests/testbed): 4 ranks of a
 * training-like program over the test NCCL, captured by the real preload
 * library, then loaded and analyzed.  Host-only records: steps from the
 * collective pattern, compute between collectives, waiting at the slow
 * rank.  Skips (exit 77) when the test bed or the preload is not built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/analysis.h"
#include "load/job_load.h"
#include "driver/analyze.h"
#include "report/report.h"

static char dir[256];

static const char *tool(const char *name)
{
    const char *p = getenv(name);
    return p && *p && access(p, F_OK) == 0 ? p : NULL;
}

static void test_testbed_job(void **state)
{
    (void)state;
    char cmd[8192];
    const char *asan = getenv("TB_ASAN_RUNTIME");
    snprintf(cmd, sizeof cmd,
             "env -u TSCOPE_DISABLE -u CUDA_INJECTION64_PATH LD_PRELOAD='%s%s%s' "
             "LD_LIBRARY_PATH='%s' TSCOPE_OUT='%s' TSCOPE_RUN_ID=e2e FAKENCCL_TIMEOUT_S=20 "
             "'%s' -n 4 -- '%s' --steps 24 --compute-us 2000 --slow-ranks 2 --slow-ms 12 "
             ">'%s/log' 2>&1",
             asan && *asan ? asan : "", asan && *asan ? " " : "", getenv("TB_PRELOAD"),
             getenv("TB_FAKENCCL_DIR"), dir, getenv("TB_LAUNCH"), getenv("TB_RANK"), dir);
    assert_int_equal(system(cmd), 0);
    tsa_job *job = NULL;
    tsa_load_options lo = {.quiet = 1};
    assert_int_equal(tsa_job_load(dir, &lo, &job), 0);
    assert_string_equal(job->run_id, "e2e");
    assert_int_equal(job->n_ranks, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(job->ranks[i].rank, (int)i);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    assert_int_equal(a->gpu, 0);
    assert_int_equal(a->method, TSA_STEPS_COLLECTIVES);
    assert_int_equal(a->steps_total, 24);
    assert_int_equal(a->steps, 22);
    /* Exact budget per rank and for the job. */
    for (size_t i = 0; i < a->n_ranks; i++) {
        int64_t sum = 0;
        for (int l = 0; l < TSA_BL_COUNT; l++)
            sum += a->ranks[i].budget.line_ns[l];
        assert_int_equal(sum, a->ranks[i].budget.wall_ns);
        /* Each step computes at least 2 ms on every rank. */
        assert_true(a->ranks[i].compute_ns >= 22 * 2000000ll);
        assert_true(a->ranks[i].overlap.comm_ns > 0);
        assert_int_equal(a->ranks[i].overlap.overlapped_ns, 0);
    }
    /* The slow rank (12 ms more per step) arrives last: it waits least,
     * the others wait most of those 12 ms in each of the 22 steps (the
     * margins allow for a loaded 2-core machine; 22 steps rather than 10
     * keep the straggler's binomial z clear of its threshold there). */
    for (size_t i = 0; i < 4; i++)
        if (i != 2) {
            assert_true(a->ranks[i].overlap.exposed_wait_ns > a->ranks[2].overlap.exposed_wait_ns);
            assert_true(a->ranks[i].overlap.exposed_wait_ns > 22 * 6000000ll);
        }
    /* The demo's shape (one slow rank): the verdict names it, its finding
     * comes first, and the findings count each nanosecond once. */
    assert_int_equal(a->verdict, TSA_VERDICT_STRAGGLER_BOUND);
    assert_int_equal(a->verdict_rank, 2);
    assert_true(a->findings.n > 0);
    assert_string_equal(a->findings.items[0].id, "DIST.STRAGGLER");
    assert_int_equal(a->findings.items[0].rank, 2);
    int64_t claimed = 0;
    for (size_t i = 0; i < a->findings.n; i++)
        claimed += a->findings.items[i].recoverable_ns;
    assert_true(claimed <= a->wall_ns);
    for (size_t i = 0; i < a->n_colls; i++)
        assert_true(a->colls[i].op != 20 && a->colls[i].op != 21); /* no Group* rows */
    char *json = tsa_report_json(a);
    assert_non_null(json);
    free(json);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

int main(void)
{
    const char *need[] = {"TB_PRELOAD", "TB_LAUNCH", "TB_RANK", "TB_FAKENCCL_DIR"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!tool(need[i])) {
            fprintf(stderr, "SKIP: %s not built\n", need[i]);
            return 77;
        }
    snprintf(dir, sizeof dir, "/tmp/tsa_tb_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_testbed_job)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
