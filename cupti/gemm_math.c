/* GEMM arithmetic; see gemm_math.h for the conventions. */
#include "gemm_math.h"

#include <string.h>

int tsc_dtype_is_complex(uint32_t t)
{
    /* CUDA_C_32F 4, C_64F 5, C_16F 6, C_8I 7, C_8U 9, C_32I 11, C_32U 13,
     * C_16BF 15, C_4I 17, C_4U 19, C_16I 21, C_16U 23, C_64I 25, C_64U 27.
     * Everything from 28 on (fp8, fp6, fp4) is real. */
    switch (t) {
    case 4: case 5: case 6: case 7: case 9: case 11: case 13: case 15:
    case 17: case 19: case 21: case 23: case 25: case 27:
        return 1;
    default:
        return 0;
    }
}

int tsc_op_transposes(int op)
{
    return op == TSC_OP_T || op == TSC_OP_C;
}

/* a * b, saturating. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return UINT64_MAX;
    return r;
}

uint64_t tsc_gemm_flops(int64_t m, int64_t n, int64_t k, int64_t batch, int complex)
{
    if (m < 0 || n < 0 || k < 0 || batch < 0)
        return 0;
    uint64_t f = mul_sat(2, (uint64_t)m);
    f = mul_sat(f, (uint64_t)n);
    f = mul_sat(f, (uint64_t)k);
    f = mul_sat(f, (uint64_t)batch);
    return complex ? mul_sat(f, 4) : f;
}

static uint64_t nonneg(int64_t v)
{
    return v < 0 ? 0 : (uint64_t)v;
}

void tsc_gemm_desc_direct(tsc_desc_gemm *d, uint8_t api, int transa, int transb,
                          int64_t m, int64_t n, int64_t k, int64_t batch,
                          uint32_t a_type, uint32_t c_type, uint32_t compute_type)
{
    memset(d, 0, sizeof *d);
    d->api = api;
    d->transa = (uint8_t)transa;
    d->transb = (uint8_t)transb;
    d->a_type = a_type;
    d->c_type = c_type;
    d->compute_type = compute_type;
    d->complex = (uint8_t)tsc_dtype_is_complex(a_type);
    int bad = m < 0 || n < 0 || k < 0 || batch < 0;
    d->m = bad ? 0 : nonneg(m);
    d->n = bad ? 0 : nonneg(n);
    d->k = bad ? 0 : nonneg(k);
    d->batch = bad ? 0 : nonneg(batch);
    d->flops = bad ? 0 : tsc_gemm_flops(m, n, k, batch, d->complex);
}

static uint64_t sat_i64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : v;
}

int tsc_gemm_desc_lt(tsc_desc_gemm *d, int transa, int transb, const tsc_lt_layout *a,
                     const tsc_lt_layout *b, const tsc_lt_layout *dout,
                     uint32_t compute_type)
{
    uint64_t m = dout->rows, n = dout->cols;
    uint64_t k = tsc_op_transposes(transa) ? a->rows : a->cols;
    uint64_t a_m = tsc_op_transposes(transa) ? a->cols : a->rows;
    uint64_t b_k = tsc_op_transposes(transb) ? b->cols : b->rows;
    uint64_t b_n = tsc_op_transposes(transb) ? b->rows : b->cols;
    /* The output's batch count is the number of products computed; A or B
     * may be broadcast (batch 1 with stride 0). */
    int64_t batch = dout->batch > 0 ? dout->batch : 1;

    tsc_gemm_desc_direct(d, TSC_GEMM_LT_MATMUL, transa, transb, (int64_t)sat_i64(m),
                         (int64_t)sat_i64(n), (int64_t)sat_i64(k), batch, a->type,
                         dout->type, compute_type);
    int batch_ok = (a->batch <= 1 || a->batch == batch) && (b->batch <= 1 || b->batch == batch);
    return (a_m == m && b_k == k && b_n == n && batch_ok) ? 0 : -1;
}
