/* The cause pass end to end (the short form of scripts/cause-trials.sh):
 * a real 4-rank job under the preload with one fault injected into rank 2;
 * the analysis of its dumps must name rank 2 and the injected cause first,
 * "cause unknown" for a slowdown no record explains, and no cause block for
 * a balanced job.
 *   test_cause_e2e CASE
 * gpu-*: the stand-in GPU job (kernel records through the CUPTI stand-in);
 * cpu-*: the CPU test-bed rank (host telemetry only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "driver/analyze.h"
#include "load/job_load.h"
#include "standin_run.h"
#include "tb_assert.h"

#define RANKS 4
#define SLOW "2"

static const char *which;

typedef struct kase {
    const char *name;
    const char *args[12];
    const char *want;          /* cause kind, "unknown", or NULL: no block */
    int late;                  /* rank late by waiting on rank 2 (arrival), -1 none */
} kase;

/* Sizes as in scripts/cause-trials.sh, fewer steps (CPU cases: see there). */
static const kase cases[] = {
    {"gpu-device", {"--slow-rank", SLOW, "--kernel-factor", "1.3"}, "device", -1},
    {"gpu-work", {"--slow-rank", SLOW, "--extra-launches", "18"}, "work", -1},
    {"gpu-host", {"--slow-rank", SLOW, "--launch-gap-us", "400"}, "host", -1},
    {"gpu-unknown", {"--slow-rank", SLOW, "--idle-us", "6000"}, "unknown", -1},
    {"gpu-balanced", {NULL}, NULL, -1},
    /* 2x, not the trials' 1.5x: under ASan beside other tests the CPU
     * ranks' noise reaches the point where 1.5x is sometimes not named a
     * straggler at all (nothing for the cause pass to explain) */
    {"cpu-work", {"--cpu-work", "--slow-ranks", SLOW, "--slow-factor", "2"}, "work", -1},
    {"cpu-unknown", {"--slow-ranks", SLOW, "--slow-factor", "2"}, "unknown", -1},
    /* rank 3 receives from rank 2 before its compute in every step: late
     * by rank 2's extra work, not slow itself */
    {"cpu-arrival", {"--cpu-work", "--slow-ranks", SLOW, "--slow-factor", "2", "--upstream",
                     "3:" SLOW}, "work", 3},
};

static const tsa_cause_block *block_of(const tsa_analysis *a, int32_t rank)
{
    for (size_t i = 0; i < a->cause.n_blocks; i++)
        if (a->cause.blocks[i].rank == rank)
            return &a->cause.blocks[i];
    return NULL;
}

static void want_first(const tsa_cause_block *b, const char *want)
{
    const char *got = b->n_causes ? tsa_cause_kind_name(b->causes[0].kind) : "unknown";
    if (strcmp(got, want))
        fail_msg("rank %d: first cause %s, want %s (%s)", b->rank, got, want,
                 b->n_causes ? b->causes[0].evidence : b->checked);
}

static tsa_job *gpu_job(const kase *k, sj_run *run)
{
    const char *args[24] = {"--steps", "30", "--launches", "60", "--kernel-ns", "300000",
                            "--sync-first"};
    size_t n = 7;
    for (size_t i = 0; k->args[i]; i++)
        args[n++] = k->args[i];
    static const char *const env[] = {"FAKENCCL_NO_KERNEL=1", NULL};
    assert_int_equal(sj_run_job(run, RANKS, args, env), 0);
    return run->job;
}

static tsa_job *cpu_job(const kase *k, char **dir_out)
{
    char *dir = tb_tempdir("cause");
    assert_non_null(dir);
    static char out[4200];
    snprintf(out, sizeof out, "%s/out", dir);
    const char *args[24] = {"--steps", "50", "--compute-us", "5000"};
    size_t n = 4;
    for (size_t i = 0; k->args[i]; i++)
        args[n++] = k->args[i];
    tb_job job = {.nranks = RANKS, .out_dir = out, .with_preload = 1, .rank_args = args,
                  .timeout_s = 60};
    tb_run_job_ok(&job);
    tsa_load_options opt = {.quiet = 1};
    tsa_job *j = NULL;
    char err[512];
    assert_int_equal(tsa_job_load_ex(out, &opt, &j, err, sizeof err), 0);
    *dir_out = dir;
    return j;
}

static void test_cause(void **state)
{
    (void)state;
    const kase *k = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(cases[i].name, which))
            k = &cases[i];
    assert_non_null(k);
    int gpu = !strncmp(k->name, "gpu-", 4);
    if (gpu ? !sj_available() : !tb_e2e_available())
        skip();
    sj_run run = {0};
    char *dir = NULL;
    tsa_job *job = gpu ? gpu_job(k, &run) : cpu_job(k, &dir);
    assert_non_null(job);
    assert_int_equal(job->n_ranks, RANKS);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    if (!k->want) {
        if (a->cause.n_blocks)
            fail_msg("balanced job: a cause block for rank %d", a->cause.blocks[0].rank);
    } else if (k->late < 0) {
        if (!a->cause.n_blocks)
            fail_msg("no cause block (straggler: %s)", a->xrank.straggler ? "yes" : "no");
        const tsa_cause_block *b = &a->cause.blocks[0];
        assert_int_equal(b->rank, atoi(SLOW));
        want_first(b, k->want);
    } else {
        /* the late rank: arrival, waiting for rank 2 (its global rank, not
         * its rank in the pair's communicator); rank 2: its own cause */
        const tsa_cause_block *late = block_of(a, k->late), *up = block_of(a, atoi(SLOW));
        if (!late || !up)
            fail_msg("no block for rank %d or rank %s (%zu blocks)", k->late, SLOW,
                     a->cause.n_blocks);
        want_first(late, "arrival");
        if (!strstr(late->causes[0].evidence, "from rank " SLOW " ("))
            fail_msg("the arrival does not name rank %s: %s", SLOW, late->causes[0].evidence);
        want_first(up, k->want);
    }
    tsa_analysis_free(a);
    if (gpu) {
        sj_free(&run);
    } else {
        tsa_job_free(job);
        tb_rmtree(dir);
        free(dir);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cause_e2e CASE\n");
        return 2;
    }
    which = argv[1];
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cause)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
