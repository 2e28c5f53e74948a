/* The advisory findings (analyzer/findings/mix.h, sync.h, nth.h): MEM.COPIES, MEM.FILLS,
 * MEM.PAGEABLE, EFF.FP32_GEMM, HOST.SYNC, DATA.EVERY_NTH.
 *
 *  - ground truth: generated dumps (gen_job.h) with a known kernel mix; each
 *    rule fires with the exact share the generator put in, and a healthy
 *    job fires none;
 *  - thresholds: small hand-built jobs exactly at, one nanosecond under and
 *    one over each threshold (the rules fire strictly over);
 *  - torch.profiler input: a hand-written trace with pageable copies, sgemm
 *    kernels and cudaStreamSynchronize calls;
 *  - the shared corpus of real traces (skipped when absent): which rules
 *    fire on each folder. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/analysis.h"
#include "findings/mix.h"
#include "findings/sync.h"
#include "gen_run.h"
#include "load/job_build.h"
#include "load/kineto_load.h"
#include "driver/analyze.h"

static const char *const advisory_ids[] = {"MEM.COPIES", "MEM.FILLS", "MEM.PAGEABLE",
                                           "EFF.FP32_GEMM", "HOST.SYNC", "DATA.EVERY_NTH"};
#define N_ADVISORY (sizeof advisory_ids / sizeof advisory_ids[0])

static const tsa_finding *find(const tsa_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, id))
            return &a->findings.items[i];
    return NULL;
}

static double number(const tsa_finding *f, const char *name)
{
    for (size_t i = 0; i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].name, name))
            return f->numbers[i].value;
    fail_msg("%s has no number %s", f->id, name);
    return NAN;
}

/* The advisory findings present, as a string "ID ID ..." in table order. */
static void advisory_set(const tsa_analysis *a, char *out, size_t len)
{
    out[0] = 0;
    for (size_t i = 0; i < N_ADVISORY; i++) {
        const tsa_finding *f = find(a, advisory_ids[i]);
        if (!f)
            continue;
        /* Advisory: they never claim recoverable time (no double count). */
        assert_true(f->recoverable_s == 0);
        snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "",
                 advisory_ids[i]);
    }
}

static void assert_share(double got, int64_t part, int64_t whole)
{
    double want = (double)part / (double)whole;
    if (fabs(got - want) > 1e-12)
        fail_msg("share %.15f, want %lld/%lld = %.15f", got, (long long)part,
                 (long long)whole, want);
}

/* ----------------------------------------------------- ground truth */

/* Generates the job and checks which advisory findings it gets. */
static void assert_fires(gen_options *o, const char *name, run *r, const char *want)
{
    generate_and_analyze(o, name, r);
    char set[256];
    advisory_set(r->a, set, sizeof set);
    assert_string_equal(set, want);
}

static void test_healthy_job_fires_none(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.flops = 1e13;          /* bf16 GEMM records */
    o.stall = 0.03;          /* a small stall on every step: not periodic */
    o.steps = 14;
    run r;
    assert_fires(&o, "healthy", &r, "");
    done(&r);
}

static void test_mix_ground_truth(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.flops = 1e12;
    o.copy_share = 0.15;
    o.memset_share = 0.08;
    o.pageable = 1;
    o.fp32_gemm = 1;
    o.syncs_per_step = 4;
    o.sync_gap_ns = 800000;
    run r;
    assert_fires(&o, "mix", &r, "MEM.COPIES MEM.FILLS MEM.PAGEABLE EFF.FP32_GEMM HOST.SYNC");
    const gen_truth *t = &r.t;
    const tsa_finding *f = find(r.a, "MEM.COPIES");
    assert_share(number(f, "memory_exposed_share"), t->memcpy_ns + t->memset_ns, t->gpu_busy_ns);
    assert_share(number(f, "h2d_share"), t->memcpy_ns, t->gpu_busy_ns);
    assert_true(fabs(number(f, "gpu_busy_s") - (double)t->gpu_busy_ns / 1e9) < 1e-12);
    assert_share(number(find(r.a, "MEM.FILLS"), "memset_exposed_share"), t->memset_ns,
                 t->gpu_busy_ns);
    f = find(r.a, "MEM.PAGEABLE");
    assert_share(number(f, "pageable_share"), t->pageable_ns, t->gpu_busy_ns);
    assert_true(number(f, "pageable_copies") == o.ranks * t->steps_analysed);
    f = find(r.a, "EFF.FP32_GEMM");
    assert_share(number(f, "fp32_gemm_share"), t->fp32_gemm_ns, t->gpu_busy_ns);
    /* H100: bf16 989.5 over fp32 67 TFLOP/s. */
    assert_true(fabs(number(f, "peak_ratio") - 989.5 / 67) < 1e-12);
    f = find(r.a, "HOST.SYNC");
    assert_true(number(f, "syncs") == (double)t->syncs);
    assert_true(number(f, "syncs_per_step") == 4);
    assert_share(number(f, "idle_share"), t->sync_idle_ns, t->wall_ns);
    done(&r);
}

/* Pinned copies with no kernel beside them: MEM.COPIES, not MEM.PAGEABLE. */
static void test_pinned_copies(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.copy_share = 0.2;
    run r;
    assert_fires(&o, "pinned", &r, "MEM.COPIES");
    done(&r);
}

static void test_every_nth_stall(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.steps = 26;
    o.stall = 0.2;
    o.stall_every = 4;
    run r;
    generate_and_analyze(&o, "nth", &r);
    const tsa_finding *f = find(r.a, "DATA.EVERY_NTH");
    assert_non_null(f);
    assert_true(number(f, "period_steps") == 4);
    assert_true(number(f, "stalled_steps") == r.t.stalled_steps);
    assert_true(number(f, "stall_per_stalled_step_ms") == 20);
    assert_true(number(f, "step_without_stall_ms") == 80);
    assert_true(number(f, "workers_estimate") == 5); /* 4 + 20/80, rounded up */
    assert_true(number(f, "ranks") == 4);
    assert_int_equal(f->rank, -1);
    done(&r);
    /* The same stall on every step is DATA.STALL's, not a period. */
    o.stall_every = 1;
    generate_and_analyze(&o, "every", &r);
    assert_null(find(r.a, "DATA.EVERY_NTH"));
    assert_non_null(find(r.a, "DATA.STALL"));
    done(&r);
}

/* A stalled step is one whose stall is over 10% of the median step, here
 * the unstalled step of 100 ms - stall: the edge is stall share 1/11. */
static void test_every_nth_edges(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.steps = 26;
    o.stall_every = 3;
    run r;
    o.stall = 0.0905; /* 9.05 ms <= 9.095 ms */
    generate_and_analyze(&o, "nth_under", &r);
    assert_null(find(r.a, "DATA.EVERY_NTH"));
    done(&r);
    o.stall = 0.0912; /* 9.12 ms > 9.088 ms */
    generate_and_analyze(&o, "nth_over", &r);
    assert_non_null(find(r.a, "DATA.EVERY_NTH"));
    assert_true(number(find(r.a, "DATA.EVERY_NTH"), "period_steps") == 3);
    done(&r);    /* At least three stalled steps: 2 (steps 4 and 8 of 2..9) is too few,
     * 3 (4, 8, 12 of 2..13) is a pattern. */
    o.stall = 0.2;
    o.stall_every = 4;
    o.steps = 10;
    generate_and_analyze(&o, "nth_two", &r);
    assert_int_equal(r.t.stalled_steps, 2);
    assert_null(find(r.a, "DATA.EVERY_NTH"));
    done(&r);
    o.steps = 14;
    generate_and_analyze(&o, "nth_three", &r);
    assert_int_equal(r.t.stalled_steps, 3);
    assert_true(number(find(r.a, "DATA.EVERY_NTH"), "stalled_steps") == 3);
    done(&r);
}

/* ------------------------------------------------------- thresholds */

#define TOTAL 1000000 /* ns of GPU work in each edge job */

typedef struct edge {
    int64_t total;             /* 0: TOTAL */
    const char *kernel;        /* the main kernel, [0, TOTAL - part) */
    const char *part_kernel;   /* or NULL: the part is a copy */
    uint8_t copy_dir;
    uint8_t pageable;
    int64_t part;              /* ns of the part, [TOTAL - part, TOTAL) */
    int64_t sync_gap;          /* > 0: a stream sync, then the GPU idles this long */
    uint8_t sync_kind;
    int steps;                 /* 0: no ProfilerStep ranges */
    const char *device;
} edge;

static tsa_job *edge_job(const edge *e)
{
    tsa_job *job = tsa_job_new("edge");
    tsa_rank *r = tsa_job_add_rank(job);
    r->rank = 0;
    r->host = strdup("h0");
    r->device_name = strdup(e->device ? e->device : "NVIDIA A100-SXM4-80GB");
    int64_t total = e->total ? e->total : TOTAL;
    int64_t end = total + e->sync_gap;
    if (e->steps) {
        tsa_range rg = {.start_ns = 0, .end_ns = end, .name = tsa_rank_intern(r, "ProfilerStep#1")};
        assert_int_equal(tsa_rank_add_range(r, &rg), 0);
    }
    int64_t split = total - e->part;
    tsa_kernel k;
    memset(&k, 0, sizeof k);
    k.nccl = k.gemm = TSA_NONE;
    k.start_ns = 0;
    k.end_ns = split;
    k.name = tsa_rank_intern(r, e->kernel);
    assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
    if (e->sync_gap > 0) {
        tsa_sync y = {.start_ns = split / 2, .end_ns = split, .tid = 1, .kind = e->sync_kind};
        assert_int_equal(tsa_rank_add_sync(r, &y), 0);
    }
    if (e->part_kernel) {
        k.start_ns = split + e->sync_gap;
        k.end_ns = end;
        k.name = tsa_rank_intern(r, e->part_kernel);
        assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
    } else if (e->part > 0) {
        tsa_copy c = {.start_ns = split + e->sync_gap, .end_ns = end, .bytes = 1 << 20,
                      .dir = e->copy_dir, .pageable = e->pageable};
        assert_int_equal(tsa_rank_add_copy(r, &c), 0);
    }
    assert_int_equal(tsa_job_finish(job), 0);
    return job;
}

static int edge_fires(const edge *e, const char *id)
{
    tsa_job *job = edge_job(e);
    tsa_analysis_options o;
    tsa_analysis_default_options(&o);
    o.no_xrank = 1;
    tsa_analysis *a = tsa_analyze(job, &o);
    assert_non_null(a);
    int fired = find(a, id) != NULL;
    tsa_analysis_free(a);
    tsa_job_free(job);
    return fired;
}

/* With `at` ns of the part the share is exactly the threshold: the rule
 * fires one ns over it, not at it, not one ns under. */
static void assert_edge(edge e, const char *id, int64_t at)
{
    int64_t *part = e.sync_gap > 0 ? &e.sync_gap : &e.part;
    for (int64_t d = -1; d <= 1; d++) {
        *part = at + d;
        if (edge_fires(&e, id) != (d > 0))
            fail_msg("%s %s at %lld ns (threshold at %lld)", id,
                     d > 0 ? "does not fire" : "fires", (long long)*part, (long long)at);
    }
}

static int64_t at_share(double threshold)
{
    return (int64_t)llround(threshold * TOTAL);
}

static void test_threshold_edges(void **state)
{
    (void)state;
    edge e = {.kernel = "void at::native::vectorized_elementwise_kernel<4>", .steps = 1};
    e.copy_dir = TSA_COPY_D2D;
    assert_edge(e, "MEM.COPIES", at_share(TSA_TH_MEM_OPS));
    e.copy_dir = TSA_COPY_MEMSET;
    assert_edge(e, "MEM.FILLS", at_share(TSA_TH_FILLS));
    e.copy_dir = TSA_COPY_H2D;
    e.pageable = 1;
    assert_edge(e, "MEM.PAGEABLE", at_share(TSA_TH_PAGEABLE));
    e.pageable = 0;
    e.part = TOTAL / 2; /* pinned: never MEM.PAGEABLE */
    assert_false(edge_fires(&e, "MEM.PAGEABLE"));
    e.part_kernel = "volta_sgemm_128x64_nn";
    e.part = 0;
    assert_edge(e, "EFF.FP32_GEMM", at_share(TSA_TH_FP32_GEMM));
    e.part_kernel = "cutlass_80_tensorop_s1688gemm_64x64_32x4_nn"; /* TF32: not "sgemm" */
    e.part = TOTAL / 2;
    assert_false(edge_fires(&e, "EFF.FP32_GEMM"));
    /* Stream sync returning when the GPU drains; the GPU idles sync_gap
     * of a wall of total + sync_gap: 10,000 of 1,000,000 ns is exactly 1%. */
    edge s = {.total = 990000, .kernel = "void at::native::vectorized_elementwise_kernel<4>",
              .part_kernel = "void at::native::reduce_kernel<512>", .part = 990000 / 2,
              .sync_gap = 1, .sync_kind = TSA_SYNC_STREAM, .steps = 1};
    assert_true(TSA_TH_SYNC_IDLE == 0.01);
    assert_edge(s, "HOST.SYNC", 10000);
    /* A GPU-side wait (cudaStreamWaitEvent) does not block the host. */
    s.sync_kind = TSA_SYNC_STREAM_WAIT_EVENT;
    s.sync_gap = TOTAL / 2;
    assert_false(edge_fires(&s, "HOST.SYNC"));
    /* Without steps nothing is "inside the step". */
    s.sync_kind = TSA_SYNC_DEVICE;
    assert_true(edge_fires(&s, "HOST.SYNC"));
    s.steps = 0;
    assert_false(edge_fires(&s, "HOST.SYNC"));
}

static void test_fp32_dtype_and_device(void **state)
{
    (void)state;
    /* A cuBLAS record's dtype beats the name: a bf16 call is not fp32. */
    edge e = {.kernel = "ampere_sgemm_128x64_tn", .steps = 1};
    tsa_job *job = edge_job(&e);
    tsa_gemm g = {.start_ns = -100, .end_ns = -50, .m = 8, .n = 8, .k = 8, .batch = 1,
                  .flops = 1024, .dtype = TSA_DTYPE_BF16, .kernel = 0};
    assert_int_equal(tsa_rank_add_gemm(&job->ranks[0], &g), 0);
    job->ranks[0].kernels[0].gemm = 0;
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_null(find(a, "EFF.FP32_GEMM"));
    tsa_analysis_free(a);
    job->ranks[0].gemms[0].dtype = TSA_DTYPE_FP32;
    a = tsa_analyze(job, NULL);
    assert_non_null(find(a, "EFF.FP32_GEMM"));
    tsa_analysis_free(a);
    tsa_job_free(job);
    /* V100: fp16 is the faster precision; an unknown GPU still fires. */
    e.device = "Tesla V100-SXM2-32GB";
    job = edge_job(&e);
    a = tsa_analyze(job, NULL);
    assert_true(fabs(number(find(a, "EFF.FP32_GEMM"), "peak_ratio") - 125 / 15.7) < 1e-12);
    assert_non_null(strstr(find(a, "EFF.FP32_GEMM")->fix, "float16"));
    tsa_analysis_free(a);
    tsa_job_free(job);
    e.device = "Some Future GPU";
    job = edge_job(&e);
    a = tsa_analyze(job, NULL);
    assert_true(isnan(number(find(a, "EFF.FP32_GEMM"), "peak_ratio"))); /* unknown, not 0 */
    tsa_analysis_free(a);
    tsa_job_free(job);
}

/* A dump of a GPU the peak table does not hold: its advice rests on the
 * compute capability the capture wrote (device.0.compute_capability):
 * fp16 autocast on a Turing 7.5, never TF32; conditional with none. */
static void test_fp32_advice_from_dump_capability(void **state)
{
    (void)state;
    static const char *const cc[] = {"7.5", "8.6", NULL};
    for (size_t i = 0; i < 3; i++) {
        gen_options o;
        gen_default_options(&o);
        o.fp32_gemm = 1;
        o.device = "Quadro RTX 5000";
        o.device_cc = cc[i];
        run r;
        char name[32];
        snprintf(name, sizeof name, "fp32_cc_%zu", i);
        generate_and_analyze(&o, name, &r);
        assert_int_equal(r.job->ranks[0].compute_capability,
                         i == 0 ? 75 : i == 1 ? 86 : 0);
        const tsa_finding *f = find(r.a, "EFF.FP32_GEMM");
        assert_non_null(f);
        int tf32 = strstr(f->fix, "set_float32_matmul_precision") != NULL;
        int fp16 = strstr(f->fix, "dtype=torch.float16") != NULL;
        assert_int_equal(tf32, i != 0);
        assert_int_equal(fp16, i != 1);
        if (cc[i])
            assert_non_null(strstr(f->title, cc[i]));
        else
            assert_non_null(strstr(f->fix, "If this GPU has tensor cores"));
        done(&r);
    }
}

/* A copy running beside a kernel is hidden: not MEM.COPIES. */
static void test_overlapped_copy(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("overlap");
    tsa_rank *r = tsa_job_add_rank(job);
    r->rank = 0;
    tsa_range rg = {.start_ns = 0, .end_ns = TOTAL, .name = tsa_rank_intern(r, "ProfilerStep#1")};
    assert_int_equal(tsa_rank_add_range(r, &rg), 0);
    tsa_kernel k = {.start_ns = 0, .end_ns = TOTAL, .nccl = TSA_NONE, .gemm = TSA_NONE,
                    .name = tsa_rank_intern(r, "void at::native::reduce_kernel<512>")};
    assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
    tsa_copy c = {.start_ns = TOTAL / 4, .end_ns = TOTAL * 3 / 4, .dir = TSA_COPY_H2D,
                  .pinned = 1};
    assert_int_equal(tsa_rank_add_copy(r, &c), 0);
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_analysis *a = tsa_analyze(job, NULL);
    char set[256];
    advisory_set(a, set, sizeof set);
    assert_string_equal(set, "");
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void test_light_mode_skips_mix(void **state)
{
    (void)state;
    /* Only NCCL kernels (CUPTI light mode) and copies: the mix is unknown. */
    edge e = {.kernel = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", .copy_dir = TSA_COPY_H2D,
              .pageable = 1, .part = TOTAL / 2, .steps = 1};
    assert_false(edge_fires(&e, "MEM.COPIES"));
    assert_false(edge_fires(&e, "MEM.PAGEABLE"));
}

static void test_token_match(void **state)
{
    (void)state;
    assert_true(tsa_name_has_token("volta_sgemm_128x64_nn", "sgemm"));
    assert_true(tsa_name_has_token("void cutlass::Kernel<cutlass_80_simt_sgemm_128x128>", "sgemm"));
    assert_true(tsa_name_has_token("sgemm", "sgemm"));
    assert_false(tsa_name_has_token("cutlass_80_tensorop_s1688gemm_64x64", "sgemm"));
    assert_false(tsa_name_has_token("ampere_gcgemm_64x64_nt", "sgemm"));
    assert_false(tsa_name_has_token("xsgemm_", "sgemm"));
    assert_false(tsa_name_has_token("sgemm2", "sgemm"));
    assert_false(tsa_name_has_token(NULL, "sgemm"));
}

/* ------------------------------------------------ torch.profiler input */

/* Two ProfilerSteps of 1000 us; in each: a pageable H2D copy of 100 us, a
 * volta_sgemm kernel of 500 us, cudaStreamSynchronize returning at its end,
 * then 100 us with nothing on the GPU before an elementwise kernel. */
static const char kineto_trace[] =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"Tesla V100-SXM2-32GB\"}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
    "\"ts\":1000,\"dur\":1000},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
    "\"ts\":2000,\"dur\":1000},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
    "\"pid\":0,\"tid\":7,\"ts\":1000,\"dur\":100,\"args\":{\"stream\":7,\"device\":0,"
    "\"correlation\":1,\"bytes\":1048576}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"volta_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,"
    "\"ts\":1100,\"dur\":500,\"args\":{\"stream\":7,\"device\":0,\"correlation\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":1,"
    "\"tid\":1,\"ts\":1300,\"dur\":300,\"args\":{\"correlation\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::vectorized_elementwise_"
    "kernel<4>\",\"pid\":0,\"tid\":7,\"ts\":1700,\"dur\":300,\"args\":{\"stream\":7,"
    "\"device\":0,\"correlation\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
    "\"pid\":0,\"tid\":7,\"ts\":2000,\"dur\":100,\"args\":{\"stream\":7,\"device\":0,"
    "\"correlation\":5,\"bytes\":1048576}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"volta_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,"
    "\"ts\":2100,\"dur\":500,\"args\":{\"stream\":7,\"device\":0,\"correlation\":6}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":1,"
    "\"tid\":1,\"ts\":2300,\"dur\":300,\"args\":{\"correlation\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::vectorized_elementwise_"
    "kernel<4>\",\"pid\":0,\"tid\":7,\"ts\":2700,\"dur\":300,\"args\":{\"stream\":7,"
    "\"device\":0,\"correlation\":8}}\n"
    "]}\n";

static void test_kineto_input(void **state)
{
    (void)state;
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/kineto", tmpdir);
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/rank0.pt.trace.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(kineto_trace, f);
    fclose(f);
    tsa_job *job = NULL;
    assert_int_equal(tsa_kineto_load(dir, &job), 0);
    tsa_analysis_options o;
    tsa_analysis_default_options(&o);
    o.warmup = 0;
    tsa_analysis *a = tsa_analyze(job, &o);
    assert_non_null(a);
    assert_int_equal(a->steps, 2);
    char set[256];
    advisory_set(a, set, sizeof set);
    assert_string_equal(set, "MEM.COPIES MEM.PAGEABLE EFF.FP32_GEMM HOST.SYNC");
    /* GPU busy 900 us per step: copy 100, sgemm 500; idle 100 after the sync. */
    assert_share(number(find(a, "MEM.PAGEABLE"), "pageable_share"), 100, 900);
    assert_share(number(find(a, "EFF.FP32_GEMM"), "fp32_gemm_share"), 500, 900);
    assert_share(number(find(a, "HOST.SYNC"), "idle_share"), 100, 1000);
    assert_true(number(find(a, "HOST.SYNC"), "syncs_per_step") == 1);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

/* ---------------------------------------------------- shared corpus */

static void test_corpus(void **state)
{
    (void)state;
    /* What fires on the real traces (docs/findings.md explains each). */
    static const struct {
        const char *folder, *fires;
    } want[] = {
        {"alexnet", "MEM.COPIES MEM.PAGEABLE"},   /* 84% pageable H2D copies */
        {"amd_trace", "MEM.COPIES"},              /* 2 H2D copies: 26% of 131 us */
        {"cpu_only", ""},
        {"mtia_inference_trace", ""},
        {"df_index_resolver", "EFF.FP32_GEMM"},   /* volta_sgemm on V100 */
        {"ns_resolution_trace", "EFF.FP32_GEMM"},
        {"trace_diff_control", ""},                /* its copies overlap compute */
        {"trace_diff_test", "MEM.COPIES EFF.FP32_GEMM"},
    };
    int seen = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", TSA_CORPUS_DIR, want[i].folder);
        struct stat st;
        if (stat(dir, &st))
            continue;
        seen++;
        tsa_job *job = NULL;
        char err[256];
        int rc = tsa_kineto_load_ex(dir, &job, err, sizeof err);
        assert_true(rc == 0 || rc == 1);
        tsa_analysis *a = tsa_analyze(job, NULL);
        assert_non_null(a);
        char set[256];
        advisory_set(a, set, sizeof set);
        if (strcmp(set, want[i].fires))
            fail_msg("%s: fired \"%s\", want \"%s\"", want[i].folder, set, want[i].fires);
        tsa_analysis_free(a);
        tsa_job_free(job);
    }
    if (!seen)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy_job_fires_none),
        cmocka_unit_test(test_mix_ground_truth),
        cmocka_unit_test(test_pinned_copies),
        cmocka_unit_test(test_every_nth_stall),
        cmocka_unit_test(test_every_nth_edges),
        cmocka_unit_test(test_threshold_edges),
        cmocka_unit_test(test_fp32_dtype_and_device),
        cmocka_unit_test(test_fp32_advice_from_dump_capability),
        cmocka_unit_test(test_overlapped_copy),
        cmocka_unit_test(test_light_mode_skips_mix),
        cmocka_unit_test(test_token_match),
        cmocka_unit_test(test_kineto_input),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
