/* A Python-extension-like library: it links cuBLAS and is itself loaded
 * with RTLD_LOCAL by the stand-in job, as Python loads torch's extension
 * modules (whose dependencies bring in cuBLAS), so cuBLAS is not in the
 * process's global symbol scope.  Every GEMM of the job goes through it. */
#include <cublas_api.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT void *sim_ext_handle(void)
{
    cublasHandle_t h;
    return cublasCreate_v2(&h) == CUBLAS_STATUS_SUCCESS ? h : NULL;
}

/* C = A B for n x n fp32 matrices through cublasGemmEx: the status. */
EXPORT int sim_ext_gemm(void *h, const float *A, const float *B, float *C, int n)
{
    const float one = 1.0f, zero = 0.0f;
    return (int)cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, CUDA_R_32F, n, B,
                             CUDA_R_32F, n, &zero, C, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT);
}

/* The same through cublasSgemm_v2. */
EXPORT int sim_ext_sgemm(void *h, const float *A, const float *B, float *C, int n)
{
    const float one = 1.0f, zero = 0.0f;
    return (int)cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C,
                               n);
}

/* GEMMs of this handle go to stream s (a graph being captured, say). */
EXPORT void sim_ext_set_stream(void *h, void *s)
{
    cublasSetStream_v2(h, s);
}
