/* End to end on the multi-process test bed: real rank processes on the
 * test NCCL under the preload, one of them slowed; tscope-report --json
 * must name that rank, and no rank when none is slowed.
 *   test_e2e_straggler RANKS SLOW_RANK   (SLOW_RANK -1: balanced) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "tb_harness.h"
#include "tb_assert.h"

static int n_ranks = 4, slow_rank = -1, small_messages = 0;

static void test_e2e_straggler(void **state)
{
    (void)state;
    if (!tb_e2e_available())
        skip();
    char *dir = tb_tempdir("xrank");
    assert_non_null(dir);
    char out[4200], slow[16];
    snprintf(out, sizeof out, "%s/tscope_out", dir);
    snprintf(slow, sizeof slow, "%d", slow_rank);
    /* sleeping compute: 20 ms steps stay measurable on a loaded 2-core box,
     * where scheduling noise reaches 25% per step (hence a 50% slowdown) */
    /* small: 4 KiB and 16 KiB messages, the gradient buckets grouped, so
     * every collective takes microseconds and the ranks wait in GroupEnd. */
    const char *args[24] = {"--steps", "80", "--compute-us", "20000"};
    int n = 4;
    if (slow_rank >= 0) {
        args[n++] = "--slow-ranks";
        args[n++] = slow;
        args[n++] = "--slow-factor";
        args[n++] = "1.5";
    }
    if (small_messages) {
        static const char *const small[] = {"--buckets", "16K,4K", "--fsdp-bytes", "4K",
                                            "--ring-bytes", "4K", "--bcast-bytes", "4K"};
        for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
            args[n++] = small[i];
    }
    args[n] = NULL;
    tb_job job = {.nranks = n_ranks, .out_dir = out, .with_preload = 1, .rank_args = args,
                  .timeout_s = 60};
    tb_run_job_ok(&job);
    assert_int_equal(tb_count_dumps(out), n_ranks);

    const char *argv[] = {tb_tool("REPORT"), out, "--json", NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) <= 1);
    cJSON *root = cJSON_Parse(r.out);
    if (!root)
        fail_msg("report output is not JSON:\n%.2000s\n%.2000s", r.out, r.err);
    cJSON *st = cJSON_GetObjectItem(root, "straggler");
    assert_non_null(st);
    /* One host, one clock: never split, never a clock skew, whatever the
     * message sizes (a late rank is not a clock running late). */
    cJSON *clock = cJSON_GetObjectItem(root, "clock");
    assert_non_null(clock);
    if (cJSON_IsTrue(cJSON_GetObjectItem(clock, "hosts_split")))
        fail_msg("one host split into per-rank clocks:\n%.3000s", r.out);
    cJSON *f0;
    cJSON_ArrayForEach(f0, cJSON_GetObjectItem(root, "findings")) {
        cJSON *id = cJSON_GetObjectItem(f0, "id");
        if (cJSON_IsString(id) && !strcmp(id->valuestring, "DIST.CLOCK_SKEW"))
            fail_msg("DIST.CLOCK_SKEW on one host");
    }
    if (slow_rank < 0) {
        if (!cJSON_IsNull(st))
            fail_msg("balanced run: rank %d named", cJSON_GetObjectItem(st, "rank")->valueint);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "imbalance")));
    } else {
        if (!cJSON_IsObject(st))
            fail_msg("rank %d slowed 50%%, no straggler named", slow_rank);
        assert_int_equal(cJSON_GetObjectItem(st, "rank")->valueint, slow_rank);
        assert_true(cJSON_GetObjectItem(st, "whatif_saved_ns")->valuedouble > 0);
        /* and the finding is in the list */
        int found = 0;
        cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(root, "findings")) {
            cJSON *id = cJSON_GetObjectItem(f, "id");
            if (cJSON_IsString(id) && !strcmp(id->valuestring, "DIST.STRAGGLER"))
                found = 1;
        }
        assert_true(found);
    }
    cJSON_Delete(root);
    tb_result_free(&r);
    tb_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n_ranks = atoi(argv[1]);
    if (argc > 2)
        slow_rank = atoi(argv[2]);
    if (argc > 3)
        small_messages = !strcmp(argv[3], "small");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_straggler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
