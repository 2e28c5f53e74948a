/* The stand-in cuBLAS (libcublas.so.13): handles, math mode, and two GEMM
 * entry points that really compute (fp32, column-major, on the host memory
 * the stand-in uses as device memory) and launch one device kernel each
 * through the stand-in driver, as a real GEMM does.  Enough to check that
 * tscope's wrappers return the real status and result, and that GEMM
 * calls join their kernels. */
#include <stdlib.h>
#include <string.h>

#include <cublas_api.h>
#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

struct cublasContext {
    CUstream stream;
    cublasMath_t math;
};

static CUfunction gemm_kernel;

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    if (cuInit(0) != CUDA_SUCCESS)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    if (gemm_kernel == NULL &&
        cuModuleGetFunction(&gemm_kernel, NULL,
                            "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32_"
                            "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas") !=
            CUDA_SUCCESS)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    h->stream = (CUstream)s;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
    *mode = h->math;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

static float at(const float *m, int ld, int r, int c, int trans)
{
    return trans ? m[c + (size_t)r * ld] : m[r + (size_t)c * ld];
}

/* C = alpha op(A) op(B) + beta C, then the kernel that "did" it. */
static cublasStatus_t sgemm(cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
                            const float *A, int lda, const float *B, int ldb, float beta,
                            float *C, int ldc)
{
    if (h == NULL)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++)
                acc += at(A, lda, i, p, ta) * at(B, ldb, p, j, tb);
            C[i + (size_t)j * ldc] = alpha * acc + beta * C[i + (size_t)j * ldc];
        }
    /* 50 TFLOP/s and a 2 us floor. */
    uint64_t dur = 2000 + 2ull * (uint64_t)m * (uint64_t)n * (uint64_t)k / 50000ull;
    void *params[] = {&dur};
    unsigned gx = (unsigned)(m + 127) / 128, gy = (unsigned)(n + 127) / 128;
    CUresult r;
    /* STANDIN_CUBLAS_LAUNCH_EX=1: launched as cuBLASLt launches its sm90
     * kernels, with cuLaunchKernelEx (NCCL's launcher too). */
    if (getenv("STANDIN_CUBLAS_LAUNCH_EX")) {
        CUlaunchConfig cfg = {.gridDimX = gx ? gx : 1, .gridDimY = gy ? gy : 1, .gridDimZ = 1,
                              .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1,
                              .hStream = (CUstream)h->stream};
        r = cuLaunchKernelEx(&cfg, gemm_kernel, params, NULL);
    } else {
        r = cuLaunchKernel(gemm_kernel, gx ? gx : 1, gy ? gy : 1, 1, 128, 1, 1, 0, h->stream,
                           params, NULL);
    }
    return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const float *alpha, const float *A,
                                     int lda, const float *B, int ldb, const float *beta, float *C,
                                     int ldc)
{
    return sgemm(h, ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, *alpha, A, lda, B, ldb, *beta,
                 C, ldc);
}

EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const void *alpha, const void *A,
                                   cudaDataType Atype, int lda, const void *B, cudaDataType Btype,
                                   int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                   cublasComputeType_t ct, cublasGemmAlgo_t algo)
{
    (void)algo;
    if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F ||
        (ct != CUBLAS_COMPUTE_32F && ct != CUBLAS_COMPUTE_32F_FAST_TF32))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return sgemm(h, ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, *(const float *)alpha, A, lda,
                 B, ldb, *(const float *)beta, C, ldc);
}
