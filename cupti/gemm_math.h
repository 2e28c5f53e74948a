/* GEMM shape and FLOP arithmetic for the cuBLAS interposition.
 *
 * Pure, no CUDA headers: operation and data-type codes are the numeric
 * values of cublasOperation_t and cudaDataType_t (stable ABI), which the
 * tests check against the real headers.
 *
 * Convention (cuBLAS, column-major): C (m x n) = op(A) (m x k) * op(B)
 * (k x n).  FLOPs count a multiply-add as 2; a complex multiply-add is 4
 * real multiplies and 4 real adds, hence x4.
 */
#ifndef TSC_GEMM_MATH_H
#define TSC_GEMM_MATH_H

#include <stdint.h>

#include "tsc_format.h"

#define TSC_OP_N 0  /* CUBLAS_OP_N */
#define TSC_OP_T 1  /* CUBLAS_OP_T */
#define TSC_OP_C 2  /* CUBLAS_OP_C / CUBLAS_OP_HERMITAN */
#define TSC_OP_CONJG 3

/* 1 when the cudaDataType_t value is a complex type (CUDA_C_*). */
int tsc_dtype_is_complex(uint32_t cuda_dtype);

/* 1 when `op` transposes (T, C); N and CONJG keep the shape. */
int tsc_op_transposes(int op);

/* 2*m*n*k*batch, x4 when complex; saturates at UINT64_MAX instead of
 * wrapping.  Negative dimensions give 0. */
uint64_t tsc_gemm_flops(int64_t m, int64_t n, int64_t k, int64_t batch, int complex);

/* Fill a TSC_DESC_GEMM payload from the arguments of a cuBLAS call that
 * names m, n, k directly (GemmEx, typed gemms, their batched forms).
 * Negative values are stored as 0 with flops 0 (cuBLAS rejects them). */
void tsc_gemm_desc_direct(tsc_desc_gemm *d, uint8_t api, int transa, int transb,
                          int64_t m, int64_t n, int64_t k, int64_t batch,
                          uint32_t a_type, uint32_t c_type, uint32_t compute_type);

/* The shape of a cublasLtMatmul from its matrix layouts.  rows/cols are
 * the logical sizes of A, B and D (the output; pass C's when D is
 * unknown), batch the layouts' BATCH_COUNT (<= 0 counts as 1).
 * m = D.rows, n = D.cols, k = op(A)'s columns.  Returns 0 when the layouts
 * agree (op(A) is m x k, op(B) is k x n), -1 when they do not; the desc is
 * filled in either case with what A and D say. */
typedef struct tsc_lt_layout {
    uint64_t rows, cols;
    int32_t batch;
    uint32_t type;   /* cudaDataType_t */
} tsc_lt_layout;

int tsc_gemm_desc_lt(tsc_desc_gemm *d, int transa, int transb, const tsc_lt_layout *a,
                     const tsc_lt_layout *b, const tsc_lt_layout *dout,
                     uint32_t compute_type);

#endif
