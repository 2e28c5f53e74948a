/* See fake_cublas.h.  Built as a shared library so the wrappers' dlsym
 * (RTLD_NEXT) finds these as "the real cuBLAS". */
#include "fake_cublas.h"

#include <errno.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_api.h>

static fake_cublas_counts counts;

fake_cublas_counts *fake_cublas(void)
{
    return &counts;
}

static cublasStatus_t done(void)
{
    if (counts.errno_to_set)
        errno = counts.errno_to_set;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                size_t size, size_t *written)
{
    uint64_t v;
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_ROWS: v = l->data[FL_ROWS]; break;
    case CUBLASLT_MATRIX_LAYOUT_COLS: v = l->data[FL_COLS]; break;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: v = l->data[FL_BATCH]; break;
    case CUBLASLT_MATRIX_LAYOUT_TYPE: v = l->data[FL_TYPE]; break;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
    /* Sizes as the real library documents: ROWS/COLS uint64, the rest 32-bit. */
    size_t need = attr == CUBLASLT_MATRIX_LAYOUT_ROWS || attr == CUBLASLT_MATRIX_LAYOUT_COLS ? 8 : 4;
    if (size != need)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (need == 8)
        memcpy(buf, &v, 8);
    else {
        uint32_t w = (uint32_t)v;
        memcpy(buf, &w, 4);
    }
    *written = need;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, void *buf,
                                              size_t size, size_t *written)
{
    int32_t v;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: v = (int32_t)d->data[FD_TRANSA]; break;
    case CUBLASLT_MATMUL_DESC_TRANSB: v = (int32_t)d->data[FD_TRANSB]; break;
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: v = (int32_t)d->data[FD_COMPUTE]; break;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (size != 4)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, &v, 4);
    *written = 4;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
    (void)h;
    *mode = (cublasMath_t)counts.math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                              cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSize, cudaStream_t stream)
{
    (void)h, (void)desc, (void)alpha, (void)A, (void)Adesc, (void)B, (void)Bdesc, (void)beta;
    (void)C, (void)Cdesc, (void)D, (void)Ddesc, (void)algo, (void)workspace;
    (void)workspaceSize, (void)stream;
    counts.lt_matmul++;
    return done();
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                            int lda, const void *B, cudaDataType Btype, int ldb, const void *beta,
                            void *C, cudaDataType Ctype, int ldc, cublasComputeType_t ct,
                            cublasGemmAlgo_t algo)
{
    (void)h, (void)alpha, (void)A, (void)Atype, (void)lda, (void)B, (void)Btype, (void)ldb;
    (void)beta, (void)C, (void)Ctype, (void)ldc, (void)algo;
    counts.gemm_ex++;
    /* cuBLAS implementing the call through cuBLASLt: goes through the
     * dynamic linker, so through the wrapper again. */
    cublasLtMatmulDescOpaque_t d = {{0}};
    d.data[FD_TRANSA] = (uint64_t)ta;
    d.data[FD_TRANSB] = (uint64_t)tb;
    d.data[FD_COMPUTE] = (uint64_t)ct;
    cublasLtMatrixLayoutOpaque_t la = {{0}}, lb = {{0}}, lc = {{0}};
    la.data[FL_ROWS] = (uint64_t)(ta ? k : m);
    la.data[FL_COLS] = (uint64_t)(ta ? m : k);
    lb.data[FL_ROWS] = (uint64_t)(tb ? n : k);
    lb.data[FL_COLS] = (uint64_t)(tb ? k : n);
    lc.data[FL_ROWS] = (uint64_t)m;
    lc.data[FL_COLS] = (uint64_t)n;
    return cublasLtMatmul(NULL, &d, NULL, NULL, &la, NULL, &lb, NULL, NULL, &lc, NULL, &lc, NULL,
                          NULL, 0, NULL);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long sA, const void *B, cudaDataType Btype,
                                          int ldb, long long sB, const void *beta, void *C,
                                          cudaDataType Ctype, int ldc, long long sC, int batch,
                                          cublasComputeType_t ct, cublasGemmAlgo_t algo)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)Atype;
    (void)lda, (void)sA, (void)B, (void)Btype, (void)ldb, (void)sB, (void)beta, (void)C;
    (void)Ctype, (void)ldc, (void)sC, (void)batch, (void)ct, (void)algo;
    counts.strided_ex++;
    return done();
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const void *alpha,
                                   const void *const Aarray[], cudaDataType Atype, int lda,
                                   const void *const Barray[], cudaDataType Btype, int ldb,
                                   const void *beta, void *const Carray[], cudaDataType Ctype,
                                   int ldc, int batch, cublasComputeType_t ct,
                                   cublasGemmAlgo_t algo)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)Aarray;
    (void)Atype, (void)lda, (void)Barray, (void)Btype, (void)ldb, (void)beta, (void)Carray;
    (void)Ctype, (void)ldc, (void)batch, (void)ct, (void)algo;
    counts.batched_ex++;
    return CUBLAS_STATUS_INVALID_VALUE; /* the wrapper must pass statuses through */
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta, float *C, int ldc)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda;
    (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    counts.typed++;
    return done();
}

cublasStatus_t cublasCgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
                              const cuComplex *B, int ldb, const cuComplex *beta, cuComplex *C,
                              int ldc)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda;
    (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    counts.typed++;
    return done();
}

/* Sgemm's strided batched form, to check the batch count. */
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta,
                                         float *C, int ldc, long long sc, int batch)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda;
    (void)sa, (void)B, (void)ldb, (void)sb, (void)beta, (void)C, (void)ldc, (void)sc;
    (void)batch;
    counts.strided++;
    return done();
}
