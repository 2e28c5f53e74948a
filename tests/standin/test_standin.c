/* The GPU capture end to end on the CUDA stand-in: real processes under
 * LD_PRELOAD, CUPTI's buffers handed over by its worker thread and by
 * flushes, and the dumps read back with the analyzer's loader.  Counts are
 * exact: every kernel the stand-in produced is in the dump, once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "standin_run.h"
#include "tsc_format.h"

#define LAYER_NS 2000   /* tsc-standin-job's default kernel duration */

static int skip_all;

static long long meta_ll(const sj_run *r, int rank, const char *key)
{
    const char *v = sj_meta(r, rank, key);
    return v ? strtoll(v, NULL, 10) : -1;
}

/* Every kernel launched is in the rank's dump or was dropped by the
 * stand-in CUPTI for want of a buffer (as CUPTI drops records when the
 * client's buffers do not come back in time), and the dump counts that
 * loss exactly: what CUPTI reported dropped, and the kernels missing. */
static void assert_kernels_accounted(const sj_run *r, int rank, long long launched)
{
    const tsa_rank *rk = sj_rank(r, rank);
    assert_non_null(rk);
    long long produced = sj_truth(r, "cupti", rank, "kernels");
    long long dropped = sj_truth(r, "cupti", rank, "dropped");
    long long dropped_kernels = sj_truth(r, "cupti", rank, "dropped_kernels");
    assert_true(produced > 0);
    assert_int_equal(produced + dropped_kernels, launched);
    assert_int_equal(rk->n_kernels, produced);
    assert_int_equal(meta_ll(r, rank, "gpu_kernels"), produced);
    assert_int_equal(rk->dropped_events, 0);
    assert_int_equal(meta_ll(r, rank, "cupti_dropped_records"), dropped);
    assert_int_equal(meta_ll(r, rank, "cupti_dropped_device_records"),
                     sj_truth(r, "cupti", rank, "dropped_device"));
    /* A dropped kernel is lost to the report through its launch call; if
     * the call record was dropped too, only cupti_dropped_records has it. */
    if (dropped == dropped_kernels)
        assert_int_equal(rk->gpu_kernels_lost, dropped_kernels);
    else
        assert_true(rk->gpu_kernels_lost <= (uint64_t)dropped_kernels);
}

/* Kernels the stand-in CUPTI produced for a rank equal the records in
 * its dump, nothing lost anywhere, and at least min_folded percent of the
 * kernels folded with their launch call into one record. */
static void assert_kernels_folded(const sj_run *r, int rank, int min_folded)
{
    long long produced = sj_truth(r, "cupti", rank, "kernels");
    assert_int_equal(sj_truth(r, "cupti", rank, "dropped"), 0);
    assert_kernels_accounted(r, rank, produced);
    /* A kernel whose call came too late is written with the call apart:
     * nothing lost, 32 bytes more.  How often depends on how far CUPTI's
     * worker falls behind the application, i.e. on the machine's load. */
    long long folded = meta_ll(r, rank, "gpu_kernels_with_launch");
    fprintf(stderr, "rank %d: %lld of %lld kernels folded with their launch\n", rank, folded,
            produced);
    assert_true(folded * 100 >= produced * min_folded);
}

/* Steady launching: nearly every kernel folds. */
static void assert_every_kernel(const sj_run *r, int rank)
{
    assert_kernels_folded(r, rank, 95);
}

static int count_named(const tsa_rank *rk, const char *prefix)
{
    int n = 0;
    for (size_t i = 0; i < rk->n_kernels; i++)
        if (!strncmp(rk->strings[rk->kernels[i].name], prefix, strlen(prefix)))
            n++;
    return n;
}

static void every_kernel_at_4000_launches_a_step(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "40", "--launches", "4000", "--gemms", "2", NULL};
    assert_int_equal(sj_run_job(&r, 2, args, NULL), 0);
    for (int rank = 0; rank < 2; rank++) {
        assert_every_kernel(&r, rank);
        const tsa_rank *rk = sj_rank(&r, rank);
        /* 160,000 layer kernels, 80 GEMMs, 40 all-reduces: each once. */
        assert_int_equal(sj_truth(&r, "job", rank, "runtime_launches"), 160000);
        assert_int_equal(rk->n_kernels, 160000 + 80 + 40);
        assert_int_equal(count_named(rk, "_Z11fwd_layer"), 40 * 1334); /* i % 3 == 0 of 4000 */
        /* Every kernel knows its launching thread, and lasted what the job
         * asked; each started after its launch call began. */
        size_t layer = 0;
        for (size_t i = 0; i < rk->n_kernels; i++) {
            const tsa_kernel *k = &rk->kernels[i];
            assert_int_equal(k->launch_tid, rk->pid);
            if (!strncmp(rk->strings[k->name], "_Z", 2)) {
                assert_int_equal(k->end_ns - k->start_ns, LAYER_NS);
                layer++;
            }
        }
        assert_int_equal(layer, 160000);
        /* The launch calls came back, one per kernel, with their times. */
        size_t launches = 0;
        for (size_t i = 0; i < rk->n_apis; i++)
            if (strstr(rk->strings[rk->apis[i].name], "Launch"))
                launches++;
        assert_int_equal(launches, rk->n_kernels);
        /* Joins: every all-reduce and every GEMM has its kernel. */
        size_t coll = 0;
        for (size_t i = 0; i < rk->n_nccl; i++)
            if (rk->nccl[i].op == TSC_NCCL_ALLREDUCE) {
                assert_true(rk->nccl[i].kernel >= 0);
                coll++;
            }
        assert_int_equal(coll, 40);
        assert_int_equal(rk->n_gemms, 80);
        for (size_t i = 0; i < rk->n_gemms; i++)
            assert_true(rk->gemms[i].kernel >= 0);
    }
    sj_free(&r);
}

static void burst_of_a_million_launches(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "2", "--launches", "10", "--burst", "1000000", NULL};
    /* As fast as a real host thread launches (about 250,000 a second): the
     * stand-in's CUPTI worker, far costlier per record than CUPTI's, must
     * not be what falls behind on a 2-core machine. */
    const char *env[] = {"STANDIN_LAUNCH_NS=4000", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, env), 0);
    /* Exact, with no floor on folding: a burst on a busy machine may leave
     * CUPTI's worker far behind (the kernels then cost 64 bytes), or so far
     * that the buffers run out (each kernel dropped then is counted). */
    long long dropped = sj_truth(&r, "cupti", 0, "dropped");
    if (dropped)
        fprintf(stderr, "burst: the stand-in CUPTI dropped %lld records (starved of CPU)\n",
                dropped);
    assert_kernels_accounted(&r, 0, 1000000 + 20 + 2);
    sj_free(&r);
}

/* The test option STANDIN_WORKER_PARKS holds CUPTI's worker with a batch
 * of finished kernels taken out of flight and not yet in a buffer, the
 * moment a descheduled worker is caught at under load, until a flush
 * waits for it; no periodic flush (TSCOPE_FLUSH_MS): the forced flush at
 * exit is the one that meets it.  FlushAll hands over every record, so
 * nothing is lost (the batch was once written after it, and reported as
 * up to 256 kernels lost). */
static void forced_flush_waits_for_the_workers_batch(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "10", "--launches", "2000", NULL};
    /* 20 us a launch: 0.4 s of launching, so the worker (waking every
     * 100 ms, tscope's flush period) surely takes a batch before the end. */
    const char *env[] = {"STANDIN_WORKER_PARKS=1", "TSCOPE_FLUSH_MS=3600000",
                         "STANDIN_LAUNCH_NS=20000", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, env), 0);
    assert_true(sj_truth(&r, "cupti", 0, "parked_batches") >= 1);
    /* Held to the end, kernels meet their calls late: no floor on folding. */
    assert_kernels_folded(&r, 0, 0);
    assert_int_equal(sj_rank(&r, 0)->n_kernels, 10 * 2001);
    sj_free(&r);
}

/* The same worker held to the end with 300,000 kernels finished: the
 * forced flush writes them all at once and tscope's 40 MiB of buffers run
 * out, so the stand-in drops what finds no buffer, as CUPTI does.  The
 * dump counts exactly what was dropped. */
static void starved_worker_drops_are_counted_exactly(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "1", "--launches", "10", "--burst", "300000", NULL};
    const char *env[] = {"STANDIN_WORKER_PARKS=1", "TSCOPE_FLUSH_MS=3600000", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, env), 0);
    assert_true(sj_truth(&r, "cupti", 0, "parked_batches") >= 1);
    assert_true(sj_truth(&r, "cupti", 0, "dropped_kernels") > 0);
    assert_kernels_accounted(&r, 0, 300000 + 10 + 1);
    sj_free(&r);
}

/* Python loads extensions with RTLD_LOCAL: cuBLAS is not global, yet the
 * extension's GEMM calls bind to tscope's wrappers.  The result must be
 * the real one. */
static void gemm_through_an_rtld_local_library(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "2", "--launches", "4", "--gemms", "3", "--checked-gemm",
                          NULL};
    assert_int_equal(sj_run_job(&r, 1, args, NULL), 0);
    assert_int_equal(sj_truth(&r, "job", 0, "ext_status"), 0);
    assert_int_equal(sj_truth(&r, "job", 0, "ext_result"), 23);
    assert_int_equal(sj_truth(&r, "job", 0, "gemm_calls"), 6);
    const tsa_rank *rk = sj_rank(&r, 0);
    assert_int_equal(rk->n_gemms, 7); /* the checked one too */
    for (size_t i = 0; i < rk->n_gemms; i++)
        assert_true(rk->gemms[i].kernel >= 0);
    sj_free(&r);
}

/* A profiler that starts later (torch.profiler) gets CUPTI as a fresh
 * client would, and tscope's records stop before the other clock starts. */
static void second_client(const char *version)
{
    sj_run r;
    const char *args[] = {"--steps", "10", "--launches", "100", "--kineto-at", "5",
                          "--kineto-clock", version, NULL};
    assert_int_equal(sj_run_job(&r, 1, args, NULL), 0);
    assert_int_equal(sj_truth(&r, "job", 0, "kineto_subscribe"), 0);
    assert_true(sj_truth(&r, "job", 0, "kineto_kernels") > 0);
    assert_int_equal(sj_truth(&r, "job", 0, "kineto_thread_id_type"), 0);
    assert_int_equal(sj_truth(&r, "cupti", 0, "flush_period_ms"), 0);
    assert_string_equal(sj_meta(&r, 0, "cupti_status"), "yielded to another CUPTI client");
    assert_string_equal(sj_meta(&r, 0, "clock_status"), "ok");
    /* Steps 0 to 4 exactly: 100 layer kernels and one all-reduce each. */
    const tsa_rank *rk = sj_rank(&r, 0);
    assert_int_equal(rk->n_kernels, 5 * 101);
    assert_int_equal(rk->gpu_kernels_lost, 0);
    sj_free(&r);
}

static void second_client_with_subscribe_v2(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    second_client(NULL);
}

static void second_client_with_subscribe_v1(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    second_client("--kineto-v1");
}

static void graph_replays_fold_into_their_launch(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "10", "--launches", "10", "--graph", "50", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, NULL), 0);
    assert_every_kernel(&r, 0);
    const tsa_rank *rk = sj_rank(&r, 0);
    size_t graph = 0;
    for (size_t i = 0; i < rk->n_kernels; i++)
        if (rk->kernels[i].graph_id) {
            graph++;
            assert_int_equal(rk->kernels[i].launch_tid, rk->pid);
        }
    assert_int_equal(graph, 500);
    assert_int_equal(rk->n_kernels, 100 + 500 + 10);
    sj_free(&r);
}

/* A GEMM and an all-reduce captured into the graph: every replay is
 * their work again (FLOPs per replay, communication time). */
static void graph_replays_are_the_captured_calls_work(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "6", "--launches", "5", "--graph", "10", "--graph-gemms",
                          "2", "--graph-allreduce", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, NULL), 0);
    assert_every_kernel(&r, 0);
    const tsa_rank *rk = sj_rank(&r, 0);
    assert_int_equal(meta_ll(&r, 0, "gpu_launches_captured"), 13);
    assert_int_equal(rk->n_kernels, 6 * (5 + 1 + 13));
    /* The 2 GEMM calls made while capturing, and 2 per replay. */
    assert_int_equal(rk->n_gemms, 2 + 6 * 2);
    size_t replayed = 0;
    for (size_t i = 0; i < rk->n_gemms; i++)
        if (rk->gemms[i].kernel >= 0) {
            replayed++;
            assert_int_not_equal(rk->kernels[rk->gemms[i].kernel].graph_id, 0);
        }
    assert_int_equal(replayed, 12);
    /* Communication: the step's all-reduce and the replayed one, each step. */
    size_t comm = 0;
    for (size_t i = 0; i < rk->n_kernels; i++)
        if (rk->kernels[i].nccl >= 0) {
            comm++;
            assert_int_equal(rk->kernels[i].category, TSA_KCAT_COMM);
        }
    assert_int_equal(comm, 12);
    sj_free(&r);
}

/* An older CUPTI gives the driver call nested in a runtime launch its own
 * correlation id: still one record per kernel, no stray calls. */
static void nested_calls_with_their_own_ids(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "5", "--launches", "300", NULL};
    const char *env[] = {"STANDIN_NESTED_CORR=distinct", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, env), 0);
    assert_every_kernel(&r, 0);
    assert_int_equal(sj_rank(&r, 0)->n_kernels, 5 * 301);
    sj_free(&r);
}

/* NCCL maps its own buffers with cuMemCreate, as the caching allocator's
 * expandable segments do: only the allocator's count as its memory. */
static void nccl_buffers_kept_out_of_the_allocator(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "4", "--launches", "5", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, NULL), 0);
    const tsa_rank *rk = sj_rank(&r, 0);
    /* The job's 256 MiB segment: mapped and released, nothing else. */
    assert_int_equal(rk->n_mem, 2);
    for (size_t i = 0; i < rk->n_mem; i++) {
        assert_int_equal(rk->mem[i].bytes, 256ull << 20);
        assert_int_equal(rk->mem[i].source, TSC_MEM_SRC_VMM);
    }
    /* NCCL's 64 MiB (the test NCCL's, like the real one's cuMem buffers). */
    assert_int_equal(rk->mem_nccl_peak_bytes, 64ull << 20);
    assert_int_equal(rk->mem_nccl_bytes, 0);
    sj_free(&r);
}

/* NCCL's own NVTX ranges are not the user's step markers. */
static void nccl_ranges_kept_apart(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "6", "--launches", "5", "--nvtx", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, NULL), 0);
    assert_int_equal(sj_truth(&r, "cupti", 0, "marker"), 4 * 6);
    const tsa_rank *rk = sj_rank(&r, 0);
    assert_int_equal(rk->n_ranges, 6);
    for (size_t i = 0; i < rk->n_ranges; i++) {
        assert_string_equal(rk->strings[rk->ranges[i].name], "train_step");
        assert_int_equal(rk->ranges[i].tid, rk->pid);
    }
    sj_free(&r);
}

static void light_mode_keeps_nccl_launches(void **state)
{
    (void)state;
    if (skip_all)
        skip();
    sj_run r;
    const char *args[] = {"--steps", "8", "--launches", "50", NULL};
    const char *env[] = {"TSCOPE_CUPTI=light", NULL};
    assert_int_equal(sj_run_job(&r, 1, args, env), 0);
    const tsa_rank *rk = sj_rank(&r, 0);
    /* No kernel tracing; NCCL's launches (cuLaunchKernelEx) kept as calls. */
    assert_int_equal(rk->n_kernels, 0);
    size_t nccl_launches = 0;
    for (size_t i = 0; i < rk->n_apis; i++)
        nccl_launches += !strcmp(rk->strings[rk->apis[i].name], "cuLaunchKernelEx");
    assert_int_equal(nccl_launches, 8);
    assert_int_equal(meta_ll(&r, 0, "gpu_kernels"), 0);
    sj_free(&r);
}

int main(void)
{
    skip_all = !sj_available();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel_at_4000_launches_a_step),
        cmocka_unit_test(burst_of_a_million_launches),
        cmocka_unit_test(forced_flush_waits_for_the_workers_batch),
        cmocka_unit_test(starved_worker_drops_are_counted_exactly),
        cmocka_unit_test(gemm_through_an_rtld_local_library),
        cmocka_unit_test(second_client_with_subscribe_v2),
        cmocka_unit_test(second_client_with_subscribe_v1),
        cmocka_unit_test(graph_replays_fold_into_their_launch),
        cmocka_unit_test(graph_replays_are_the_captured_calls_work),
        cmocka_unit_test(nested_calls_with_their_own_ids),
        cmocka_unit_test(nccl_ranges_kept_apart),
        cmocka_unit_test(nccl_buffers_kept_out_of_the_allocator),
        cmocka_unit_test(light_mode_keeps_nccl_launches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
