/* Format 1.2's GPU records through the loader, on hand-built dumps:
 * kernels folded with their launch call, their join to the NCCL call or
 * GEMM whose span holds the launch, graph replays, NVTX domains, NCCL's
 * own memory, refused GEMMs, and the kernels-lost count. */
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

#include "dump_builder.h"
#include "load/job_load.h"

#define T0 1795600000000000000ull
#define MAIN_TID 1001u
#define KERNEL_NAME "_Z11fwd_layer_kPfS_i"

/* One rank's dump in a fresh directory; events_fn fills the slots of the
 * main thread's chunk. */
typedef void (*fill_fn)(tb_slots *s);

static char *write_job(fill_fn fill, const char *mode, const char *captured)
{
    char *dir = strdup("/tmp/tsa-gpu-XXXXXX");
    assert_non_null(mkdtemp(dir));
    tb_buf b = {0};
    tb_header(&b, T0, 4242);
    const char *kv[] = {TSC_META_HOST, "n1", TSC_META_RANK, "0", TSC_META_WORLD_SIZE, "1",
                        TSC_META_RUN_ID, "r1", TSC_META_CUPTI_MODE, mode,
                        TSC_META_GPU_CAPTURED, captured, NULL};
    char meta[512];
    size_t n = tb_meta(meta, sizeof meta, kv);
    tb_chunk(&b, TSC_CHUNK_META, 0, 0, meta, (uint32_t)n);
    tb_slots s = {0};
    fill(&s);
    tb_chunk(&b, TSC_CHUNK_EVENTS, MAIN_TID, 1, s.s, (uint32_t)(s.n * TSC_SLOT_SIZE));
    const char *end_kv[] = {TSC_META_END_REASON, "exit", NULL};
    n = tb_meta(meta, sizeof meta, end_kv);
    tb_chunk(&b, TSC_CHUNK_END, 0, 2, meta, (uint32_t)n);
    char path[512];
    snprintf(path, sizeof path, "%s/tscope_r0_n1_4242_1.tsd", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    fclose(f);
    tb_slots_free(&s);
    tb_free(&b);
    return dir;
}

static tsa_job *load(const char *dir)
{
    tsa_load_options opt = {.quiet = 1};
    tsa_job *job = NULL;
    assert_int_equal(tsa_job_load(dir, &opt, &job), 0);
    assert_int_equal(job->n_ranks, 1);
    return job;
}

static void drop(char *dir, tsa_job *job)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    tsa_job_free(job);
}

/* A kernel launched by MAIN_TID with its call starting at call_start. */
static void folded(tb_slots *s, uint32_t desc, uint64_t gpu_start, uint32_t gpu_ns,
                   uint64_t call_start, uint32_t call_ns, uint32_t corr)
{
    tb_event(s, TSC_EV_KERNEL_LAUNCH, 0, 0, desc, gpu_start, TSC_PACK32(gpu_ns, call_ns),
             TSC_PACK32(corr, gpu_start - call_start));
}

static void launch_desc(tb_slots *s, uint32_t id, uint64_t graph_node)
{
    tsc_desc_kernel_launch d = {.kernel = {.name = 1, .stream = 7, .grid = {4, 1, 1},
                                           .block = {256, 1, 1}},
                                .tid = MAIN_TID, .api_name = 2, .api_cbid = 211,
                                .api_domain = TSC_API_RUNTIME, .graph_node = graph_node};
    tb_desc(s, TSC_DESC_KERNEL_LAUNCH, id, &d, sizeof d);
}

static void names(tb_slots *s)
{
    tb_string(s, 1, KERNEL_NAME);
    tb_string(s, 2, "cudaLaunchKernel");
}

/* ------------------------------------------------ the folded record */

static void fill_folded(tb_slots *s)
{
    names(s);
    launch_desc(s, 3, 0);
    folded(s, 3, T0 + 5000, 2000, T0 + 1000, 1500, 77);
}

static void folded_record_is_a_kernel_and_its_call(void **state)
{
    (void)state;
    char *dir = write_job(fill_folded, "full", "0");
    tsa_job *job = load(dir);
    const tsa_rank *r = &job->ranks[0];
    assert_int_equal(r->n_kernels, 1);
    assert_int_equal(r->kernels[0].start_ns, T0 + 5000);
    assert_int_equal(r->kernels[0].end_ns, T0 + 7000);
    assert_int_equal(r->kernels[0].correlation, 77);
    assert_int_equal(r->kernels[0].launch_tid, MAIN_TID);
    assert_string_equal(r->strings[r->kernels[0].name], KERNEL_NAME);
    assert_int_equal(r->n_apis, 1);
    assert_int_equal(r->apis[0].start_ns, T0 + 1000);
    assert_int_equal(r->apis[0].end_ns, T0 + 2500);
    assert_int_equal(r->apis[0].tid, MAIN_TID);
    assert_int_equal(r->apis[0].correlation, 77);
    assert_string_equal(r->strings[r->apis[0].name], "cudaLaunchKernel");
    assert_int_equal(r->gpu_kernels_lost, 0);
    drop(dir, job);
}

/* ------------------------------ the join by thread and time (no EXTCORR) */

static void fill_joins(tb_slots *s)
{
    names(s);
    launch_desc(s, 3, 0);
    tsc_desc_nccl_call c = {.op = TSC_NCCL_ALLREDUCE, .dtype = TSC_DT_FLOAT32, .peer = TSC_NO_PEER,
                            .count = 256, .bytes = 1024, .comm_id = 0xabc, .comm_size = 1};
    tb_desc(s, TSC_DESC_NCCL_CALL, 4, &c, sizeof c);
    tb_event(s, TSC_EV_NCCL, 0, 0, 4, T0 + 100, T0 + 200, 0);
    tsc_desc_gemm g = {.m = 64, .n = 64, .k = 64, .batch = 1, .api = TSC_GEMM_EX,
                       .flops = 2ull * 64 * 64 * 64};
    tb_desc(s, TSC_DESC_GEMM, 5, &g, sizeof g);
    tb_event(s, TSC_EV_GEMM, 0, 0, 5, T0 + 300, T0 + 400, 1);
    folded(s, 3, T0 + 1000, 500, T0 + 150, 20, 10);  /* inside the NCCL call */
    folded(s, 3, T0 + 2000, 500, T0 + 350, 20, 11);  /* inside the GEMM */
    folded(s, 3, T0 + 3000, 500, T0 + 250, 20, 12);  /* between the two: neither */
}

static void folded_kernels_join_the_call_that_holds_their_launch(void **state)
{
    (void)state;
    char *dir = write_job(fill_joins, "full", "0");
    tsa_job *job = load(dir);
    const tsa_rank *r = &job->ranks[0];
    assert_int_equal(r->n_kernels, 3);
    assert_int_equal(r->n_nccl, 1);
    assert_int_equal(r->n_gemms, 1);
    for (size_t i = 0; i < r->n_kernels; i++) {
        const tsa_kernel *k = &r->kernels[i];
        if (k->correlation == 10) {
            assert_int_equal(k->nccl, 0);
            assert_int_equal(r->nccl[0].kernel, (int32_t)i);
            assert_int_equal(r->nccl[0].gpu_start_ns, T0 + 1000);
        } else if (k->correlation == 11) {
            assert_int_equal(k->gemm, 0);
            assert_int_equal(r->gemms[0].kernel, (int32_t)i);
        } else {
            assert_int_equal(k->nccl, -1);
            assert_int_equal(k->gemm, -1);
        }
    }
    drop(dir, job);
}

/* ----------------------------------------------------- graph replays */

static void fill_graph(tb_slots *s)
{
    names(s);
    launch_desc(s, 3, 7);
    tsc_desc_gemm g = {.m = 128, .n = 128, .k = 128, .batch = 1, .api = TSC_GEMM_EX,
                       .flops = 2ull * 128 * 128 * 128};
    tb_desc(s, TSC_DESC_GEMM, 5, &g, sizeof g);
    tb_event(s, TSC_EV_GEMM, 0, 0, 5, T0 + 300, T0 + 400, 1);  /* captured: ran once */
    tsc_desc_graph_node n = {.node = 7, .external_id = TSC_EXTCORR_ID(5, 1)};
    tb_desc(s, TSC_DESC_GRAPH_NODE, 6, &n, sizeof n);
    tb_event(s, TSC_EV_GRAPH_NODE, 0, 0, 6, T0 + 350, T0 + 350, 0);
    folded(s, 3, T0 + 10000, 500, T0 + 9000, 20, 40);  /* two replays */
    folded(s, 3, T0 + 20000, 500, T0 + 19000, 20, 41);
}

static void graph_replays_count_the_captured_gemm_each_time(void **state)
{
    (void)state;
    char *dir = write_job(fill_graph, "full", "1");
    tsa_job *job = load(dir);
    const tsa_rank *r = &job->ranks[0];
    assert_int_equal(r->n_gemms, 3);
    int replays = 0;
    for (size_t i = 0; i < r->n_gemms; i++) {
        if (r->gemms[i].kernel < 0)
            continue;
        replays++;
        assert_int_equal(r->gemms[i].m, 128);
        assert_int_equal(r->kernels[r->gemms[i].kernel].gemm, (int32_t)i);
    }
    assert_int_equal(replays, 2);
    drop(dir, job);
}

/* ---------------------------------------- refused GEMM, NVTX, memory */

static void fill_misc(tb_slots *s)
{
    tsc_desc_gemm g = {.m = 64, .n = 64, .k = 64, .batch = 1, .api = TSC_GEMM_LT_MATMUL,
                       .flops = 2ull * 64 * 64 * 64};
    tb_desc(s, TSC_DESC_GEMM, 5, &g, sizeof g);
    tb_event(s, TSC_EV_GEMM, 0, 7 /* CUBLAS_STATUS_INVALID_VALUE */, 5, T0 + 10, T0 + 20, 1);
    g.api = TSC_GEMM_EX;
    tb_desc(s, TSC_DESC_GEMM, 6, &g, sizeof g);
    tb_event(s, TSC_EV_GEMM, 0, 0, 6, T0 + 30, T0 + 40, 2);  /* the retry that worked */
    tb_string(s, 7, "train_step");
    tb_string(s, 8, "ncclAllReduce");
    tb_string(s, 9, "NCCL");
    tb_event(s, TSC_EV_NVTX, 0, 0, 7, T0 + 100, T0 + 900, TSC_PACK32(555, 0));
    tb_event(s, TSC_EV_NVTX, 0, 0, 8, T0 + 200, T0 + 300, TSC_PACK32(555, 9));
    tsc_desc_mem m = {.source = TSC_MEM_SRC_NCCL, .mem_kind = 3};
    tb_desc(s, TSC_DESC_MEM, 10, &m, sizeof m);
    tb_event(s, TSC_EV_MEM_ALLOC, 0, 0, 10, T0 + 50, T0 + 50, 64ull << 20);
    tb_event(s, TSC_EV_MEM_FREE, 0, 0, 10, T0 + 950, T0 + 950, 64ull << 20);
    m.source = TSC_MEM_SRC_VMM;
    tb_desc(s, TSC_DESC_MEM, 11, &m, sizeof m);
    tb_event(s, TSC_EV_MEM_ALLOC, 0, 0, 11, T0 + 60, T0 + 60, 256ull << 20);
}

static void refused_gemm_nvtx_domains_and_nccl_memory(void **state)
{
    (void)state;
    char *dir = write_job(fill_misc, "full", "0");
    tsa_job *job = load(dir);
    const tsa_rank *r = &job->ranks[0];
    /* The refused cublasLtMatmul did no work: one GEMM, not two. */
    assert_int_equal(r->n_gemms, 1);
    /* NCCL's domain range is not the user's; the user's keeps its thread. */
    assert_int_equal(r->n_ranges, 1);
    assert_string_equal(r->strings[r->ranges[0].name], "train_step");
    assert_int_equal(r->ranges[0].tid, 555);
    /* NCCL's buffer is apart from the allocator's memory. */
    assert_int_equal(r->n_mem, 1);
    assert_int_equal(r->mem[0].bytes, 256ull << 20);
    assert_int_equal(r->mem_nccl_peak_bytes, 64ull << 20);
    assert_int_equal(r->mem_nccl_bytes, 0);
    drop(dir, job);
}

/* ------------------------------------------------------- kernels lost */

static void fill_lost(tb_slots *s)
{
    names(s);
    launch_desc(s, 3, 0);
    folded(s, 3, T0 + 5000, 2000, T0 + 1000, 1500, 77);
    /* Two launch calls whose kernels are not in the dump. */
    tsc_desc_api a = {.domain = TSC_API_RUNTIME, .cbid = 211, .tid = MAIN_TID, .name = 2};
    tb_desc(s, TSC_DESC_API, 4, &a, sizeof a);
    tb_event(s, TSC_EV_API, 0, 0, 4, T0 + 8000, T0 + 9000, 78);
    tb_event(s, TSC_EV_API, 0, 0, 4, T0 + 9500, T0 + 9900, 79);
    /* A copy call with no kernel is not a launch. */
    tb_string(s, 5, "cudaMemcpyAsync");
    tsc_desc_api cp = {.domain = TSC_API_RUNTIME, .cbid = 41, .tid = MAIN_TID, .name = 5};
    tb_desc(s, TSC_DESC_API, 6, &cp, sizeof cp);
    tb_event(s, TSC_EV_API, 0, 0, 6, T0 + 9950, T0 + 9990, 80);
}

static void kernels_lost_are_counted(void **state)
{
    (void)state;
    struct {
        const char *mode, *captured;
        uint64_t lost;
    } cases[] = {
        {"full", "0", 2},   /* two calls without their kernel */
        {"full", "1", 1},   /* one of them was captured into a graph */
        {"light", "0", 0},  /* kernels not traced: nothing is missing */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *dir = write_job(fill_lost, cases[i].mode, cases[i].captured);
        tsa_job *job = load(dir);
        assert_int_equal(job->ranks[0].gpu_kernels_lost, cases[i].lost);
        drop(dir, job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(folded_record_is_a_kernel_and_its_call),
        cmocka_unit_test(folded_kernels_join_the_call_that_holds_their_launch),
        cmocka_unit_test(graph_replays_count_the_captured_gemm_each_time),
        cmocka_unit_test(refused_gemm_nvtx_domains_and_nccl_memory),
        cmocka_unit_test(kernels_lost_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
