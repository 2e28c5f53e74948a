/* Bad and odd input never crashes the pass (run under ASan/UBSan in CI):
 * empty jobs, lone ranks, failed calls, absurd seqs, duplicates,
 * disagreeing ops, broken step tables, and seeded random corruption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"
#include "tsc_format.h"
#include "report/xrank_render.h"

/* Run, render both ways, free: everything a report would do. */
static void exercise(tsa_job *job, tsa_xrank_result *r)
{
    tsa_findings f = {0};
    assert_int_equal(tsa_xrank_run(job, NULL, r, &f), 0);
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    tsa_xrank_print(devnull, r, 1);
    fclose(devnull);
    cJSON *root = cJSON_CreateObject();
    tsa_xrank_add_json(root, r);
    char *s = cJSON_PrintUnformatted(root);
    assert_non_null(s);
    free(s);
    cJSON_Delete(root);
    tsa_findings_free(&f);
}

/* A default synthetic job of n_ranks, with or without step tables. */
static tsa_job *default_job(int n_ranks, int with_steps)
{
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = n_ranks;
    p.with_steps = with_steps;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    return job;
}

static void test_empty(void **state)
{
    (void)state;
    tsa_xrank_result r;
    assert_int_equal(tsa_xrank_run(NULL, NULL, &r, NULL), 0);
    assert_int_equal(r.n_ranks, 0);
    assert_null(r.straggler);
    tsa_xrank_print(stdout, &r, 0);
    tsa_xrank_free(&r);

    tsa_job job = {0};
    exercise(&job, &r);
    tsa_xrank_free(&r);

    tsa_rank ranks[3] = {{.rank = 0}, {.rank = 1}, {.rank = 2}};
    job.ranks = ranks;
    job.n_ranks = 3;
    exercise(&job, &r);
    assert_int_equal(r.n_ranks, 3);
    assert_int_equal(r.instances, 0);
    tsa_xrank_free(&r);
}

static void test_single_rank(void **state)
{
    (void)state;
    tsa_job *job = default_job(1, 0);
    tsa_xrank_result r;
    exercise(job, &r);
    assert_int_equal(r.instances, 0);
    assert_null(r.straggler);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

static void test_failed_and_odd_calls(void **state)
{
    (void)state;
    tsa_job *job = default_job(4, 0);
    tsa_rank *rk = &job->ranks[1];
    rk->nccl[3].result = 5;                               /* failed: ignored */
    rk->nccl[4].seq = UINT64_MAX - 1;                     /* absurd seq */
    rk->nccl[5].op = TSC_NCCL_ALLGATHER;                  /* disagrees with peers */
    rk->nccl[6].end_ns = rk->nccl[6].start_ns - 5;        /* negative duration */
    rk->nccl[6].gpu_end_ns = rk->nccl[6].gpu_start_ns - 5;
    rk->nccl[7] = rk->nccl[8];                            /* duplicate record */
    rk->nccl[9].comm_id = 0;                              /* no communicator */
    rk->nccl[10].comm_size = 1;
    tsa_xrank_result r;
    exercise(job, &r);
    assert_true(r.instances > 150);   /* the rest still matched */
    tsa_xrank_free(&r);
    synth_job_free(job);
}

static void test_broken_steps(void **state)
{
    (void)state;
    tsa_job *job = default_job(4, 1);
    job->ranks[0].steps[3].first_nccl = 100000;   /* past the calls */
    job->ranks[0].steps[4].n_nccl = SIZE_MAX / 2;
    job->ranks[1].steps[0].warmup = 1;
    tsa_xrank_result r;
    exercise(job, &r);
    tsa_xrank_free(&r);
    /* a rank with calls but no steps: the model's steps are not mixed in */
    free(job->ranks[3].steps);
    job->ranks[3].steps = NULL;
    job->ranks[3].n_steps = 0;
    exercise(job, &r);
    assert_int_equal(r.step_source, TSA_XSTEPS_DERIVED);
    tsa_xrank_free(&r);
    synth_job_free(job);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

/* Random field corruption, 300 rounds. */
static void test_random_corruption(void **state)
{
    (void)state;
    uint64_t s = 42;
    for (int round = 0; round < 300; round++) {
        synth_params p;
        synth_defaults(&p);
        p.n_ranks = 2 + (int)(lcg(&s) % 9);
        p.n_steps = 5 + (int)(lcg(&s) % 20);
        p.per_step = 1 + (int)(lcg(&s) % 3);
        p.with_steps = (int)(lcg(&s) % 2);
        p.ranks_per_host = (int)(lcg(&s) % 3);
        p.max_offset_ns = 1000000000;
        p.seed = (uint64_t)round;
        tsa_job *job = synth_job(&p, NULL);
        assert_non_null(job);
        int edits = 1 + (int)(lcg(&s) % 20);
        for (int e = 0; e < edits; e++) {
            tsa_rank *rk = &job->ranks[lcg(&s) % job->n_ranks];
            if (!rk->n_nccl)
                continue;
            tsa_nccl_op *o = &rk->nccl[lcg(&s) % rk->n_nccl];
            switch (lcg(&s) % 8) {
            case 0: o->seq = lcg(&s) % 64; break;
            case 1: o->comm_id = lcg(&s) % 3; break;
            case 2: o->start_ns = (int64_t)(lcg(&s) << 20); break;
            case 3: o->gpu_end_ns = -(int64_t)lcg(&s); break;
            case 4: o->op = (uint8_t)(lcg(&s) % 40); break;
            case 5: o->comm_size = (uint32_t)(lcg(&s) % 4); break;
            case 6: rk->n_nccl--; break;
            default: o->gpu_start_ns = INT64_MAX / 2; break;
            }
        }
        tsa_xrank_result r;
        exercise(job, &r);
        tsa_xrank_free(&r);
        synth_job_free(job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_single_rank),
        cmocka_unit_test(test_failed_and_odd_calls),
        cmocka_unit_test(test_broken_steps),
        cmocka_unit_test(test_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
