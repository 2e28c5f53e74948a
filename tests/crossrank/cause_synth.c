/* Synthetic jobs for the cause tests (cause_synth.h). */
#include "cause_synth.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "driver/analyze.h"
#include "load/job_build.h"
#include "load/rank_strings.h"
#include "load/rank_telemetry.h"
#include "synth_job.h"

/* Kernels into every interval between two collectives of rank r.  Healthy
 * ranks (and every rank in FILL_DEVICE) get K kernels spread evenly over
 * 95% of the interval; the slow rank's extra time goes where `how` says. */
void cs_add_kernels(tsa_rank *r, fill how, int slow, int64_t base)
{
    uint32_t name = tsa_rank_intern(r, "ampere_sgemm_128x64_nn");
    int64_t d_base = base * 95 / 100 / K;
    size_t n_ops = r->n_nccl;
    for (size_t j = 1; j < n_ops; j++) {
        int64_t a = r->nccl[j - 1].end_ns, b = r->nccl[j].start_ns, len = b - a;
        if (len <= 0)
            continue;
        int n = K;
        int64_t d = len * 95 / 100 / K, step = len / K;
        if (slow && how == FILL_WORK) {
            d = d_base;
            n = (int)((double)len / (double)base * K + 0.5);
            step = len / n;
        } else if (slow && how == FILL_HOST) {
            d = d_base;
        } else if (how == FILL_PACKED) {
            d = d_base;
            step = d_base + base / 20 / K;
        }
        for (int i = 0; i < n; i++) {
            tsa_kernel k = {.start_ns = a + i * step, .end_ns = a + i * step + d, .name = name,
                            .grid = {4, 1, 1}, .block = {128, 1, 1}, .nccl = -1, .gemm = -1};
            assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
        }
    }
}

tsa_job *cs_make_job(int n_ranks, int ranks_per_host, const double *sd, int64_t *base)
{
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = n_ranks;
    p.ranks_per_host = ranks_per_host;
    p.per_step = 2;
    p.n_steps = 40;
    p.jitter = 0.005;
    p.with_steps = 1;
    p.seed = 7;
    p.slowdown = sd;
    tsa_job *job = synth_job(&p, NULL);
    assert_non_null(job);
    *base = p.work_ns / p.per_step;
    return job;
}

tsa_analysis *cs_run_sd(fill how, int n_ranks, int ranks_per_host, const double *sd,
                            tsa_job **job_out)
{
    int64_t base;
    tsa_job *job = cs_make_job(n_ranks, ranks_per_host, sd, &base);
    for (size_t i = 0; i < job->n_ranks; i++)
        cs_add_kernels(&job->ranks[i], how, sd[job->ranks[i].rank] > 0, base);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    *job_out = job;
    return a;
}

tsa_analysis *cs_run(fill how, double slowdown, tsa_job **job_out)
{
    double sd[4] = {0};
    sd[SLOW_RANK] = slowdown;
    return cs_run_sd(how, 4, 4, sd, job_out);
}

const tsa_cause_block *cs_slow_block(const tsa_analysis *a)
{
    assert_int_equal(a->cause.n_blocks, 1);
    const tsa_cause_block *b = &a->cause.blocks[0];
    assert_int_equal(b->rank, SLOW_RANK);
    assert_string_equal(b->blamed_as, "straggler");
    assert_int_equal(b->peers, 3);
    /* 30% more work per 50 ms interval, two intervals a step: ~30 ms */
    assert_in_range(b->extra_ns, 27000000, 33000000);
    return b;
}

/* The synthetic job frees what it built; the kernels and names added here
 * are freed here. */
void cs_done(tsa_analysis *a, tsa_job *job)
{
    tsa_analysis_free(a);
    for (size_t i = 0; i < job->n_ranks; i++) {
        free(job->ranks[i].kernels);
        free(job->ranks[i].copies);
        tsa_telemetry_free(&job->ranks[i]);
        tsa_rank_strings_free(&job->ranks[i]);
    }
    synth_job_free(job);
}

