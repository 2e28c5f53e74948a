/* The per-rank timeline pass and the budget on small hand-built jobs whose
 * every nanosecond is accounted for by hand; the peak table; FLOPs options. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/analysis.h"
#include "load/job_build.h"
#include "tsc_format.h"
#include "driver/analyze.h"
#include "passes/peak_table.h"
#include "report/report.h"
#include "util/vec.h"

static void add_kernel(tsa_rank *r, const char *name, int64_t s, int64_t e, uint32_t corr)
{
    tsa_kernel k;
    memset(&k, 0, sizeof k);
    k.start_ns = s;
    k.end_ns = e;
    k.name = tsa_rank_intern(r, name);
    k.correlation = corr;
    k.nccl = k.gemm = TSA_NONE;
    assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
}

static void add_step_range(tsa_rank *r, int64_t s, int64_t e)
{
    tsa_range rg = {.start_ns = s, .end_ns = e, .name = tsa_rank_intern(r, "ProfilerStep#1")};
    assert_int_equal(tsa_rank_add_range(r, &rg), 0);
}

/*  0       100     300  310  390 400   500   600      800       1000
 *  |stall  | K1 fwd |  idle (host 310-390) | K2 bwd   |
 *                                          |  nccl kernel  |  idle   |
 */
static tsa_job *gpu_job(void)
{
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    r->rank = 0;
    r->host = strdup("h0");
    r->device_name = strdup("NVIDIA H100 PCIe");
    assert_int_equal(tsa_rank_add_thread(r, 5, "python"), 0);
    assert_int_equal(tsa_rank_add_thread(r, 6, "pt_autograd_0"), 0);
    add_step_range(r, 0, 1000);
    add_kernel(r, "ampere_bf16_gemm", 100, 300, 1);
    add_kernel(r, "vectorized_elementwise_kernel", 400, 600, 2);
    add_kernel(r, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 500, 800, 3);
    /* The loop waits in its DataLoader 0-90: the evidence that makes the
     * step-start gap a data stall. */
    tsa_host_span dl = {.start_ns = 0, .end_ns = 90, .tid = 5, .kind = TSA_HOST_DATA};
    assert_int_equal(TSA_VEC_PUSH(r->host_spans, r->n_host_spans, r->cap_host_spans, dl), 0);
    tsa_api a1 = {.start_ns = 90, .end_ns = 95, .tid = 5, .correlation = 1};
    tsa_api a2 = {.start_ns = 310, .end_ns = 390, .tid = 6, .correlation = 2};
    assert_int_equal(tsa_rank_add_api(r, &a1), 0);
    assert_int_equal(tsa_rank_add_api(r, &a2), 0);
    /* A D2H copy in the idle tail: its own budget line (GPU busy with a
     * copy only), and the copy table. */
    tsa_copy cp = {.start_ns = 900, .end_ns = 950, .bytes = 5000, .dir = TSA_COPY_D2H};
    assert_int_equal(tsa_rank_add_copy(r, &cp), 0);
    r->kernels[0].launch_tid = 5;
    r->kernels[1].launch_tid = 6;
    assert_int_equal(tsa_job_finish(job), 0);
    return job;
}

/* The analysis of a job without the cross-rank pass (one rank's budget). */
static tsa_analysis *analyze_alone(tsa_job *job)
{
    tsa_analysis_options o;
    tsa_analysis_default_options(&o);
    o.no_xrank = 1;
    tsa_analysis *a = tsa_analyze(job, &o);
    assert_non_null(a);
    return a;
}

static int has_finding_id(const tsa_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, id))
            return 1;
    return 0;
}

/* GPU idle inside a kernel's first launch (module loading) is apart from
 * later launches; the larger names the finding.  One step [0, 1000):
 *   kernels a 100-200, b 400-500, a 600-700, b 800-900;
 *   launches 90-95 (a), first_b-390 (b, its first), 510-590 (a), 710-790 (b).
 * Idle 0-100 is the step-start stall; first launch: first_b..390 inside
 * 200-400; later launches 80 + 80. */
static void check_first_launch(int64_t first_b, int64_t want_first, const char *finding)
{
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    r->rank = 0;
    add_step_range(r, 0, 1000);
    static const char *const names[] = {"a", "b", "a", "b"};
    const int64_t api_s[] = {90, first_b, 510, 710}, api_e[] = {95, 390, 590, 790};
    for (int i = 0; i < 4; i++) {
        add_kernel(r, names[i], 100 + 200 * i + 100 * (i > 0), 200 + 200 * i + 100 * (i > 0),
                   (uint32_t)i + 1);
        tsa_api api = {.start_ns = api_s[i], .end_ns = api_e[i], .tid = 5,
                       .correlation = (uint32_t)i + 1};
        assert_int_equal(tsa_rank_add_api(r, &api), 0);
    }
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_analysis *a = analyze_alone(job);
    /* Nothing shows input work at the step's start (issue 38): the gap
     * 0-100 is no data stall; its launch 90-95 is a's first. */
    assert_int_equal(a->idle_ns[TSA_IDLE_FIRST_LAUNCH], want_first + 5);
    assert_int_equal(a->idle_ns[TSA_IDLE_LAUNCH], 160);
    assert_int_equal(a->budget.line_ns[TSA_BL_HOST_IDLE], want_first + 5 + 160);
    assert_int_equal(a->budget.line_ns[TSA_BL_DATA_STALL], 0);
    assert_true(has_finding_id(a, finding));
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void test_first_launch(void **state)
{
    (void)state;
    check_first_launch(250, 140, "HOST.LAUNCH_BOUND");
    check_first_launch(210, 180, "HOST.COLD_START");
}

/* A trace that names a GPU and holds a CUDA runtime call but no kernel:
 * the model ran on the CPU, and the verdict's reason says so; without the
 * runtime call it is a CPU-only input. */
static void test_idle_gpu_reason(void **state)
{
    (void)state;
    for (int with_sync = 0; with_sync < 2; with_sync++) {
        tsa_job *job = tsa_job_new("mem");
        tsa_rank *r = tsa_job_add_rank(job);
        r->rank = 0;
        r->device_name = strdup("NVIDIA A100-PCIE-40GB");
        add_step_range(r, 0, 1000);
        tsa_sync s = {.start_ns = 900, .end_ns = 930, .tid = 5};
        if (with_sync)
            assert_int_equal(tsa_rank_add_sync(r, &s), 0);
        assert_int_equal(tsa_job_finish(job), 0);
        tsa_analysis_options o;
        tsa_analysis_default_options(&o);
        tsa_analysis *a = tsa_analyze(job, &o);
        assert_non_null(a);
        assert_int_equal(a->verdict, TSA_VERDICT_UNKNOWN);
        assert_int_equal(strstr(a->verdict_reason, "(NVIDIA A100-PCIE-40GB)") != NULL, with_sync);
        assert_int_equal(strstr(a->verdict_reason, "ran on the CPU") != NULL, with_sync);
        assert_int_equal(strstr(a->verdict_reason, "CPU-only trace") != NULL, !with_sync);
        tsa_analysis_free(a);
        tsa_job_free(job);
    }
}

/* The same job without the DataLoader span: nothing shows the step
 * waiting for input, so its start gap 0-100 is no data stall (issue 38):
 * the launch 90-95 is host idle, the other 95 ns GPU idle with nothing
 * traced ("other"), and no DATA.STALL advice. */
static void test_stall_needs_input_evidence(void **state)
{
    (void)state;
    tsa_job *job = gpu_job();
    job->ranks[0].n_host_spans = 0;
    tsa_analysis *a = analyze_alone(job);
    const tsa_budget *b = &a->budget;
    assert_int_equal(b->line_ns[TSA_BL_DATA_STALL], 0);
    assert_int_equal(b->line_ns[TSA_BL_HOST_IDLE], 80 + 5);
    assert_int_equal(b->line_ns[TSA_BL_OTHER], 170 + 95);
    assert_int_equal(a->idle_ns[TSA_IDLE_DATA_START], 0);
    assert_int_equal(a->idle_ns[TSA_IDLE_UNTRACED], 170 + 95);
    assert_false(has_finding_id(a, "DATA.STALL"));
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void test_gpu_budget_by_hand(void **state)
{
    (void)state;
    tsa_job *job = gpu_job();
    tsa_analysis_options o;
    tsa_analysis_default_options(&o);
    o.no_xrank = 1;
    o.peak_tflops = 1;       /* 1e12 FLOP/s */
    o.flops_per_step = 1e5;  /* 100 ns of useful work */
    tsa_analysis *a = tsa_analyze(job, &o);
    assert_non_null(a);
    assert_int_equal(a->method, TSA_STEPS_NVTX);
    assert_int_equal(a->steps, 1);
    const tsa_budget *b = &a->budget;
    assert_int_equal(b->wall_ns, 1000);
    assert_int_equal(b->line_ns[TSA_BL_USEFUL], 100);
    assert_int_equal(b->line_ns[TSA_BL_OVERHEAD], 300);
    assert_int_equal(b->line_ns[TSA_BL_DATA_STALL], 100);
    assert_int_equal(b->line_ns[TSA_BL_COMM_WAIT], 0);
    assert_int_equal(b->line_ns[TSA_BL_COMM_TRANSFER], 200);
    assert_int_equal(b->line_ns[TSA_BL_HOST_IDLE], 80);
    assert_int_equal(b->line_ns[TSA_BL_COPY], 50);
    assert_int_equal(b->line_ns[TSA_BL_OTHER], 170);
    assert_true(fabs(b->mfu - 0.1) < 1e-12);
    assert_int_equal(a->overlap.comm_ns, 300);
    assert_int_equal(a->overlap.overlapped_ns, 100);
    assert_int_equal(a->overlap.exposed_ns, 200);
    /* Phases of the step. */
    const tsa_step *st = &job->ranks[0].steps[0];
    assert_int_equal(st->phase_ns[TSA_PHASE_FORWARD], 200);
    assert_int_equal(st->phase_ns[TSA_PHASE_BACKWARD], 200);
    assert_int_equal(st->phase_ns[TSA_PHASE_DATA], 100);
    assert_int_equal(st->phase_ns[TSA_PHASE_COMM], 200);
    assert_int_equal(st->phase_ns[TSA_PHASE_IDLE], 80);
    assert_int_equal(st->phase_ns[TSA_PHASE_OTHER], 220);
    /* Kernel categories. */
    assert_int_equal(a->kcat_ns[TSA_KCAT_GEMM], 200);
    assert_int_equal(a->kcat_ns[TSA_KCAT_ELEMENTWISE], 200);
    assert_int_equal(a->kcat_ns[TSA_KCAT_COMM], 300);
    assert_int_equal(a->n_copies, 1);
    assert_int_equal(a->copies[0].dir, TSA_COPY_D2H);
    assert_int_equal(a->copies[0].bytes, 5000);
    assert_true(a->copies[0].gbps == 100.0); /* 5000 B / 50 ns */
    /* Host idle 8%, stall 10%, exposed 20%. */
    int ids = 0;
    for (size_t i = 0; i < a->findings.n; i++) {
        const char *id = a->findings.items[i].id;
        ids |= !strcmp(id, "DATA.STALL") ? 1 : !strcmp(id, "COMM.EXPOSED") ? 2
               : !strcmp(id, "EFF.LOW_MFU") ? 4 : !strcmp(id, "HOST.LAUNCH_BOUND") ? 8 : 0;
    }
    assert_int_equal(ids, 1 | 2 | 4);
    /* Most recoverable first: the overhead (300 ns) before the exposed comm (200 ns). */
    assert_string_equal(a->findings.items[0].id, "EFF.LOW_MFU");
    tsa_analysis_free(a);

    /* Without FLOPs MFU is unknown and useful compute is all compute. */
    o.flops_per_step = 0;
    a = tsa_analyze(job, &o);
    assert_non_null(a);
    assert_true(isnan(a->budget.mfu));
    assert_int_equal(a->budget.line_ns[TSA_BL_USEFUL], 400);
    assert_int_equal(a->budget.line_ns[TSA_BL_OVERHEAD], 0);
    char *json = tsa_report_json(a);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"mfu\":\tnull"));
    free(json);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void add_coll(tsa_rank *r, int64_t s, int64_t e, uint64_t seq)
{
    tsa_nccl_op op;
    memset(&op, 0, sizeof op);
    op.op = TSC_NCCL_ALLREDUCE;
    op.comm_id = 9;
    op.comm_size = 2;
    op.seq = seq;
    op.bytes = 1 << 20;
    op.start_ns = s;
    op.end_ns = e;
    op.kernel = TSA_NONE;
    assert_int_equal(tsa_rank_add_nccl(r, &op), 0);
}

/* Host-only: compute is the time between collectives; wait = latest
 * arrival - own arrival. */
static void test_host_only_wait(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *a = tsa_job_add_rank(job);
    a->rank = 0;
    add_step_range(a, 0, 1000);
    add_coll(a, 200, 300, 0);
    add_coll(a, 600, 900, 1);
    tsa_rank *b = tsa_job_add_rank(job);
    b->rank = 1;
    add_step_range(b, 0, 1000);
    add_coll(b, 250, 300, 0);
    add_coll(b, 700, 900, 1);
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_analysis *an = analyze_alone(job);
    assert_int_equal(an->gpu, 0);
    const tsa_rank_result *r0 = &an->ranks[0], *r1 = &an->ranks[1];
    assert_int_equal(r0->budget.wall_ns, 1000);
    assert_int_equal(r0->compute_ns, 600);
    assert_int_equal(r0->overlap.comm_ns, 400);
    assert_int_equal(r0->overlap.exposed_wait_ns, 150);
    assert_int_equal(r0->overlap.exposed_transfer_ns, 250);
    assert_int_equal(r1->compute_ns, 750);
    assert_int_equal(r1->overlap.exposed_wait_ns, 0);
    assert_int_equal(r1->overlap.exposed_transfer_ns, 250);
    assert_int_equal(an->budget.wall_ns, 2000);
    assert_int_equal(an->budget.line_ns[TSA_BL_COMM_WAIT], 150);
    assert_int_equal(an->budget.line_ns[TSA_BL_OTHER], 0);
    assert_int_equal(an->colls[0].count, 4);
    /* busbw: 4 MiB * 2(n-1)/n over the transfer time (issue 38): the
     * calls' 650 ns less rank 0's 50 + 100 ns of waiting for rank 1. */
    assert_true(fabs(an->colls[0].busbw_gbps - 4.0 * (1 << 20) / 500.0) < 1e-9);
    tsa_analysis_free(an);
    tsa_job_free(job);
}

static void add_host_op(tsa_rank *r, uint8_t op, int64_t s, int64_t e, uint64_t seq, int depth)
{
    tsa_nccl_op x;
    memset(&x, 0, sizeof x);
    x.op = op;
    x.comm_id = op == TSC_NCCL_ALLREDUCE ? 9 : 0;
    x.comm_size = op == TSC_NCCL_ALLREDUCE ? 2 : 0;
    x.seq = seq;
    x.start_ns = s;
    x.end_ns = e;
    x.tid = 7;
    x.group_depth = (uint8_t)depth;
    x.kernel = TSA_NONE;
    assert_int_equal(tsa_rank_add_nccl(r, &x), 0);
}

/* Grouped calls return at once: the waiting happens in the GroupEnd. */
static void test_grouped_wait(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    int64_t arrive[2] = {101, 250};
    for (int k = 0; k < 2; k++) {
        tsa_rank *r = tsa_job_add_rank(job);
        r->rank = k;
        add_step_range(r, 0, 1000);
        add_host_op(r, TSC_NCCL_GROUP_START, arrive[k] - 1, arrive[k], 0, 0);
        add_host_op(r, TSC_NCCL_ALLREDUCE, arrive[k], arrive[k] + 1, 0, 1);
        add_host_op(r, TSC_NCCL_GROUP_END, arrive[k] + 1, 300, 0, 1);
    }
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_analysis *a = analyze_alone(job);
    assert_int_equal(a->ranks[0].overlap.comm_ns, 200);       /* [100, 300) */
    assert_int_equal(a->ranks[0].overlap.exposed_wait_ns, 149); /* [101, 250) */
    assert_int_equal(a->ranks[1].overlap.exposed_wait_ns, 0);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

/* Rank 0 of job with one step [s, e). */
static tsa_rank *step_rank(tsa_job *job, int64_t s, int64_t e)
{
    tsa_rank *r = tsa_job_add_rank(job);
    assert_non_null(r);
    add_step_range(r, s, e);
    return r;
}

/* Finishes the job and analyses it without the cross-rank pass. */
static tsa_analysis *finish_and_analyze_alone(tsa_job *job)
{
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_analysis *a = analyze_alone(job);
    return a;
}

/* Members of a group get their share of the group's time (by bytes);
 * GroupStart/GroupEnd are never rows; a share is not a bandwidth. */
static void test_group_shares(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = step_rank(job, 0, 1000);
    add_host_op(r, TSC_NCCL_GROUP_START, 100, 101, 0, 0);
    add_host_op(r, TSC_NCCL_ALLREDUCE, 101, 102, 0, 1);
    r->nccl[r->n_nccl - 1].bytes = 3000;
    add_host_op(r, TSC_NCCL_SEND, 102, 103, 0, 1);
    r->nccl[r->n_nccl - 1].bytes = 1000;
    add_host_op(r, TSC_NCCL_GROUP_END, 103, 503, 0, 1);
    add_host_op(r, TSC_NCCL_ALLREDUCE, 600, 700, 1, 0); /* blocking, its own time */
    r->nccl[r->n_nccl - 1].bytes = 1000;
    tsa_analysis *a = finish_and_analyze_alone(job);
    assert_int_equal(a->n_colls, 2);
    int64_t exposed = 0;
    for (size_t i = 0; i < a->n_colls; i++) {
        const tsa_coll_row *c = &a->colls[i];
        assert_true(c->op != TSC_NCCL_GROUP_START && c->op != TSC_NCCL_GROUP_END);
        exposed += c->exposed_ns;
        if (c->op == TSC_NCCL_ALLREDUCE) {
            /* [100, 503) by bytes 3000:1000 -> 302 + the blocking call's 100 */
            assert_int_equal(c->count, 2);
            assert_int_equal(c->ns, 302 + 100);
            assert_int_equal(c->exposed_ns, 302 + 100);
            /* Bus bandwidth from the blocking call only: 1000 B / 100 ns. */
            assert_true(c->busbw_gbps == 10.0);
        } else {
            assert_int_equal(c->op, TSC_NCCL_SEND);
            assert_int_equal(c->count, 1);
            assert_int_equal(c->ns, 101);
            assert_true(isnan(c->busbw_gbps)); /* returned at once */
        }
    }
    assert_int_equal(exposed, a->overlap.exposed_ns); /* still a partition */
    char *json = tsa_report_json(a);
    assert_non_null(json);
    assert_null(strstr(json, "GroupEnd"));
    assert_non_null(strstr(json, "\"busbw_gbps\":\tnull"));
    free(json);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void test_peak_table(void **state)
{
    (void)state;
    const char *e;
    assert_true(tsa_peak_flops("NVIDIA H100 80GB HBM3", TSA_DTYPE_BF16, &e) == 989.5e12);
    assert_string_equal(e, "H100 SXM");
    assert_true(tsa_peak_flops("NVIDIA H100 PCIe", TSA_DTYPE_FP16, &e) == 756.5e12);
    assert_string_equal(e, "H100 PCIe");
    assert_true(tsa_peak_flops("NVIDIA A100-SXM4-80GB", TSA_DTYPE_TF32, &e) == 156e12);
    assert_true(tsa_peak_flops("NVIDIA A10", TSA_DTYPE_BF16, &e) == 125e12);
    assert_string_equal(e, "A10");
    assert_true(tsa_peak_flops("NVIDIA L40S", TSA_DTYPE_BF16, &e) == 362.05e12);
    assert_true(tsa_peak_flops("NVIDIA L4", TSA_DTYPE_FP8, &e) == 242.5e12);
    assert_string_equal(e, "L4");
    assert_true(tsa_peak_flops("NVIDIA GB200", TSA_DTYPE_BF16, &e) == 2500e12);
    assert_true(tsa_peak_flops("NVIDIA B200", TSA_DTYPE_BF16, &e) == 2250e12);
    assert_true(tsa_peak_flops("NVIDIA H200", TSA_DTYPE_FP8, &e) == 1979e12);
    assert_true(tsa_peak_flops("AMD Instinct MI300X", TSA_DTYPE_BF16, &e) == 1307.4e12);
    assert_true(tsa_peak_flops("Tesla V100-SXM2-32GB", TSA_DTYPE_FP16, &e) == 125e12);
    assert_true(tsa_peak_flops("Tesla T4", TSA_DTYPE_FP16, &e) == 65e12);
    assert_true(tsa_peak_flops("Tesla T4", TSA_DTYPE_BF16, &e) == 0); /* no bf16 */
    assert_true(tsa_peak_flops("NVIDIA H100 80GB HBM3", TSA_DTYPE_UNKNOWN, &e) == 989.5e12);
    assert_true(tsa_peak_flops("Unknown GPU", TSA_DTYPE_BF16, &e) == 0);
    assert_string_equal(e, "unknown");
    assert_true(tsa_peak_flops(NULL, TSA_DTYPE_BF16, NULL) == 0);
    /* Exact models (issue 38): a neighbour's row is never taken.  Figures
     * from the datasheets (RTX A4000: 153.4 sparse tensor TFLOP/s, 19.2
     * fp32; H100 NVL: 1,671 sparse bf16, 60 fp32). */
    assert_true(tsa_peak_flops("NVIDIA RTX A4000", TSA_DTYPE_BF16, &e) == 76.7e12);
    assert_string_equal(e, "RTX A4000");
    assert_true(tsa_peak_flops("NVIDIA A40", TSA_DTYPE_BF16, &e) == 149.7e12);
    assert_string_equal(e, "A40");
    assert_true(tsa_peak_flops("NVIDIA H100 NVL", TSA_DTYPE_BF16, &e) == 835.5e12);
    assert_string_equal(e, "H100 NVL");
    assert_true(tsa_peak_flops("NVIDIA H100 NVL", TSA_DTYPE_FP32, &e) == 60e12);
    assert_true(tsa_peak_flops("Tesla V100-PCIE-16GB", TSA_DTYPE_FP16, &e) == 112e12);
    assert_string_equal(e, "V100 PCIe");
    assert_true(tsa_peak_flops("NVIDIA A100-PCIE-40GB", TSA_DTYPE_BF16, &e) == 312e12);
    assert_true(tsa_peak_flops("AMD Instinct MI300X VF", TSA_DTYPE_BF16, &e) == 1307.4e12);
    /* names no row holds exactly: unknown, not the nearest row */
    static const char *const unknown[] = {"NVIDIA A10G", "NVIDIA H100", "NVIDIA RTX A4000 Laptop GPU",
                                          "NVIDIA GeForce RTX 3090 Ti", "Tesla V100-DGXS-32GB",
                                          "AMD Radeon Graphics", "NVIDIA L40S-48C", ""};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_true(tsa_peak_flops(unknown[i], TSA_DTYPE_BF16, &e) == 0);
        assert_string_equal(e, "unknown");
    }
}

static void test_flops_formula(void **state)
{
    (void)state;
    tsa_job *job = gpu_job();
    tsa_analysis_options o;
    tsa_analysis_default_options(&o);
    o.no_xrank = 1;
    o.params = 1e9;
    o.tokens_per_step = 1000;
    o.layers = 2;
    o.seq = 10;
    o.hidden = 4;
    tsa_analysis *a = tsa_analyze(job, &o);
    assert_non_null(a);
    assert_true(a->flops == (6e9 + 12.0 * 2 * 10 * 4) * 1000);
    assert_string_equal(a->flops_source, "formula");
    assert_string_equal(a->peak_source, "H100 PCIe");
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void test_empty_job(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_job_add_rank(job);
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    assert_int_equal(a->budget.wall_ns, 0);
    assert_int_equal(a->verdict, TSA_VERDICT_UNKNOWN);
    char *s = tsa_report_json(a);
    assert_non_null(s);
    free(s);
    FILE *devnull = fopen("/dev/null", "w");
    tsa_report_print_text(devnull, a, 1);
    fclose(devnull);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void test_kernel_categories(void **state)
{
    (void)state;
    assert_int_equal(tsa_kernel_category("ncclDevKernel_ReduceScatter_Sum"), TSA_KCAT_COMM);
    assert_int_equal(tsa_kernel_category("multi_tensor_apply_kernel<AdamFunctor>"), TSA_KCAT_OPTIMIZER);
    assert_int_equal(tsa_kernel_category("flash_bwd_dq_dk_dv_loop_kernel"), TSA_KCAT_ATTENTION);
    assert_int_equal(tsa_kernel_category("sm90_xmma_gemm_bf16"), TSA_KCAT_GEMM);
    assert_int_equal(tsa_kernel_category("cutlass::Kernel2<cutlass_80_tensorop>"), TSA_KCAT_GEMM);
    assert_int_equal(tsa_kernel_category("vectorized_layer_norm_kernel"), TSA_KCAT_NORM);
    assert_int_equal(tsa_kernel_category("reduce_kernel<512>"), TSA_KCAT_REDUCTION);
    assert_int_equal(tsa_kernel_category("vectorized_elementwise_kernel<4>"), TSA_KCAT_ELEMENTWISE);
    assert_int_equal(tsa_kernel_category("Memcpy DtoD"), TSA_KCAT_COPY);
    assert_int_equal(tsa_kernel_category("my_custom_kernel"), TSA_KCAT_OTHER);
    assert_int_equal(tsa_kernel_category(""), TSA_KCAT_OTHER);
    assert_int_equal(tsa_kernel_category(NULL), TSA_KCAT_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_budget_by_hand),
        cmocka_unit_test(test_stall_needs_input_evidence),
        cmocka_unit_test(test_first_launch),
        cmocka_unit_test(test_idle_gpu_reason),
        cmocka_unit_test(test_host_only_wait),
        cmocka_unit_test(test_grouped_wait),
        cmocka_unit_test(test_group_shares),
        cmocka_unit_test(test_peak_table),
        cmocka_unit_test(test_flops_formula),
        cmocka_unit_test(test_empty_job),
        cmocka_unit_test(test_kernel_categories),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
