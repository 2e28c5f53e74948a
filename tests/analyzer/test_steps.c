/* The step pass on in-memory jobs: the period of the collective sequence,
 * start-up calls before the pattern, a run cut mid-step, NVTX
 * ProfilerStep ranges, and a --step-marker kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>

#include "load/job_build.h"
#include "load/kineto_loop.h"
#include "load/rank_strings.h"
#include "passes/steps.h"
#include "passes/steps_toplevel.h"
#include "util/vec.h"
#include "tsc_format.h"

static void test_sequence_period(void **state)
{
    (void)state;
    const uint64_t a[] = {1, 2, 3, 1, 2, 3, 1, 2};
    assert_int_equal(tsa_sequence_period(a, 8), 3);  /* partial tail allowed */
    const uint64_t b[] = {1, 1, 1, 1};
    assert_int_equal(tsa_sequence_period(b, 4), 1);
    const uint64_t c[] = {1, 2, 3, 4};
    assert_int_equal(tsa_sequence_period(c, 4), 4);  /* no repetition */
    const uint64_t d[] = {1, 2, 1, 1, 2, 1};
    assert_int_equal(tsa_sequence_period(d, 6), 3);
    assert_int_equal(tsa_sequence_period(NULL, 0), 0);
    const uint64_t e[] = {7};
    assert_int_equal(tsa_sequence_period(e, 1), 1);
}

static void test_default_warmup(void **state)
{
    (void)state;
    assert_int_equal(tsa_default_warmup(0), 0);
    assert_int_equal(tsa_default_warmup(2), 0);
    assert_int_equal(tsa_default_warmup(3), 1);
    assert_int_equal(tsa_default_warmup(4), 1);
    assert_int_equal(tsa_default_warmup(5), 2);
    assert_int_equal(tsa_default_warmup(1000), 2);
}

static void add_op(tsa_rank *r, uint8_t op, uint64_t bytes, int64_t s, int64_t e, uint64_t seq)
{
    tsa_nccl_op x;
    memset(&x, 0, sizeof x);
    x.op = op;
    x.bytes = bytes;
    x.comm_id = 42;
    x.comm_size = 2;
    x.start_ns = x.gpu_start_ns = s;
    x.end_ns = x.gpu_end_ns = e;
    x.seq = seq;
    x.kernel = TSA_NONE;
    x.peer = -1;
    assert_int_equal(tsa_rank_add_nccl(r, &x), 0);
}

/* Start-up broadcast + barrier, then 7 steps of [AR 100, AR 100, AG 50]
 * with a long pause (forward) before the first AR, then a cut step.
 * Variant 1: the barrier looks like the end of a step (AG 50), so the
 * periodic region starts one call early and the pause decides. */
static void collective_pattern(int barrier_like_step_end)
{
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    r->rank = 0;
    uint64_t seq = 0;
    add_op(r, TSC_NCCL_BROADCAST, 1000, 100, 200, seq++);
    if (barrier_like_step_end)
        add_op(r, TSC_NCCL_ALLGATHER, 50, 300, 310, seq++);
    else
        add_op(r, TSC_NCCL_ALLREDUCE, 4, 300, 310, seq++);
    int64_t t = 1000;
    for (int s = 0; s < 7; s++) {
        t += 500; /* forward pause */
        add_op(r, TSC_NCCL_ALLREDUCE, 100, t, t + 20, seq++);
        add_op(r, TSC_NCCL_ALLREDUCE, 100, t + 25, t + 45, seq++);
        add_op(r, TSC_NCCL_ALLGATHER, 50, t + 50, t + 60, seq++);
        t += 60;
    }
    add_op(r, TSC_NCCL_ALLREDUCE, 100, t + 500, t + 520, seq++); /* cut short */
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_step_method m;
    assert_int_equal(tsa_find_steps(r, NULL, &m), 0);
    assert_int_equal(m, TSA_STEPS_COLLECTIVES);
    assert_int_equal(r->n_steps, 7);
    /* Step k ends with its AllGather and starts where step k-1 ended. */
    for (size_t k = 0; k < r->n_steps; k++) {
        assert_int_equal(r->steps[k].n_nccl, 3);
        assert_int_equal(r->steps[k].end_ns, 1000 + 560 * (int64_t)(k + 1));
        if (k)
            assert_int_equal(r->steps[k].start_ns, r->steps[k - 1].end_ns);
    }
    assert_int_equal(r->steps[0].start_ns, 310); /* end of the barrier */
    tsa_job_free(job);
}

static void test_collective_pattern(void **state)
{
    (void)state;
    collective_pattern(0);
    collective_pattern(1);
}

/* 7 steps of [AR, AR, [long host work], AG]: the longest pause sits inside
 * the step, before the AllGather.  Rotating the cycle there would cut the
 * first step in two and lose it, so all 7 steps must still be found, each
 * starting with its first AllReduce. */
static void test_long_pause_inside_step(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    r->rank = 0;
    uint64_t seq = 0;
    add_op(r, TSC_NCCL_BROADCAST, 1000, 900, 1000, seq++);
    int64_t t = 1000;
    for (int s = 0; s < 7; s++) {
        t += 100; /* forward */
        add_op(r, TSC_NCCL_ALLREDUCE, 100, t, t + 20, seq++);
        add_op(r, TSC_NCCL_ALLREDUCE, 100, t + 25, t + 45, seq++);
        add_op(r, TSC_NCCL_ALLGATHER, 50, t + 445, t + 455, seq++); /* after 400 of checks */
        t += 455;
    }
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_step_method m;
    assert_int_equal(tsa_find_steps(r, NULL, &m), 0);
    assert_int_equal(m, TSA_STEPS_COLLECTIVES);
    assert_int_equal(r->n_steps, 7);
    for (size_t k = 0; k < r->n_steps; k++) {
        assert_int_equal(r->steps[k].n_nccl, 3);
        assert_int_equal(r->steps[k].end_ns, 1000 + 555 * (int64_t)(k + 1));
    }
    tsa_job_free(job);
}

static void test_nvtx_and_marker(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    for (int s = 0; s < 5; s++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", s);
        tsa_range rg = {.start_ns = 1000 * s, .end_ns = 1000 * s + 900,
                        .name = tsa_rank_intern(r, name)};
        assert_int_equal(tsa_rank_add_range(r, &rg), 0);
        tsa_kernel k;
        memset(&k, 0, sizeof k);
        k.start_ns = 1000 * s + 800;
        k.end_ns = 1000 * s + 850;
        k.name = tsa_rank_intern(r, "multi_tensor_apply_kernel<Adam>");
        k.nccl = k.gemm = TSA_NONE;
        assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
    }
    tsa_range other = {.start_ns = 10, .end_ns = 20, .name = tsa_rank_intern(r, "forward")};
    assert_int_equal(tsa_rank_add_range(r, &other), 0);
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_step_method m;
    assert_int_equal(tsa_find_steps(r, NULL, &m), 0);
    assert_int_equal(m, TSA_STEPS_NVTX);
    assert_int_equal(r->n_steps, 5);
    assert_int_equal(r->steps[2].start_ns, 2000);
    assert_int_equal(r->steps[2].end_ns, 2900);
    /* A kernel marker: a step is the period between two markers' starts
     * (issue 23), so five markers make four steps. */
    assert_int_equal(tsa_find_steps(r, "multi_tensor_apply", &m), 0);
    assert_int_equal(m, TSA_STEPS_MARKER);
    assert_int_equal(r->n_steps, 4);
    assert_int_equal(r->steps[1].start_ns, 1800);
    assert_int_equal(r->steps[1].end_ns, 2800);
    /* A range marker likewise: start to next start, not the range's end. */
    assert_int_equal(tsa_find_steps(r, "ProfilerStep#", &m), 0);
    assert_int_equal(m, TSA_STEPS_MARKER);
    assert_int_equal(r->n_steps, 4);
    assert_int_equal(r->steps[2].start_ns, 2000);
    assert_int_equal(r->steps[2].end_ns, 3000);
    /* A marker naming nothing falls back to NVTX steps. */
    assert_int_equal(tsa_find_steps(r, "no_such_thing", &m), 0);
    assert_int_equal(m, TSA_STEPS_NVTX);
    tsa_job_free(job);
}

static void test_no_pattern_is_one_step(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    add_op(r, TSC_NCCL_ALLREDUCE, 1, 100, 200, 0);
    add_op(r, TSC_NCCL_ALLREDUCE, 2, 300, 400, 1);
    add_op(r, TSC_NCCL_ALLREDUCE, 3, 500, 600, 2);
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_step_method m;
    assert_int_equal(tsa_find_steps(r, NULL, &m), 0);
    assert_int_equal(m, TSA_STEPS_NONE);
    assert_int_equal(r->n_steps, 1);
    assert_int_equal(r->steps[0].start_ns, 100);
    assert_int_equal(r->steps[0].end_ns, 600);
    /* An empty rank has no step at all. */
    tsa_rank *e = tsa_job_add_rank(job);
    assert_int_equal(tsa_find_steps(e, NULL, &m), 0);
    assert_int_equal(e->n_steps, 0);
    tsa_job_free(job);
}

/* One GPU, no collectives or NVTX: forward from the main thread, backward
 * from pt_autograd_0, the optimizer from the main thread. */
static void test_autograd_cycle(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    assert_int_equal(tsa_rank_add_thread(r, 5, "python"), 0);
    assert_int_equal(tsa_rank_add_thread(r, 6, "pt_autograd_0"), 0);
    const struct { const char *name; uint32_t tid; } seq[] = {
        {"gemm_fwd", 5}, {"elementwise_fwd", 5}, {"gemm_bwd", 6}, {"elementwise_bwd", 6},
        {"multi_tensor_apply_kernel", 5}};
    for (int step = 0; step < 4; step++)
        for (int j = 0; j < 5; j++) {
            tsa_kernel k;
            memset(&k, 0, sizeof k);
            k.start_ns = 1000 * step + 100 * j;
            k.end_ns = k.start_ns + 90;
            k.name = tsa_rank_intern(r, seq[j].name);
            k.launch_tid = seq[j].tid;
            k.nccl = k.gemm = TSA_NONE;
            assert_int_equal(tsa_rank_add_kernel(r, &k), 0);
        }
    assert_int_equal(tsa_job_finish(job), 0);
    tsa_step_method m;
    assert_int_equal(tsa_find_steps(r, NULL, &m), 0);
    assert_int_equal(m, TSA_STEPS_AUTOGRAD);
    assert_int_equal(r->n_steps, 4);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(r->steps[s].start_ns, 1000 * s);
        assert_int_equal(r->steps[s].end_ns, 1000 * (s + 1));
    }
    assert_int_equal(r->steps[3].end_ns, 3490);
    tsa_job_free(job);
}

static void add_top_call(tsa_rank *r, const char *name, int64_t s, int64_t e)
{
    tsa_range c = {s, e, 1, tsa_rank_intern(r, name)};
    assert_int_equal(TSA_VEC_PUSH(r->top_calls, r->n_top_calls, r->cap_top_calls, c), 0);
}

static tsa_step_method find(tsa_job *job, tsa_rank *r)
{
    tsa_step_method m;
    assert_int_equal(tsa_job_finish(job), 0);
    assert_int_equal(tsa_find_steps(r, NULL, &m), 0);
    return m;
}

/* A serving loop: 4 requests between small library calls give 3 steps,
 * each from one request's start to the next one's. */
static void test_top_call_steps(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    for (int i = 0; i < 4; i++) {
        add_top_call(r, "aten::copy_", 1000 * i, 1000 * i + 50);
        add_top_call(r, "serve_request", 1000 * i + 100, 1000 * i + 900);
    }
    assert_int_equal(find(job, r), TSA_STEPS_TOP_CALL);
    assert_int_equal(r->n_steps, 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(r->steps[k].start_ns, 1000 * k + 100);
        assert_int_equal(r->steps[k].end_ns, 1000 * (k + 1) + 100);
    }
    tsa_job_free(job);
}

/* What is not a loop: an operator repeated (one forward calls linear many
 * times), a call seen twice, a repeated call that holds under half of the
 * time. */
static void test_top_call_not_a_loop(void **state)
{
    (void)state;
    static const struct { const char *name; int repeats; int64_t dur; } cases[] = {
        {"aten::linear", 10, 900}, {"serve_request", 2, 900}, {"serve_request", 4, 400}};
    for (size_t c = 0; c < 3; c++) {
        tsa_job *job = tsa_job_new("mem");
        tsa_rank *r = tsa_job_add_rank(job);
        for (int i = 0; i < cases[c].repeats; i++)
            add_top_call(r, cases[c].name, 1000 * i, 1000 * i + cases[c].dur);
        add_top_call(r, "model_load", 1000 * cases[c].repeats, 1000 * cases[c].repeats + 1);
        assert_int_equal(find(job, r), TSA_STEPS_NONE);
        tsa_job_free(job);
    }
    assert_true(tsa_is_library_call("aten::mm"));
    assert_true(tsa_is_library_call("torch/_tensor.py(575): backward"));
    assert_false(tsa_is_library_call("nn.Module: Net_0"));
    assert_false(tsa_is_library_call("Stage::runRemote"));
}

/* The loader's reduction: the busier thread, under its two wrappers (one
 * of them called twice over the same span), top-level calls only, shifted
 * by the trace's base time. */
static void test_loop_reduce(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    uint32_t main_ = tsa_rank_intern(r, "train.py(1): <module>");
    uint32_t loop = tsa_rank_intern(r, "serve_loop");
    uint32_t req = tsa_rank_intern(r, "serve_request");
    uint32_t mm = tsa_rank_intern(r, "aten::mm");
    uint32_t setup = tsa_rank_intern(r, "setup");
    kineto_loop l;
    memset(&l, 0, sizeof l);
    /* out of order, as a trace may list them */
    for (int i = 2; i >= 0; i--) {
        assert_int_equal(kineto_loop_add(&l, 3000 * i + 200, 3000 * i + 2900, 7, req), 0);
        assert_int_equal(kineto_loop_add(&l, 3000 * i + 300, 3000 * i + 900, 7, mm), 0);
    }
    assert_int_equal(kineto_loop_add(&l, 0, 10000, 7, main_), 0);
    assert_int_equal(kineto_loop_add(&l, 10, 9990, 7, loop), 0);
    assert_int_equal(kineto_loop_add(&l, 10, 9990, 7, loop), 0);
    assert_int_equal(kineto_loop_add(&l, 20, 120, 7, setup), 0);
    assert_int_equal(kineto_loop_add(&l, 0, 9000, 8, req), 0); /* another thread */
    assert_int_equal(kineto_loop_finish(&l, r, 1000000), 0);
    assert_null(l.calls);
    assert_int_equal(r->n_top_calls, 4);
    assert_int_equal(r->top_calls[0].name, setup);
    assert_int_equal(r->top_calls[0].start_ns, 1000020);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r->top_calls[1 + i].name, req);
        assert_int_equal(r->top_calls[1 + i].tid, 7);
        assert_int_equal(r->top_calls[1 + i].start_ns, 1000000 + 3000 * i + 200);
        assert_int_equal(r->top_calls[1 + i].end_ns, 1000000 + 3000 * i + 2900);
    }
    tsa_job_free(job);
}

/* Room for an index that jumps far past the capacity (an interned
 * string's index into a per-string table). */
static void test_vec_reserve_jump(void **state)
{
    (void)state;
    uint8_t *t = NULL;
    size_t cap = 0;
    assert_int_equal(tsa_vec_reserve((void **)&t, &cap, 0, 1), 0);
    assert_true(cap > 0);
    assert_int_equal(tsa_vec_reserve((void **)&t, &cap, 100000, 1), 0);
    assert_true(cap > 100000);
    t[100000] = 1;
    free(t);
}

/* Growing past the huge-page hint's size copies through a new block
 * (tsa_realloc_huge): every element kept, in order, from a few KiB up to
 * 64 MiB. */
static void test_vec_large_growth_keeps_contents(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0, len = 0;
    const size_t n = (size_t)16 << 20;   /* 64 MiB of uint32_t */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(TSA_VEC_PUSH(a, len, cap, (uint32_t)(i * 2654435761u)), 0);
    assert_true(len == n && cap >= n);
    for (size_t i = 0; i < n; i++)
        if (a[i] != (uint32_t)(i * 2654435761u))
            fail_msg("element %zu lost in growth", i);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequence_period),
        cmocka_unit_test(test_default_warmup),
        cmocka_unit_test(test_collective_pattern),
        cmocka_unit_test(test_long_pause_inside_step),
        cmocka_unit_test(test_nvtx_and_marker),
        cmocka_unit_test(test_no_pattern_is_one_step),
        cmocka_unit_test(test_autograd_cycle),
        cmocka_unit_test(test_top_call_steps),
        cmocka_unit_test(test_top_call_not_a_loop),
        cmocka_unit_test(test_loop_reduce),
        cmocka_unit_test(test_vec_reserve_jump),
        cmocka_unit_test(test_vec_large_growth_keeps_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
