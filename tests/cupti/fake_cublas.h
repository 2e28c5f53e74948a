/* A stand-in libcublas/libcublasLt for the GEMM wrapper test: the real
 * entry points' signatures, counting calls, and a cublasGemmEx that calls
 * cublasLtMatmul the way cuBLAS may, to prove nothing is counted twice.
 * Layout and matmul descriptors keep their attributes in data[]. */
#ifndef TSC_FAKE_CUBLAS_H
#define TSC_FAKE_CUBLAS_H

#include <stdint.h>

typedef struct fake_cublas_counts {
    int gemm_ex, lt_matmul, typed, strided, batched_ex, strided_ex;
    int errno_to_set; /* the fake real call sets errno to this */
    int math_mode;    /* what cublasGetMathMode reports (cublasMath_t) */
} fake_cublas_counts;

fake_cublas_counts *fake_cublas(void);

/* Layout data[]: 0 rows, 1 cols, 2 batch, 3 type.  Desc data[]: 0 transa,
 * 1 transb, 2 compute type. */
enum { FL_ROWS = 0, FL_COLS = 1, FL_BATCH = 2, FL_TYPE = 3 };
enum { FD_TRANSA = 0, FD_TRANSB = 1, FD_COMPUTE = 2 };

#endif
