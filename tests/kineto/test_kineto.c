/* torch.profiler input: generated traces with known answers go in, the
 * model coming out is checked record by record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis.h"
#include "load/job_build.h"
#include "model/memory.h"
#include "load/kineto_load.h"
#include "kineto_gen.h"
#include "kineto/kineto_internal.h"
#include "test_util.h"
#include "tsc_format.h"
#include "driver/analyze.h"
#include "passes/memory.h"

#define US 1000LL
#define BASE 1700000000000000000LL

static void test_us_to_ns_exact(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;
        int64_t ns;
    } cases[] = {
        {"1.5", 0, 1500},
        {"12", 0, 12000},
        {"1700000000123456.789", 0, 1700000000123456789LL},  /* a double would round this */
        {"0.0005", 0, 1},
        {"0.0004", 0, 0},
        {"-2.5", 0, -2500},
        {"1e3", 0, 1000000},
        {"2.5E-1", 0, 250},
        {"abc", -1, 0},
        {"1.2.3", -1, 0},
        {"", -1, 0},
        {"99999999999999999999999", -1, 0},
        {"3000000000000000", -1, 0},   /* 3e18 ns: beyond the overflow guard */
        {"-3e15", -1, 0},
        /* the one-pass reading's edges: what it leaves to the full one */
        {"999999999999999.9995", 0, 1000000000000000000LL},
        {"1234567890123456", 0, 1234567890123456000LL},
        {"+1.5", 0, 1500},
        {"5.", 0, 5000},
        {"-0.0005", 0, -1},
        {"007", 0, 7000},
        {".5", -1, 0},
        {"-", -1, 0},
        {"1.5x", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ns = 0;
        int rc = kineto_us_to_ns(cases[i].text, strlen(cases[i].text), &ns);
        assert_int_equal(rc, cases[i].rc);
        if (!rc)
            assert_int_equal(ns, cases[i].ns);
    }
    /* a string value may hold a NUL: the text ends there */
    int64_t ns = 0;
    assert_int_equal(kineto_us_to_ns("12\0.5", 5, &ns), 0);
    assert_int_equal(ns, 12000);
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(kineto_nccl_op_from_collective("allreduce"), TSC_NCCL_ALLREDUCE);
    assert_int_equal(kineto_nccl_op_from_collective("_reduce_scatter_base"), TSC_NCCL_REDUCESCATTER);
    assert_int_equal(kineto_nccl_op_from_collective("all_gather_into_tensor"), TSC_NCCL_ALLGATHER);
    assert_int_equal(kineto_nccl_op_from_collective("barrier?"), 0);
    assert_int_equal(kineto_nccl_op_from_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"),
                     TSC_NCCL_REDUCESCATTER);
    assert_int_equal(kineto_nccl_op_from_kernel("ncclKernel_Reduce_RING_LL_Sum_float(x)"),
                     TSC_NCCL_REDUCE);
    /* Point-to-point kernels: the name does not say the direction. */
    assert_int_equal(kineto_nccl_op_from_kernel("ncclDevKernel_SendRecv(x)"), TSC_NCCL_SEND);
    assert_int_equal(kineto_nccl_op_from_kernel(
                         "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"),
                     TSC_NCCL_SEND);
    assert_int_equal(kineto_nccl_op_from_kernel("ncclDevKernel_Recv(x)"), TSC_NCCL_RECV);
    assert_int_equal(kineto_nccl_op_from_kernel("gemm"), 0);
    assert_int_equal(tsa_kernel_category("ncclDevKernel_Generic"), TSA_KCAT_COMM);
    assert_int_equal(tsa_kernel_category("sm90_xmma_gemm_bf16"), TSA_KCAT_GEMM);
    assert_int_equal(tsa_kernel_category("flash_fwd_kernel"), TSA_KCAT_ATTENTION);
    assert_int_equal(tsa_kernel_category("void multi_tensor_apply_kernel<X, AdamFunctor>"),
                     TSA_KCAT_OPTIMIZER);
    assert_int_equal(tsa_kernel_category("vectorized_layer_norm_kernel"), TSA_KCAT_NORM);
    assert_int_equal(tsa_kernel_category("reduce_kernel<512>"), TSA_KCAT_REDUCTION);
    assert_int_equal(tsa_kernel_category("vectorized_elementwise_kernel"),
                     TSA_KCAT_ELEMENTWISE);
    assert_int_equal(tsa_kernel_category("mystery"), TSA_KCAT_OTHER);
    unsigned size;
    assert_int_equal(kineto_dtype_from_torch("BFloat16", &size), TSC_DT_BFLOAT16);
    assert_int_equal(size, 2);
    assert_int_equal(kineto_dtype_from_torch("nope", &size), TSC_DT_NONE);
    assert_int_equal(size, 0);
}

static const char *kernel_name(const tsa_rank *r, size_t i)
{
    return r->strings[r->kernels[i].name];
}

/* Everything the generator put in one rank, checked against its layout. */
static void check_rank(const tsa_rank *r, int rank, int world, int steps, int64_t base,
                       int delay_us, int with_seq)
{
    assert_int_equal(r->rank, rank);
    assert_int_equal(r->world_size, world);
    assert_string_equal(r->device_name, "NVIDIA H100 80GB HBM3");
    assert_true(r->clean_end);
    assert_int_equal(r->n_kernels, (size_t)steps * 4);
    assert_int_equal(r->n_copies, (size_t)steps);
    assert_int_equal(r->n_syncs, (size_t)steps);
    assert_int_equal(r->n_apis, (size_t)steps * 5);   /* memcpy + 4 launches */
    assert_int_equal(r->n_ranges, (size_t)steps);
    assert_int_equal(r->n_nccl, (size_t)steps);
    assert_int_equal(r->n_threads, 2);
    int found_autograd = 0;
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].tid == KGEN_AUTOGRAD_TID)
            found_autograd = !strcmp(r->strings[r->threads[i].name], "pt_autograd_0");
    assert_true(found_autograd);
    const int64_t D = delay_us * US;
    for (int s = 0; s < steps; s++) {
        int64_t t0 = base + (int64_t)s * KGEN_STEP_US * US;
        /* kernels sorted by start: fwd gemm, bwd gemm, nccl, optimizer */
        const tsa_kernel *fwd = &r->kernels[s * 4];
        assert_int_equal(fwd->start_ns, t0 + 30 * US + 250);
        assert_int_equal(fwd->end_ns, t0 + 230 * US + 250 + D);
        assert_int_equal(fwd->category, TSA_KCAT_GEMM);
        assert_int_equal(fwd->stream, KGEN_COMPUTE_STREAM);
        assert_int_equal(fwd->launch_tid, KGEN_MAIN_TID);
        assert_int_equal(fwd->grid[0], 132);
        assert_int_equal(fwd->grid[1], 2);
        assert_int_equal(fwd->block[0], 256);
        assert_int_equal(fwd->nccl, TSA_NONE);
        const tsa_kernel *bwd = &r->kernels[s * 4 + 1];
        assert_int_equal(bwd->launch_tid, KGEN_AUTOGRAD_TID);
        assert_string_equal(kernel_name(r, s * 4 + 1), "cutlass_80_wgrad_gemm_kernel");
        const tsa_kernel *nk = &r->kernels[s * 4 + 2];
        assert_int_equal(nk->category, TSA_KCAT_COMM);
        assert_int_equal(nk->stream, KGEN_NCCL_STREAM);
        assert_int_equal(nk->nccl, s);
        const tsa_kernel *opt = &r->kernels[s * 4 + 3];
        assert_int_equal(opt->category, TSA_KCAT_OPTIMIZER);

        const tsa_nccl_op *op = &r->nccl[s];
        assert_int_equal(op->op, TSC_NCCL_ALLREDUCE);
        assert_int_equal(op->dtype, TSC_DT_FLOAT32);
        assert_int_equal(op->count, KGEN_ALLREDUCE_NELEMS);
        assert_int_equal(op->bytes, (uint64_t)KGEN_ALLREDUCE_NELEMS * 4);
        assert_int_equal(op->comm_size, (uint32_t)world);
        assert_int_equal(op->comm_rank, (uint32_t)rank);
        assert_int_equal(op->seq, with_seq ? 1000 + (uint64_t)s : (uint64_t)s);
        assert_int_equal(op->tid, KGEN_AUTOGRAD_TID);
        assert_int_equal(op->kernel, s * 4 + 2);
        assert_int_equal(op->start_ns, t0 + 445 * US + D);   /* the CPU op */
        assert_int_equal(op->end_ns, t0 + 455 * US + D);
        assert_int_equal(op->gpu_start_ns, t0 + 450 * US + D);
        assert_int_equal(op->gpu_end_ns, t0 + 900 * US);      /* same on every rank */
        assert_int_equal(op->stream, KGEN_NCCL_STREAM);

        assert_int_equal(r->copies[s].dir, TSA_COPY_H2D);
        assert_int_equal(r->copies[s].bytes, 4096);
        assert_int_equal(r->copies[s].pinned, 1);
        assert_int_equal(r->copies[s].start_ns, t0 + 5 * US);
        assert_int_equal(r->syncs[s].kind, TSA_SYNC_STREAM);
        assert_int_equal(r->syncs[s].tid, KGEN_MAIN_TID);
        assert_int_equal(r->syncs[s].end_ns, t0 + 965 * US);
        char step[32];
        snprintf(step, sizeof step, "ProfilerStep#%d", s);
        assert_string_equal(r->strings[r->ranges[s].name], step);
        assert_int_equal(r->ranges[s].start_ns, t0);
        assert_int_equal(r->ranges[s].end_ns, t0 + 990 * US);
    }
    assert_int_equal(r->first_ns, base);
    assert_int_equal(r->last_ns, base + (int64_t)(steps - 1) * KGEN_STEP_US * US + 990 * US);
    /* all communicators of all ranks agree on the id */
    for (size_t i = 1; i < r->n_nccl; i++)
        assert_true(r->nccl[i].comm_id == r->nccl[0].comm_id);
}

static void test_load_dir(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kin");
    assert_non_null(dir);
    for (int rank = 0; rank < 3; rank++) {
        char path[512];
        /* names as tensorboard_trace_handler writes them; rank 1 gzipped */
        snprintf(path, sizeof path, "%s/node%d_%d.1700000000.pt.trace.json%s", dir, rank / 2,
                 KGEN_PID(rank), rank == 1 ? ".gz" : "");
        kgen_opts o = {.rank = rank, .world_size = 3, .steps = 4, .base_ns = BASE,
                       .delay_us = rank == 2 ? 40 : 0, .with_seq = rank != 0 ? 0 : 0,
                       .gzip = rank == 1};
        assert_int_equal(kgen_write(path, &o), 0);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/not_a_trace.json", dir);
    assert_int_equal(tu_write_file(path, "{\"a\": 1}", 8), 0);
    /* tscope's own export written into the job directory is not a rank */
    static const char export_head[] =
        "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"tscope\"},\"traceEvents\":[]}";
    snprintf(path, sizeof path, "%s/exported.json", dir);
    assert_int_equal(tu_write_file(path, export_head, strlen(export_head)), 0);
    assert_int_equal(tsa_kineto_dir(dir), 3);

    tsa_job *job = NULL;
    assert_int_equal(tsa_kineto_load(dir, &job), 0);
    assert_non_null(job);
    assert_int_equal(job->n_ranks, 3);
    assert_int_equal(job->n_problems, 0);
    for (int rank = 0; rank < 3; rank++) {
        check_rank(&job->ranks[rank], rank, 3, 4, BASE, rank == 2 ? 40 : 0, 0);
        char host[16];
        snprintf(host, sizeof host, "node%d", rank / 2);
        assert_string_equal(job->ranks[rank].host, host);
    }
    assert_true(job->ranks[0].nccl[0].comm_id == job->ranks[2].nccl[0].comm_id);
    tsa_job_free(job);

    /* tscope dumps in the same directory win: it is not a Kineto job */
    snprintf(path, sizeof path, "%s/x.tsd", dir);
    assert_int_equal(tu_write_file(path, "x", 1), 0);
    assert_int_equal(tsa_kineto_dir(dir), 0);
    tu_rmtree(dir);
    free(dir);
    assert_int_equal(tsa_kineto_dir("/nonexistent/tscope"), -1);
}

static void test_seq_and_no_base(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kseq");
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    kgen_opts o = {.rank = 1, .world_size = 2, .steps = 3, .with_seq = 1};
    assert_int_equal(kgen_write(path, &o), 0);
    tsa_rank r;
    char err[256];
    tsa_kineto_stats st;
    assert_int_equal(tsa_kineto_load_file(path, &r, &st, err, sizeof err), 0);
    check_rank(&r, 1, 2, 3, 0, 0, 1);
    /* 2 thread_name + per step: step, memcpy call + copy, 3 launches + kernels,
     * the collective's CPU op, its launch + kernel, the sync */
    assert_int_equal(st.events, 2 + 3 * 13);
    assert_true(st.bytes > 1000);
    tsa_rank_free_contents(&r);
    tu_rmtree(dir);
    free(dir);
}

/* [memory] events (profile_memory=True): a CUDA device's reserved total
 * becomes a pool size when it changes, on the job's clock; CPU totals and
 * events without a total are left out; totalGlobalMem is the capacity. */
static void test_memory_events(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kmem");
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
#define MEM(ts, type, id, total)                                                              \
    "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "      \
    "\"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"args\": {\"Device Type\": " #type                 \
    ", \"Device Id\": " #id ", \"Bytes\": 512, \"Total Allocated\": 7, \"Total Reserved\": " #total "}}"
    fputs("{\"baseTimeNanoseconds\": 1700000000000000000,\n"
          "\"deviceProperties\": [{\"id\": 0, \"name\": \"GPU X\", \"totalGlobalMem\": 8589934592},"
          " {\"id\": 1, \"name\": \"GPU Y\", \"totalGlobalMem\": 4}],\n"
          "\"traceEvents\": [" MEM(10, 1, 0, 1048576) ", " MEM(11, 1, 0, 1048576) ", "
          MEM(12, 0, 0, 999) ", " MEM(13.5, 1, 0, 3145728) ", "
          "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 14, \"args\": {\"Device Type\": 1}}, "
          MEM(15, 1, 0, 2097152) "]}\n", f);
#undef MEM
    fclose(f);
    tsa_rank r;
    char err[256];
    assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), 0);
    assert_int_equal(r.mem_total_bytes, 8589934592ull);
    assert_int_equal(r.n_mem, 3);
    const int64_t t[3] = {BASE + 10 * US, BASE + 13500, BASE + 15 * US};
    const uint64_t bytes[3] = {1048576, 3145728, 2097152};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r.mem[i].t_ns, t[i]);
        assert_int_equal(r.mem[i].bytes, bytes[i]);
        assert_int_equal(r.mem[i].op, TSA_MEM_POOL);
        assert_int_equal(r.mem[i].source, TSA_MEM_SRC_ALLOCATOR_TOTAL);
        assert_int_equal(r.mem[i].device, 0);
    }
    tsa_mem_rank m;
    assert_int_equal(tsa_mem_rank_measure(&r, &m), 0);
    assert_int_equal(m.peak_bytes, 3145728);
    assert_int_equal(m.peak_ns, BASE + 13500);
    assert_false(m.allocs_seen);
    tsa_rank_free_contents(&r);
    tu_rmtree(dir);
    free(dir);
}

static void test_no_distributed_info(void **state)
{
    (void)state;
    char *dir = tu_tempdir("knodist");
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/t%d.json", dir, i);
        kgen_opts o = {.rank = i, .world_size = 2, .steps = 2, .no_dist_info = 1};
        assert_int_equal(kgen_write(path, &o), 0);
    }
    tsa_job *job;
    assert_int_equal(tsa_kineto_load(dir, &job), 0);
    assert_int_equal(job->n_ranks, 2);
    assert_int_equal(job->ranks[0].rank, 0);
    assert_int_equal(job->ranks[1].rank, 1);
    assert_int_equal(job->ranks[1].world_size, 2);
    assert_string_equal(job->ranks[0].host, "unknown");
    tsa_job_free(job);
    tu_rmtree(dir);
    free(dir);
}

/* The same job whatever the number of threads parsing its traces: ranks
 * and problems in the order one thread gives (path order for problems,
 * then rank order), a broken trace and a second trace of one rank among
 * them. */
static void test_load_threads(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kthr");
    assert_non_null(dir);
    static const int ranks[] = {3, 0, 4, 1, 2, 1};
    char path[512];
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/t%d_%d.json%s", dir, i, KGEN_PID(ranks[i]),
                 i % 2 ? ".gz" : "");
        kgen_opts o = {.rank = ranks[i], .world_size = 5, .steps = 3 + i, .base_ns = BASE,
                       .gzip = i % 2};
        assert_int_equal(kgen_write(path, &o), 0);
    }
    /* t2 and t4 cut short */
    for (int i = 2; i <= 4; i += 2) {
        snprintf(path, sizeof path, "%s/t%d_%d.json", dir, i, KGEN_PID(ranks[i]));
        size_t len;
        char *text = tu_read_file(path, &len);
        assert_non_null(text);
        assert_int_equal(tu_write_file(path, text, len / 2), 0);
        free(text);
    }

    tsa_job *one = NULL, *many = NULL;
    char err[256];
    assert_int_equal(tsa_kineto_load_on(dir, 1, &one, err, sizeof err), 1);
    assert_int_equal(tsa_kineto_load_on(dir, 4, &many, err, sizeof err), 1);
    assert_int_equal(one->n_ranks, 5);
    assert_int_equal(many->n_ranks, one->n_ranks);
    for (size_t i = 0; i < one->n_ranks; i++) {
        const tsa_rank *a = &one->ranks[i], *b = &many->ranks[i];
        assert_int_equal(a->rank, (int)i);
        assert_int_equal(b->rank, a->rank);
        assert_string_equal(b->file, a->file);
        assert_string_equal(b->host, a->host);
        assert_int_equal(b->n_kernels, a->n_kernels);
        assert_int_equal(b->n_apis, a->n_apis);
        assert_int_equal(b->n_nccl, a->n_nccl);
        assert_int_equal(b->first_ns, a->first_ns);
        assert_int_equal(b->last_ns, a->last_ns);
        assert_int_equal(b->clean_end, a->clean_end);
    }
    /* the cut traces in path order, then the second trace of rank 1 */
    assert_int_equal(one->n_problems, 3);
    assert_non_null(strstr(one->problems[0].file, "/t2_"));
    assert_non_null(strstr(one->problems[1].file, "/t4_"));
    assert_non_null(strstr(one->problems[2].message, "second trace of rank 1"));
    assert_int_equal(many->n_problems, one->n_problems);
    for (size_t i = 0; i < one->n_problems; i++) {
        assert_string_equal(many->problems[i].file, one->problems[i].file);
        assert_int_equal(many->problems[i].offset, one->problems[i].offset);
        assert_string_equal(many->problems[i].message, one->problems[i].message);
    }
    tsa_job_free(one);
    tsa_job_free(many);
    tu_rmtree(dir);
    free(dir);
}

static void test_malformed(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kbad");
    char path[512];
    snprintf(path, sizeof path, "%s/r0.json", dir);
    kgen_opts o = {.rank = 0, .world_size = 2, .steps = 5};
    assert_int_equal(kgen_write(path, &o), 0);
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    /* cut in the middle of step 3: steps 0..2 must survive */
    const char *cut = strstr(text, "ProfilerStep#3");
    assert_non_null(cut);
    size_t at = (size_t)(cut - text) + 5;
    assert_int_equal(tu_write_file(path, text, at), 0);
    tsa_rank r;
    char err[512];
    assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "at byte"));
    assert_false(r.clean_end);
    assert_int_equal(r.n_ranges, 3);
    assert_true(r.n_kernels >= 12);
    tsa_rank_free_contents(&r);

    /* garbage in the middle: the offset names the bad byte */
    size_t bad_at = (size_t)(strstr(text, "\"traceEvents\": [") - text) + 16;
    memcpy(text + bad_at, "@@@", 3);
    assert_int_equal(tu_write_file(path, text, len), 0);
    assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "malformed JSON"));
    unsigned long long off = strtoull(strstr(err, "at byte ") + 8, NULL, 10);
    assert_true(off >= bad_at && off <= bad_at + 3);
    tsa_rank_free_contents(&r);

    /* job level: the broken rank is a problem, the good one loads */
    snprintf(path, sizeof path, "%s/r1.json", dir);
    o.rank = 1;
    assert_int_equal(kgen_write(path, &o), 0);
    tsa_job *job;
    assert_int_equal(tsa_kineto_load(dir, &job), 1);
    assert_int_equal(job->n_problems, 1);
    assert_true(job->problems[0].offset >= bad_at && job->problems[0].offset <= bad_at + 3);
    assert_int_equal(job->n_ranks, 2);
    assert_int_equal(job->ranks[1].n_kernels, 20);
    tsa_job_free(job);

    /* not JSON at all, empty file, and a gzip cut short: errors, no crash */
    static const char *bad[] = {"", "[", "{\"traceEvents\": [{\"ph\": }]}", "\x1f\x8b\x08\x00"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tu_write_file(path, bad[i], strlen(bad[i])), 0);
        assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), -1);
        tsa_rank_free_contents(&r);
    }
    free(text);
    tu_rmtree(dir);
    free(dir);
}

/* Mutated and truncated traces: every parse must end with a result or an
 * error, never a crash or a leak (the suite also runs under ASan/UBSan). */
static void test_mutations(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kmut");
    char path[512];
    snprintf(path, sizeof path, "%s/r.json", dir);
    kgen_opts o = {.rank = 0, .world_size = 2, .steps = 3, .with_seq = 1, .odd_names = 1};
    assert_int_equal(kgen_write(path, &o), 0);
    size_t len;
    char *orig = tu_read_file(path, &len);
    assert_non_null(orig);
    char *buf = malloc(len);
    static const char junk[] = "{}[]\",:0-.e\\\x00\xff";
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int errors = 0, ok = 0;
    for (int i = 0; i < 300; i++) {
        memcpy(buf, orig, len);
        size_t n = len;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (i % 3 == 0)
            n = (size_t)(seed >> 33) % len;   /* truncation */
        else
            for (int k = 0; k < 1 + i % 5; k++) {   /* byte flips to JSON punctuation */
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                buf[(seed >> 33) % len] = junk[(seed >> 20) % (sizeof junk - 1)];
            }
        assert_int_equal(tu_write_file(path, buf, n), 0);
        tsa_rank r;
        char err[512];
        if (tsa_kineto_load_file(path, &r, NULL, err, sizeof err)) {
            errors++;
            assert_non_null(strstr(err, "r.json"));
        } else
            ok++;
        /* whatever was kept is a consistent model */
        for (size_t k = 0; k < r.n_kernels; k++) {
            assert_true(r.kernels[k].name < r.n_strings);
            assert_true(r.kernels[k].nccl == TSA_NONE || (size_t)r.kernels[k].nccl < r.n_nccl);
        }
        for (size_t k = 0; k < r.n_nccl; k++)
            assert_true(r.nccl[k].kernel >= 0 && (size_t)r.nccl[k].kernel < r.n_kernels);
        tsa_rank_free_contents(&r);
    }
    assert_true(errors > 100);
    free(buf);
    free(orig);
    tu_rmtree(dir);
    free(dir);
}

/* Recent PyTorch repeats the collective's args on the NCCL kernel; with no
 * CPU op to link (CUDA activities only) the kernel's own args are used. */
static void test_kernel_only_nccl_args(void **state)
{
    (void)state;
    char *dir = tu_tempdir("kko");
    char path[512];
    snprintf(path, sizeof path, "%s/r5.json", dir);
    static const char doc[] =
        "{\"distributedInfo\": {\"rank\": 5, \"world_size\": 8},\n"
        " \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 20, \"ts\": 100.5, \"dur\": 40,\n"
        "   \"name\": \"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\",\n"
        "   \"args\": {\"correlation\": 5, \"stream\": 20, \"device\": 5,\n"
        "     \"Collective name\": \"_reduce_scatter_base\", \"In msg nelems\": 1048576,\n"
        "     \"Out msg nelems\": 131072, \"Group size\": 8, \"dtype\": \"BFloat16\",\n"
        "     \"Process Group Name\": \"3\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, 7]\",\n"
        "     \"Seq\": 17}}\n"
        " ]}\n";
    assert_int_equal(tu_write_file(path, doc, strlen(doc)), 0);
    tsa_rank r;
    char err[256];
    assert_int_equal(tsa_kineto_load_file(path, &r, NULL, err, sizeof err), 0);
    assert_int_equal(r.n_nccl, 1);
    const tsa_nccl_op *op = &r.nccl[0];
    assert_int_equal(op->op, TSC_NCCL_REDUCESCATTER);
    assert_int_equal(op->dtype, TSC_DT_BFLOAT16);
    assert_int_equal(op->count, 131072);          /* per-rank output, as NCCL counts it */
    assert_int_equal(op->bytes, 131072 * 2);
    assert_int_equal(op->comm_size, 8);
    assert_int_equal(op->comm_rank, 5);
    assert_int_equal(op->seq, 17);
    assert_int_equal(op->start_ns, 100500);        /* no host call: the kernel's times */
    assert_int_equal(op->gpu_end_ns, 140500);
    assert_int_equal(r.kernels[0].device, 5);
    tsa_rank_free_contents(&r);
    tu_rmtree(dir);
    free(dir);
}

/* Loads one hand-written trace (a directory of one file). */
static tsa_job *load_doc(const char *tag, const char *doc)
{
    char *dir = tu_tempdir(tag);
    char path[512];
    snprintf(path, sizeof path, "%s/r0.json", dir);
    assert_int_equal(tu_write_file(path, doc, strlen(doc)), 0);
    tsa_job *job = NULL;
    assert_int_equal(tsa_kineto_load(dir, &job), 0);
    tu_rmtree(dir);
    free(dir);
    return job;
}

/* A point-to-point kernel with no CPU op: named by its kernel (it was an
 * "unknown" op), and its size is unknown, not 0 B. */
static void test_sendrecv_kernel_only(void **state)
{
    (void)state;
    tsa_job *job = load_doc("sr",
        "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, \"traceEvents\": [\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 20, \"ts\": 10, \"dur\": 5,\n"
        "  \"name\": \"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)\",\n"
        "  \"args\": {\"correlation\": 9, \"stream\": 20}}]}\n");
    const tsa_rank *r = &job->ranks[0];
    assert_int_equal(r->n_nccl, 1);
    assert_int_equal(r->nccl[0].op, TSC_NCCL_SEND);
    assert_true(r->nccl[0].flags & TSA_NCCL_F_BYTES_UNKNOWN);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    assert_int_equal(a->n_colls, 1);
    assert_int_equal(a->colls[0].bytes_unknown, 1);
    assert_int_equal(a->colls[0].bucket_count[TSA_SIZE_UNKNOWN], 1);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

/* Host events only: no GPU-bound verdict built on host time. */
static void test_cpu_only_trace(void **state)
{
    (void)state;
    tsa_job *job = load_doc("cpu",
        "{\"traceEvents\": [\n"
        " {\"ph\": \"X\", \"cat\": \"user_annotation\", \"pid\": 1, \"tid\": 1, \"ts\": 0,"
        " \"dur\": 1000, \"name\": \"ProfilerStep#1\"},\n"
        " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"pid\": 1, \"tid\": 1, \"ts\": 10,"
        " \"dur\": 900, \"name\": \"aten::mm\"}]}\n");
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    assert_int_equal(a->cpu_only, 1);
    assert_int_equal(a->verdict, TSA_VERDICT_UNKNOWN);
    assert_non_null(strstr(a->verdict_reason, "no GPU records"));
    assert_int_equal(a->budget.line_ns[TSA_BL_USEFUL], 0);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

/* Counts the complete X events of 2 us. */
static int cb(void *ctx, const kineto_event *ev)
{
    int *count = ctx;
    if (ev->ph == 'X' && ev->has_ts && ev->has_dur && ev->dur_ns == 2000)
        (*count)++;
    return 0;
}

/* The hand-written traces in tests/data/kineto-2rank (see its README). */
static void test_fixture(void **state)
{
    (void)state;
    const int64_t base = 1727000000000000000LL;
    assert_int_equal(tsa_kineto_dir(VIEWS_DATA_DIR "/kineto-2rank"), 2);
    tsa_job *job;
    assert_int_equal(tsa_kineto_load(VIEWS_DATA_DIR "/kineto-2rank", &job), 0);
    assert_int_equal(job->n_ranks, 2);
    for (int rank = 0; rank < 2; rank++) {
        const tsa_rank *r = &job->ranks[rank];
        int64_t late = rank ? 60 * US : 0;
        char host[8];
        snprintf(host, sizeof host, "gpu%d", rank);
        assert_string_equal(r->host, host);
        assert_int_equal(r->rank, rank);
        assert_int_equal(r->world_size, 2);
        assert_string_equal(r->device_name, "NVIDIA H100 80GB HBM3");
        assert_int_equal(r->n_kernels, 4);
        assert_int_equal(r->n_nccl, 2);
        assert_int_equal(r->n_copies, 2);
        assert_int_equal(r->n_syncs, 2);
        assert_int_equal(r->n_apis, 6);
        assert_int_equal(r->n_ranges, 2);
        assert_string_equal(r->strings[r->ranges[1].name], "ProfilerStep#8");
        /* "thread 4102 (pt_autograd_0)" is kept as the thread's own name */
        int autograd = 0;
        for (size_t i = 0; i < r->n_threads; i++)
            autograd += !strcmp(r->strings[r->threads[i].name], "pt_autograd_0") &&
                        r->threads[i].tid == (uint32_t)(4100 + rank + 1);
        assert_int_equal(autograd, 1);
        assert_int_equal(r->apis[0].start_ns, base + 1012000);
        assert_int_equal(r->apis[0].end_ns, base + 1017250);
        assert_int_equal(r->kernels[0].end_ns, base + 1320000 + late);
        assert_int_equal(r->kernels[0].launch_tid, (uint32_t)(4100 + rank));
        assert_int_equal(r->copies[0].dir, TSA_COPY_D2H);
        assert_int_equal(r->copies[0].bytes, 4);
        assert_int_equal(r->copies[0].pinned, 0);
        for (int s = 0; s < 2; s++) {
            const tsa_nccl_op *op = &r->nccl[s];
            int64_t t = base + (1000 + s * 1000) * US;
            assert_int_equal(op->op, TSC_NCCL_ALLREDUCE);
            assert_int_equal(op->seq, 41 + s);
            assert_int_equal(op->bytes, 1 << 20);
            assert_int_equal(op->comm_rank, rank);
            assert_int_equal(op->comm_size, 2);
            assert_int_equal(op->start_ns, t + 330 * US + late);
            assert_int_equal(op->gpu_start_ns, t + 340 * US + late);
            assert_int_equal(op->gpu_end_ns, t + 840 * US);
            assert_int_equal(op->tid, 4100 + rank + 1);
        }
    }
    assert_true(job->ranks[0].nccl[0].comm_id == job->ranks[1].nccl[0].comm_id);
    tsa_job_free(job);
}

/* A bare array of events and deeply nested junk are handled too. */
static void test_buffer_shapes(void **state)
{
    (void)state;
    char deep[4096] = "{\"x\": ";
    for (int i = 0; i < 200; i++)
        strcat(deep, "[");
    for (int i = 0; i < 200; i++)
        strcat(deep, "]");
    strcat(deep, ", \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                 "\"ts\": 1, \"dur\": 2, \"args\": {\"nested\": {\"a\": [1, {\"b\": 2}]}}}]}");
    kineto_header hdr;
    tsa_kineto_stats st;
    char err[256];
    int count = 0;
    assert_int_equal(kineto_parse_buffer(deep, strlen(deep), cb, &count, &hdr, &st, err, sizeof err), 0);
    assert_int_equal(count, 1);
    const char *bare = "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 2}, "
                       "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", \"ts\": \"3.5\", \"dur\": 2}]";
    count = 0;
    assert_int_equal(kineto_parse_buffer(bare, strlen(bare), cb, &count, &hdr, &st, err, sizeof err), 0);
    assert_int_equal(count, 2);
    assert_int_equal(st.events, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_us_to_ns_exact),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_load_dir),
        cmocka_unit_test(test_seq_and_no_base),
        cmocka_unit_test(test_memory_events),
        cmocka_unit_test(test_no_distributed_info),
        cmocka_unit_test(test_load_threads),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_buffer_shapes),
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_kernel_only_nccl_args),
        cmocka_unit_test(test_sendrecv_kernel_only),
        cmocka_unit_test(test_cpu_only_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
