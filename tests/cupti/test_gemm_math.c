/* GEMM shapes and FLOPs: every transpose combination, batch forms,
 * complex types, saturation and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gemm_math.h"

#ifdef TSC_HAVE_CUPTI
#include <cublas_api.h>
#include <library_types.h>
#endif

static void flops_basic(void **state)
{
    (void)state;
    assert_int_equal(tsc_gemm_flops(2, 3, 4, 1, 0), 48);
    assert_int_equal(tsc_gemm_flops(2, 3, 4, 5, 0), 240);
    assert_int_equal(tsc_gemm_flops(2, 3, 4, 5, 1), 960);
    assert_int_equal(tsc_gemm_flops(8192, 8192, 8192, 1, 0), 1099511627776ull);
    assert_int_equal(tsc_gemm_flops(0, 3, 4, 1, 0), 0);
    assert_int_equal(tsc_gemm_flops(2, 3, 4, 0, 0), 0);
    assert_int_equal(tsc_gemm_flops(-1, 3, 4, 1, 0), 0);
    assert_int_equal(tsc_gemm_flops(2, 3, -4, 1, 0), 0);
    assert_int_equal(tsc_gemm_flops(2, 3, 4, -1, 0), 0);
}

static void flops_saturate(void **state)
{
    (void)state;
    assert_true(tsc_gemm_flops(INT64_MAX, INT64_MAX, 2, 1, 0) == UINT64_MAX);
    assert_true(tsc_gemm_flops(1ll << 21, 1ll << 21, 1ll << 21, 1, 1) == UINT64_MAX);
    /* 2^62 exactly fits, x4 does not. */
    assert_true(tsc_gemm_flops(1ll << 20, 1ll << 20, 1ll << 21, 1, 0) == (1ull << 62));
    assert_true(tsc_gemm_flops(1ll << 20, 1ll << 20, 1ll << 21, 1, 1) == UINT64_MAX);
}

static void complex_types(void **state)
{
    (void)state;
    const uint32_t complex_codes[] = {4, 5, 6, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27};
    int expected[40] = {0};
    for (size_t i = 0; i < sizeof complex_codes / sizeof complex_codes[0]; i++)
        expected[complex_codes[i]] = 1;
    for (uint32_t t = 0; t < 40; t++)
        assert_int_equal(tsc_dtype_is_complex(t), expected[t]);
    assert_int_equal(tsc_dtype_is_complex(0xffffffffu), 0);
#ifdef TSC_HAVE_CUPTI
    /* The numeric codes are the headers' own. */
    assert_true(tsc_dtype_is_complex(CUDA_C_16F) && tsc_dtype_is_complex(CUDA_C_16BF) &&
                tsc_dtype_is_complex(CUDA_C_32F) && tsc_dtype_is_complex(CUDA_C_64F) &&
                tsc_dtype_is_complex(CUDA_C_8I) && tsc_dtype_is_complex(CUDA_C_32I));
    assert_false(tsc_dtype_is_complex(CUDA_R_16F) || tsc_dtype_is_complex(CUDA_R_16BF) ||
                 tsc_dtype_is_complex(CUDA_R_32F) || tsc_dtype_is_complex(CUDA_R_64F) ||
                 tsc_dtype_is_complex(CUDA_R_8F_E4M3) || tsc_dtype_is_complex(CUDA_R_8F_E5M2) ||
                 tsc_dtype_is_complex(CUDA_R_4F_E2M1) || tsc_dtype_is_complex(CUDA_R_8I));
    assert_int_equal(TSC_OP_N, CUBLAS_OP_N);
    assert_int_equal(TSC_OP_T, CUBLAS_OP_T);
    assert_int_equal(TSC_OP_C, CUBLAS_OP_C);
    assert_int_equal(TSC_OP_CONJG, CUBLAS_OP_CONJG);
#endif
}

static void direct_every_transpose(void **state)
{
    (void)state;
    /* Direct APIs pass m, n, k: transposes change the layouts read, never
     * the FLOPs. */
    for (int ta = 0; ta <= 3; ta++)
        for (int tb = 0; tb <= 3; tb++)
            for (int64_t batch = 0; batch <= 3; batch++) {
                tsc_desc_gemm d;
                tsc_gemm_desc_direct(&d, TSC_GEMM_STRIDED_BATCHED_EX, ta, tb, 64, 32, 16, batch,
                                     14, 14, 68);
                assert_int_equal(d.m, 64);
                assert_int_equal(d.n, 32);
                assert_int_equal(d.k, 16);
                assert_int_equal(d.batch, batch);
                assert_int_equal(d.transa, ta);
                assert_int_equal(d.transb, tb);
                assert_int_equal(d.complex, 0);
                assert_int_equal(d.flops, 2ull * 64 * 32 * 16 * (uint64_t)batch);
                assert_int_equal(d.api, TSC_GEMM_STRIDED_BATCHED_EX);
                assert_int_equal(d.a_type, 14);
                assert_int_equal(d.c_type, 14);
                assert_int_equal(d.compute_type, 68);
            }
}

static void direct_complex_and_bad(void **state)
{
    (void)state;
    tsc_desc_gemm d;
    tsc_gemm_desc_direct(&d, TSC_GEMM_TYPED, 2, 0, 10, 20, 30, 1, 4, 4, 68);
    assert_int_equal(d.complex, 1);
    assert_int_equal(d.flops, 4ull * 2 * 10 * 20 * 30);
    tsc_gemm_desc_direct(&d, TSC_GEMM_EX, 0, 0, -5, 20, 30, 1, 0, 0, 68);
    assert_int_equal(d.m, 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(d.k, 0);
    assert_int_equal(d.flops, 0);
    tsc_gemm_desc_direct(&d, TSC_GEMM_BATCHED_EX, 0, 0, 5, 20, 30, -2, 0, 0, 68);
    assert_int_equal(d.batch, 0);
    assert_int_equal(d.flops, 0);
}

static tsc_lt_layout lay(uint64_t rows, uint64_t cols, int32_t batch, uint32_t type)
{
    tsc_lt_layout l = {rows, cols, batch, type};
    return l;
}

/* m=64, n=32, k=16: the layouts a correct caller builds for each transpose. */
static void lt_every_transpose(void **state)
{
    (void)state;
    const uint64_t m = 64, n = 32, k = 16;
    for (int ta = 0; ta <= 3; ta++)
        for (int tb = 0; tb <= 3; tb++) {
            int at = tsc_op_transposes(ta), bt = tsc_op_transposes(tb);
            tsc_lt_layout a = at ? lay(k, m, 1, 14) : lay(m, k, 1, 14);
            tsc_lt_layout b = bt ? lay(n, k, 1, 14) : lay(k, n, 1, 14);
            tsc_lt_layout dd = lay(m, n, 1, 0);
            tsc_desc_gemm d;
            assert_int_equal(tsc_gemm_desc_lt(&d, ta, tb, &a, &b, &dd, 68), 0);
            assert_int_equal(d.m, m);
            assert_int_equal(d.n, n);
            assert_int_equal(d.k, k);
            assert_int_equal(d.batch, 1);
            assert_int_equal(d.flops, 2 * m * n * k);
            assert_int_equal(d.api, TSC_GEMM_LT_MATMUL);
            assert_int_equal(d.transa, ta);
            assert_int_equal(d.transb, tb);
            assert_int_equal(d.a_type, 14);
            assert_int_equal(d.c_type, 0);
            assert_int_equal(d.compute_type, 68);
        }
    assert_int_equal(tsc_op_transposes(TSC_OP_N), 0);
    assert_int_equal(tsc_op_transposes(TSC_OP_CONJG), 0);
    assert_int_equal(tsc_op_transposes(TSC_OP_T), 1);
    assert_int_equal(tsc_op_transposes(TSC_OP_C), 1);
}

static void lt_batches(void **state)
{
    (void)state;
    tsc_desc_gemm d;
    /* Strided batch on all three. */
    tsc_lt_layout a = lay(8, 4, 12, 2), b = lay(4, 6, 12, 2), dd = lay(8, 6, 12, 2);
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &a, &b, &dd, 68), 0);
    assert_int_equal(d.batch, 12);
    assert_int_equal(d.flops, 2ull * 8 * 6 * 4 * 12);
    /* Broadcast A (batch 1) against batched B and D. */
    a.batch = 1;
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &a, &b, &dd, 68), 0);
    assert_int_equal(d.flops, 2ull * 8 * 6 * 4 * 12);
    /* Batch count 0 (unset) counts as 1. */
    a.batch = 0;
    b.batch = 0;
    dd.batch = 0;
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &a, &b, &dd, 68), 0);
    assert_int_equal(d.batch, 1);
    /* Disagreeing batch counts are flagged. */
    a.batch = 3;
    dd.batch = 12;
    b.batch = 12;
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &a, &b, &dd, 68), -1);
    assert_int_equal(d.batch, 12);
}

static void lt_inconsistent(void **state)
{
    (void)state;
    tsc_desc_gemm d;
    tsc_lt_layout a = lay(8, 4, 1, 0), b = lay(5, 6, 1, 0), dd = lay(8, 6, 1, 0);
    /* B's rows (5) do not match k (4). */
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &a, &b, &dd, 68), -1);
    assert_int_equal(d.m, 8);
    assert_int_equal(d.n, 6);
    assert_int_equal(d.k, 4);
    /* A's rows do not match m. */
    tsc_lt_layout a2 = lay(7, 4, 1, 0), b2 = lay(4, 6, 1, 0);
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &a2, &b2, &dd, 68), -1);
    /* Complex Lt matmul. */
    tsc_lt_layout ac = lay(8, 4, 1, 4), bc = lay(4, 6, 1, 4), dc = lay(8, 6, 1, 4);
    assert_int_equal(tsc_gemm_desc_lt(&d, 0, 0, &ac, &bc, &dc, 68), 0);
    assert_int_equal(d.complex, 1);
    assert_int_equal(d.flops, 4ull * 2 * 8 * 6 * 4);
    /* Huge sizes saturate instead of wrapping. */
    tsc_lt_layout ah = lay(UINT64_MAX, 2, 1, 0), bh = lay(2, 2, 1, 0), dh = lay(UINT64_MAX, 2, 1, 0);
    tsc_gemm_desc_lt(&d, 0, 0, &ah, &bh, &dh, 68);
    assert_true(d.flops == UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flops_basic),          cmocka_unit_test(flops_saturate),
        cmocka_unit_test(complex_types),        cmocka_unit_test(direct_every_transpose),
        cmocka_unit_test(direct_complex_and_bad), cmocka_unit_test(lt_every_transpose),
        cmocka_unit_test(lt_batches),           cmocka_unit_test(lt_inconsistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
