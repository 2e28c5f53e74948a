/* The launch fold alone: kernels meet their calls in either order, nested
 * calls make one call, graph kernels share their launch, what waits too
 * long or finds no room is written alone, and every input comes out
 * exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "launch_fold.h"

#define T0 1795600000000000000ull
#define MAX_OUT 300000

typedef struct out_rec {
    char what;                 /* 'b' both, 'k' kernel alone, 'c' call alone, 'x' extcorr */
    uint32_t corr;             /* the kernel's (or the call's, or the ext record's) */
    uint64_t call_start, call_end, ext;
    const char *call_name;
} out_rec;

static out_rec outs[MAX_OUT];
static size_t n_out;

static void on_both(void *ctx, const tsc_kernel_rec *k, const tsc_fold_call *c)
{
    (void)ctx;
    outs[n_out++] = (out_rec){'b', k->corr, c->start, c->end, 0, c->name};
}

static void on_kernel(void *ctx, const tsc_kernel_rec *k)
{
    (void)ctx;
    outs[n_out++] = (out_rec){'k', k->corr, 0, 0, 0, NULL};
}

static void on_call(void *ctx, const tsc_fold_call *c)
{
    (void)ctx;
    outs[n_out++] = (out_rec){'c', c->corr, c->start, c->end, 0, c->name};
}

static void on_ext(void *ctx, uint32_t corr, uint64_t id, uint8_t kind)
{
    (void)ctx, (void)kind;
    outs[n_out++] = (out_rec){'x', corr, 0, 0, id, NULL};
}

static const tsc_fold_actions acts = {NULL, on_both, on_kernel, on_call, on_ext};

static tsc_kernel_rec kernel(uint32_t corr)
{
    tsc_kernel_rec k;
    memset(&k, 0, sizeof k);
    k.start = T0 + 1000000 + corr;
    k.end = k.start + 100;
    k.corr = corr;
    k.name = "k";
    return k;
}

static tsc_fold_call call(uint32_t corr, uint32_t tid, uint64_t start, uint64_t end,
                          const char *name)
{
    return (tsc_fold_call){.corr = corr, .tid = tid, .cbid = 1, .domain = TSC_API_RUNTIME,
                           .start = T0 + start, .end = T0 + end, .name = name};
}

static size_t count(char what)
{
    size_t n = 0;
    for (size_t i = 0; i < n_out; i++)
        n += outs[i].what == what;
    return n;
}

static int setup(void **state)
{
    *state = tsc_fold_new(17);
    assert_non_null(*state);
    tsc_fold_set_ext_redundant(*state, 1);
    n_out = 0;
    return 0;
}

static int teardown(void **state)
{
    tsc_fold_free(*state);
    return 0;
}

static void either_order(void **state)
{
    tsc_fold *f = *state;
    tsc_kernel_rec k1 = kernel(1);
    tsc_fold_add_kernel(f, &k1, &acts);                     /* kernel first */
    tsc_fold_call c1 = call(1, 7, 10, 20, "cudaLaunchKernel");
    tsc_fold_add_call(f, &c1, &acts);
    assert_int_equal(n_out, 0);                             /* not before the buffer ends */
    tsc_fold_settle(f, &acts);
    assert_int_equal(n_out, 1);
    tsc_fold_call c2 = call(2, 7, 30, 40, "cudaLaunchKernel"); /* call first */
    tsc_fold_add_call(f, &c2, &acts);
    tsc_fold_settle(f, &acts);
    tsc_kernel_rec k2 = kernel(2);
    tsc_fold_add_kernel(f, &k2, &acts);
    assert_int_equal(n_out, 2);
    assert_int_equal(count('b'), 2);
    assert_int_equal(outs[0].corr, 1);
    assert_int_equal(outs[1].corr, 2);
    assert_int_equal(outs[1].call_start, T0 + 30);
    tsc_fold_drain(f, &acts);
    assert_int_equal(n_out, 2);                             /* nothing left over */
}

/* Runtime call around its driver call: the kernel gets the outer span and
 * the outer name, whether the pair shares an id or not. */
static void nested_pairs(void **state)
{
    tsc_fold *f = *state;
    tsc_fold_call d5 = call(5, 7, 110, 120, "cuLaunchKernel");
    tsc_fold_call r5 = call(5, 7, 100, 130, "cudaLaunchKernel");
    tsc_fold_call d6 = call(6, 7, 210, 220, "cuLaunchKernel");
    tsc_fold_call r7 = call(7, 7, 200, 230, "cudaLaunchKernel");
    tsc_fold_add_call(f, &d5, &acts);
    tsc_fold_add_call(f, &r5, &acts);
    tsc_fold_add_call(f, &d6, &acts);
    tsc_fold_add_call(f, &r7, &acts);
    tsc_fold_settle(f, &acts);
    tsc_kernel_rec k5 = kernel(5), k6 = kernel(6);
    tsc_fold_add_kernel(f, &k5, &acts);
    tsc_fold_add_kernel(f, &k6, &acts);
    tsc_fold_drain(f, &acts);
    assert_int_equal(n_out, 2);
    assert_int_equal(count('b'), 2);
    assert_int_equal(outs[0].call_start, T0 + 100);
    assert_int_equal(outs[0].call_end, T0 + 130);
    assert_string_equal(outs[0].call_name, "cudaLaunchKernel");
    assert_int_equal(outs[1].call_start, T0 + 200);
    assert_int_equal(outs[1].call_end, T0 + 230);
    assert_string_equal(outs[1].call_name, "cudaLaunchKernel");
    assert_int_equal(tsc_fold_get_stats(f).nested, 2);
}

static void graph_kernels_share_their_launch(void **state)
{
    tsc_fold *f = *state;
    tsc_kernel_rec g1 = kernel(9), g2 = kernel(9), g3 = kernel(9);
    tsc_fold_add_kernel(f, &g1, &acts);
    tsc_fold_add_kernel(f, &g2, &acts);
    tsc_fold_call g = call(9, 7, 10, 20, "cudaGraphLaunch");
    g.graph = 1;
    tsc_fold_add_call(f, &g, &acts);
    tsc_fold_settle(f, &acts);
    assert_int_equal(count('b'), 2);
    tsc_fold_add_kernel(f, &g3, &acts);
    tsc_fold_drain(f, &acts);
    assert_int_equal(n_out, 3);
    assert_int_equal(count('b'), 3);
}

static void what_waits_too_long_is_written_alone(void **state)
{
    tsc_fold *f = *state;
    tsc_kernel_rec k = kernel(20);
    tsc_fold_add_kernel(f, &k, &acts);
    tsc_fold_call c = call(21, 7, 10, 20, "cudaLaunchKernel");
    tsc_fold_add_call(f, &c, &acts);
    tsc_fold_add_ext(f, 21, 0x8000000100000001ull, 5, &acts);
    tsc_fold_settle(f, &acts);
    tsc_fold_age(f, &acts);
    assert_int_equal(n_out, 0);                             /* one period: still waiting */
    tsc_fold_age(f, &acts);
    assert_int_equal(n_out, 3);
    assert_int_equal(count('k'), 1);
    assert_int_equal(count('c'), 1);
    assert_int_equal(count('x'), 1);                        /* the analyzer's join needs it */
    tsc_fold_stats st = tsc_fold_get_stats(f);
    assert_int_equal(st.kernels_alone, 1);
    assert_int_equal(st.calls_alone, 1);
}

static void external_ids_only_when_needed(void **state)
{
    tsc_fold *f = *state;
    for (int redundant = 1; redundant >= 0; redundant--) {
        n_out = 0;
        tsc_fold_set_ext_redundant(f, redundant);
        uint32_t corr = 30 + (uint32_t)redundant;
        tsc_fold_add_ext(f, corr, 0x8000000200000000ull | corr, 5, &acts);
        tsc_fold_call c = call(corr, 7, 10, 20, "cuLaunchKernelEx");
        tsc_fold_add_call(f, &c, &acts);
        tsc_fold_settle(f, &acts);
        tsc_kernel_rec k = kernel(corr);
        tsc_fold_add_kernel(f, &k, &acts);
        tsc_fold_drain(f, &acts);
        assert_int_equal(count('b'), 1);
        assert_int_equal(count('x'), redundant ? 0 : 1);
    }
}

/* Far more waiting than the cap allows: given up early, never lost. */
static void full_tables_give_up_but_lose_nothing(void **state)
{
    (void)state;
    tsc_fold *f = tsc_fold_new(12); /* 4,096 slots, no growth */
    for (uint32_t i = 1; i <= 10000; i++) {
        tsc_kernel_rec k = kernel(i);
        tsc_fold_add_kernel(f, &k, &acts);
    }
    for (uint32_t i = 1; i <= 10000; i++) {
        tsc_fold_call c = call(i, 7, 10 * i, 10 * i + 5, "cudaLaunchKernel");
        tsc_fold_add_call(f, &c, &acts);
    }
    tsc_fold_drain(f, &acts);
    tsc_fold_stats st = tsc_fold_get_stats(f);
    assert_true(st.pushed_out > 0);
    assert_true(count('b') > 0); /* the newer half stayed and folded */
    /* Every kernel once, with its call or alone; every call once. */
    assert_int_equal(count('b') + count('k'), 10000);
    assert_int_equal(count('b') + count('c'), 10000);
    tsc_fold_free(f);
}

/* A skew of 90,000 launches between kernels and calls: the tables grow
 * (to 2^17 slots, 75% full) and everything folds. */
static void large_skew_folds(void **state)
{
    tsc_fold *f = *state;
    for (uint32_t i = 1; i <= 90000; i++) {
        tsc_kernel_rec k = kernel(i);
        tsc_fold_add_kernel(f, &k, &acts);
    }
    for (uint32_t i = 1; i <= 90000; i++) {
        tsc_fold_call c = call(i, 7, 10 * (uint64_t)i, 10 * (uint64_t)i + 5, "cudaLaunchKernel");
        tsc_fold_add_call(f, &c, &acts);
        if (i % 20000 == 0)
            tsc_fold_settle(f, &acts); /* buffer boundaries */
    }
    tsc_fold_drain(f, &acts);
    assert_int_equal(count('b'), 90000);
    assert_int_equal(n_out, 90000);
    assert_int_equal(tsc_fold_get_stats(f).pushed_out, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(either_order, setup, teardown),
        cmocka_unit_test_setup_teardown(nested_pairs, setup, teardown),
        cmocka_unit_test_setup_teardown(graph_kernels_share_their_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(what_waits_too_long_is_written_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(external_ids_only_when_needed, setup, teardown),
        cmocka_unit_test_setup_teardown(full_tables_give_up_but_lose_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(large_skew_folds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
