/* The cuBLAS wrappers end to end against a fake cuBLAS: one record per
 * outermost call, shapes and FLOPs from the arguments or the Lt layouts,
 * external correlation pushed and popped around the real call, statuses
 * and errno passed through. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <cublasLt.h>
#include <cublas_api.h>

#include "cupti_control.h"
#include "fake_cublas.h"
#include "fake_recorder.h"

/* ---- stand-ins for the rest of the capture (cupti_inject.c) ---- */

static tsc_cupti_mode mode = TSC_CUPTI_FULL;
static uint64_t pushed[64];
static int n_pushed, n_popped, depth_at_real, n_counted;

tsc_cupti_mode tsc_cupti_current_mode(void)
{
    return mode;
}

int tsc_cupti_push_extcorr(uint64_t id)
{
    if (n_pushed < 64)
        pushed[n_pushed] = id;
    n_pushed++;
    return 1;
}

void tsc_cupti_pop_extcorr(void)
{
    n_popped++;
}

void tsc_cupti_count_gemm(void)
{
    n_counted++;
}

/* ------------------------------------------------------------- helpers */

static int setup(void **state)
{
    (void)state;
    fake_reset();
    memset(fake_cublas(), 0, sizeof *fake_cublas());
    mode = TSC_CUPTI_FULL;
    n_pushed = n_popped = depth_at_real = n_counted = 0;
    return 0;
}

static tsc_desc_gemm gemm_desc_of(const tsc_event *e)
{
    const fake_desc *d = fake_find_desc(e->desc);
    assert_non_null(d);
    assert_int_equal(d->type, TSC_DESC_GEMM);
    assert_int_equal(d->len, sizeof(tsc_desc_gemm));
    tsc_desc_gemm g;
    memcpy(&g, d->payload, sizeof g);
    return g;
}

/* ---------------------------------------------------------------- tests */

static void gemm_ex_counted_once(void **state)
{
    (void)state;
    /* The fake cublasGemmEx calls cublasLtMatmul inside, through the
     * wrapper: only the outer call is recorded. */
    cublasStatus_t st = cublasGemmEx(NULL, CUBLAS_OP_T, CUBLAS_OP_N, 512, 256, 1024, NULL, NULL,
                                     CUDA_R_16BF, 0, NULL, CUDA_R_16BF, 0, NULL, NULL, CUDA_R_16BF,
                                     0, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    assert_int_equal(st, CUBLAS_STATUS_SUCCESS);
    assert_int_equal(fake_cublas()->gemm_ex, 1);
    assert_int_equal(fake_cublas()->lt_matmul, 1);
    assert_int_equal(fake_count_events(TSC_EV_GEMM), 1);
    const tsc_event *e = &fake.events[0];
    tsc_desc_gemm g = gemm_desc_of(e);
    assert_int_equal(g.api, TSC_GEMM_EX);
    assert_int_equal(g.m, 512);
    assert_int_equal(g.n, 256);
    assert_int_equal(g.k, 1024);
    assert_int_equal(g.batch, 1);
    assert_int_equal(g.transa, CUBLAS_OP_T);
    assert_int_equal(g.transb, CUBLAS_OP_N);
    assert_int_equal(g.a_type, CUDA_R_16BF);
    assert_int_equal(g.c_type, CUDA_R_16BF);
    assert_int_equal(g.compute_type, CUBLAS_COMPUTE_32F);
    assert_int_equal(g.flops, 2ull * 512 * 256 * 1024);
    assert_int_equal(e->aux, CUBLAS_STATUS_SUCCESS);
    assert_true(e->end_ns > e->start_ns);
    assert_int_equal(e->val, 1);
    /* One external id, for this event, popped again. */
    assert_int_equal(n_pushed, 1);
    assert_int_equal(n_popped, 1);
    assert_int_equal(pushed[0], TSC_EXTCORR_ID(e->desc, e->val));
    /* The depth guard is back to zero: a direct Lt call records again. */
    cublasLtMatmulDescOpaque_t d = {{0}};
    cublasLtMatrixLayoutOpaque_t a = {{0}}, b = {{0}}, c = {{0}};
    a.data[FL_ROWS] = 4, a.data[FL_COLS] = 8;
    b.data[FL_ROWS] = 8, b.data[FL_COLS] = 2;
    c.data[FL_ROWS] = 4, c.data[FL_COLS] = 2;
    assert_int_equal(cublasLtMatmul(NULL, &d, NULL, NULL, &a, NULL, &b, NULL, NULL, &c, NULL, &c,
                                    NULL, NULL, 0, NULL),
                     CUBLAS_STATUS_SUCCESS);
    assert_int_equal(fake_count_events(TSC_EV_GEMM), 2);
    assert_int_equal(fake.events[1].val, 2);
}

static void lt_layouts_every_transpose(void **state)
{
    (void)state;
    const uint64_t m = 96, n = 40, k = 24;
    int rec = 0;
    for (int ta = 0; ta <= 2; ta++)
        for (int tb = 0; tb <= 2; tb++) {
            cublasLtMatmulDescOpaque_t d = {{0}};
            d.data[FD_TRANSA] = (uint64_t)ta;
            d.data[FD_TRANSB] = (uint64_t)tb;
            d.data[FD_COMPUTE] = CUBLAS_COMPUTE_32F_FAST_16BF;
            cublasLtMatrixLayoutOpaque_t a = {{0}}, b = {{0}}, c = {{0}}, dd = {{0}};
            a.data[FL_ROWS] = ta ? k : m;
            a.data[FL_COLS] = ta ? m : k;
            a.data[FL_BATCH] = 6;
            a.data[FL_TYPE] = CUDA_R_16BF;
            b.data[FL_ROWS] = tb ? n : k;
            b.data[FL_COLS] = tb ? k : n;
            b.data[FL_BATCH] = 6;
            c.data[FL_ROWS] = 1; /* C is not read when D is given */
            c.data[FL_COLS] = 1;
            dd.data[FL_ROWS] = m;
            dd.data[FL_COLS] = n;
            dd.data[FL_BATCH] = 6;
            dd.data[FL_TYPE] = CUDA_R_32F;
            cublasLtMatmul(NULL, &d, NULL, NULL, &a, NULL, &b, NULL, NULL, &c, NULL, &dd, NULL,
                           NULL, 0, NULL);
            tsc_desc_gemm g = gemm_desc_of(&fake.events[rec++]);
            assert_int_equal(g.api, TSC_GEMM_LT_MATMUL);
            assert_int_equal(g.m, m);
            assert_int_equal(g.n, n);
            assert_int_equal(g.k, k);
            assert_int_equal(g.batch, 6);
            assert_int_equal(g.transa, ta);
            assert_int_equal(g.transb, tb);
            assert_int_equal(g.a_type, CUDA_R_16BF);
            assert_int_equal(g.c_type, CUDA_R_32F);
            assert_int_equal(g.compute_type, CUBLAS_COMPUTE_32F_FAST_16BF);
            assert_int_equal(g.flops, 2 * m * n * k * 6);
        }
    assert_int_equal(fake_cublas()->lt_matmul, 9);
    /* No D layout: C's shape is used. */
    cublasLtMatmulDescOpaque_t d = {{0}};
    cublasLtMatrixLayoutOpaque_t a = {{0}}, b = {{0}}, c = {{0}};
    a.data[FL_ROWS] = 3, a.data[FL_COLS] = 5;
    b.data[FL_ROWS] = 5, b.data[FL_COLS] = 7;
    c.data[FL_ROWS] = 3, c.data[FL_COLS] = 7;
    cublasLtMatmul(NULL, &d, NULL, NULL, &a, NULL, &b, NULL, NULL, &c, NULL, NULL, NULL, NULL, 0,
                   NULL);
    tsc_desc_gemm g = gemm_desc_of(&fake.events[rec]);
    assert_int_equal(g.flops, 2ull * 3 * 7 * 5);
}

static void typed_and_batched(void **state)
{
    (void)state;
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 10, 20, 30, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    cublasCgemm_v2(NULL, CUBLAS_OP_C, CUBLAS_OP_N, 10, 20, 30, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    cublasSgemmStridedBatched(NULL, CUBLAS_OP_N, CUBLAS_OP_T, 8, 8, 8, NULL, NULL, 0, 64, NULL, 0,
                              64, NULL, NULL, 0, 64, 12);
    cublasGemmStridedBatchedEx(NULL, CUBLAS_OP_T, CUBLAS_OP_N, 64, 128, 32, NULL, NULL, CUDA_R_16F,
                               0, 0, NULL, CUDA_R_16F, 0, 0, NULL, NULL, CUDA_R_16F, 0, 0, 16,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t st = cublasGemmBatchedEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL,
                                            CUDA_R_32F, 0, NULL, CUDA_R_32F, 0, NULL, NULL,
                                            CUDA_R_32F, 0, 3, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT);
    assert_int_equal(st, CUBLAS_STATUS_INVALID_VALUE);
    assert_int_equal(fake_count_events(TSC_EV_GEMM), 5);

    tsc_desc_gemm g = gemm_desc_of(&fake.events[0]);
    assert_int_equal(g.api, TSC_GEMM_TYPED);
    assert_int_equal(g.a_type, CUDA_R_32F);
    assert_int_equal(g.compute_type, CUBLAS_COMPUTE_32F);
    assert_int_equal(g.flops, 2ull * 10 * 20 * 30);
    g = gemm_desc_of(&fake.events[1]);
    assert_int_equal(g.complex, 1);
    assert_int_equal(g.a_type, CUDA_C_32F);
    assert_int_equal(g.flops, 8ull * 10 * 20 * 30);
    g = gemm_desc_of(&fake.events[2]);
    assert_int_equal(g.api, TSC_GEMM_TYPED_STRIDED);
    assert_int_equal(g.batch, 12);
    assert_int_equal(g.flops, 2ull * 8 * 8 * 8 * 12);
    g = gemm_desc_of(&fake.events[3]);
    assert_int_equal(g.api, TSC_GEMM_STRIDED_BATCHED_EX);
    assert_int_equal(g.a_type, CUDA_R_16F);
    assert_int_equal(g.flops, 2ull * 64 * 128 * 32 * 16);
    g = gemm_desc_of(&fake.events[4]);
    assert_int_equal(g.api, TSC_GEMM_BATCHED_EX);
    assert_int_equal(g.batch, 3);
    assert_int_equal(fake.events[4].aux, CUBLAS_STATUS_INVALID_VALUE);
    /* Same shape again: same descriptor, new counter value. */
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 10, 20, 30, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    assert_int_equal(fake.events[5].desc, fake.events[0].desc);
    assert_int_not_equal(fake.events[5].val, fake.events[0].val);
    assert_int_equal(n_pushed, 6);
    assert_int_equal(n_popped, 6);
    assert_int_equal(n_counted, 6); /* every recorded call counts as device work */
}

/* A handle in TF32 math mode (PyTorch's allow_tf32) turns single-precision
 * real fp32 calls into TF32 ones: the record says CUBLAS_COMPUTE_32F_FAST_TF32
 * (flag bits of the mode do not matter).  Other precisions (bf16, complex)
 * and explicit compute types (pedantic) are left as they are. */
static void tf32_math_mode(void **state)
{
    (void)state;
    fake_cublas()->math_mode =
        CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, CUDA_R_32F, 0, NULL,
                 CUDA_R_32F, 0, NULL, NULL, CUDA_R_32F, 0, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, CUDA_R_16BF, 0, NULL,
                 CUDA_R_16BF, 0, NULL, NULL, CUDA_R_16BF, 0, CUBLAS_COMPUTE_32F,
                 CUBLAS_GEMM_DEFAULT);
    cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, CUDA_R_32F, 0, NULL,
                 CUDA_R_32F, 0, NULL, NULL, CUDA_R_32F, 0, CUBLAS_COMPUTE_32F_PEDANTIC,
                 CUBLAS_GEMM_DEFAULT);
    cublasCgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    fake_cublas()->math_mode = CUBLAS_DEFAULT_MATH;
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    assert_int_equal(fake_count_events(TSC_EV_GEMM), 6);
    static const uint32_t want[] = {CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_TF32,
                                    CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC,
                                    CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F};
    for (int i = 0; i < 6; i++)
        assert_int_equal(gemm_desc_of(&fake.events[i]).compute_type, want[i]);
}

static void passthrough_when_off(void **state)
{
    (void)state;
    mode = TSC_CUPTI_OFF;
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    mode = TSC_CUPTI_LIGHT; /* light keeps GEMMs */
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    fake.active = 0;        /* recorder disabled (child after fork, ...) */
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    assert_int_equal(fake_cublas()->typed, 3);
    assert_int_equal(fake_count_events(TSC_EV_GEMM), 1);
    assert_int_equal(n_pushed, 1);
    assert_int_equal(n_popped, 1);
}

static void errno_and_missing_real(void **state)
{
    (void)state;
    fake_cublas()->errno_to_set = ENOTTY;
    errno = 0;
    cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, NULL, NULL, 0, NULL, 0, NULL, NULL, 0);
    assert_int_equal(errno, ENOTTY);
    /* Not in the fake library: the wrapper reports cuBLAS as missing. */
    assert_int_equal(cublasDgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, NULL, NULL, 0, NULL,
                                     0, NULL, NULL, 0),
                     CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(fake_count_events(TSC_EV_GEMM), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(gemm_ex_counted_once, setup),
        cmocka_unit_test_setup(lt_layouts_every_transpose, setup),
        cmocka_unit_test_setup(typed_and_batched, setup),
        cmocka_unit_test_setup(tf32_math_mode, setup),
        cmocka_unit_test_setup(passthrough_when_off, setup),
        cmocka_unit_test_setup(errno_and_missing_real, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
