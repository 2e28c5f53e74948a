/* cuBLAS / cuBLASLt GEMM interposition: FLOPs without touching the model.
 *
 * Each wrapper has one shape: outermost-call guard -> describe the GEMM ->
 * push an external correlation id -> time the real call -> pop -> record
 * -> restore errno -> return the real status.  The thread-local depth
 * guard keeps only the outermost call when cuBLAS implements a gemm by
 * calling cublasLtMatmul itself, so nothing is counted twice.  Real
 * functions come from tsc_real_sym (preload/core/real_sym.h): the preload
 * links no cuBLAS.
 *
 * TSC_EV_GEMM: desc -> TSC_DESC_GEMM, start/end = host enter/exit,
 * val = per-thread call counter (with desc it forms the external id),
 * aux = the cublasStatus_t returned.  The event is recorded on the calling
 * thread, whose name the recorder already writes (TSC_DESC_THREAD).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cublasLt.h>
#include <cublas_api.h>

#include "cupti_control.h"
#include "gemm_math.h"
#include "real_sym.h"
#include "recorder.h"
#include "tsc_tls.h"

#define EXPORT __attribute__((visibility("default")))

static TSC_TLS int gemm_depth;
static TSC_TLS uint32_t gemm_counter;

typedef struct gemm_call {
    int outer;      /* outermost call on this thread and recording on */
    uint32_t desc;
    uint32_t val;
    int pushed;
    uint64_t t0;
} gemm_call;

/* Every wrapper calls this first, and gemm_finish last. */
static int gemm_enter(gemm_call *c)
{
    c->outer = gemm_depth++ == 0 && tsc_cupti_current_mode() != TSC_CUPTI_OFF &&
               tsc_rec_active();
    c->desc = 0;
    c->pushed = 0;
    return c->outer;
}

static void gemm_start(gemm_call *c, const tsc_desc_gemm *d)
{
    c->desc = tsc_rec_intern(TSC_DESC_GEMM, d, sizeof *d);
    c->val = ++gemm_counter;
    if (c->desc != 0)
        c->pushed = tsc_cupti_push_extcorr(TSC_EXTCORR_ID(c->desc, c->val));
    c->t0 = tsc_now_ns();
}

static cublasStatus_t gemm_finish(gemm_call *c, cublasStatus_t st)
{
    gemm_depth--;
    if (!c->outer)
        return st;
    int saved = errno;
    uint64_t t1 = tsc_now_ns();
    if (c->pushed)
        tsc_cupti_pop_extcorr();
    tsc_rec_event(TSC_EV_GEMM, 0, (uint16_t)st, c->desc, c->t0, t1, c->val);
    tsc_cupti_count_gemm();
    errno = saved;
    return st;
}

/* Also a cuBLAS that an RTLD_LOCAL library (a Python extension) brought
 * in: its calls bind to this wrapper all the same (real_sym.h). */
#define REAL(type, name)                                   \
    static tsc_real_fn real_##name = TSC_REAL_FN(name);    \
    type real = (type)tsc_real_get(&real_##name);          \
    if (real == NULL)                                      \
        return CUBLAS_STATUS_NOT_INITIALIZED

/* cudaDataType / cublasComputeType_t of the typed gemms. */
#define T_R32F 0u
#define T_R64F 1u
#define T_R16F 2u
#define T_C32F 4u
#define T_C64F 5u
#define CT_16F 64u
#define CT_32F 68u
#define CT_64F 70u
#define CT_32F_FAST_TF32 77u

typedef cublasStatus_t (*get_math_mode_fn)(cublasHandle_t, cublasMath_t *);

/* A single-precision call on a handle in TF32 math mode (what PyTorch's
 * allow_tf32 sets) runs on TF32 tensor cores although its arguments say
 * fp32: record the compute type that says so.  cuBLASLt takes its compute
 * type from the matmul descriptor and ignores the math mode. */
static uint32_t effective_compute(cublasHandle_t h, uint32_t a_type, uint32_t compute)
{
    /* CUDA_R_32F (0) as a compute type is the legacy spelling of 32F. */
    if ((compute != CT_32F && compute != T_R32F) || a_type != T_R32F)
        return compute;
    static tsc_real_fn real_get = TSC_REAL_FN(cublasGetMathMode);
    get_math_mode_fn get = (get_math_mode_fn)tsc_real_get(&real_get);
    cublasMath_t mode;
    if (get == NULL || get(h, &mode) != CUBLAS_STATUS_SUCCESS)
        return compute;
    /* The low bits are the mode; higher bits are flags such as
     * CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION. */
    return ((unsigned)mode & 0xfu) == CUBLAS_TF32_TENSOR_OP_MATH ? CT_32F_FAST_TF32 : compute;
}

/* ------------------------------------------------------------ cublasLt */

typedef cublasStatus_t (*lt_layout_get_fn)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                           void *, size_t, size_t *);
typedef cublasStatus_t (*lt_desc_get_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                         void *, size_t, size_t *);

static void read_layout(lt_layout_get_fn get, cublasLtMatrixLayout_t l, tsc_lt_layout *out)
{
    size_t w;
    out->rows = out->cols = 0;
    out->batch = 1;
    out->type = 0;
    if (l == NULL)
        return;
    get(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &out->type, sizeof out->type, &w);
    get(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &out->rows, sizeof out->rows, &w);
    get(l, CUBLASLT_MATRIX_LAYOUT_COLS, &out->cols, sizeof out->cols, &w);
    get(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &out->batch, sizeof out->batch, &w);
}

static void describe_lt(tsc_desc_gemm *d, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                        cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                        cublasLtMatrixLayout_t dl)
{
    static tsc_real_fn real_lget = TSC_REAL_FN(cublasLtMatrixLayoutGetAttribute);
    static tsc_real_fn real_dget = TSC_REAL_FN(cublasLtMatmulDescGetAttribute);
    lt_layout_get_fn lget = (lt_layout_get_fn)tsc_real_get(&real_lget);
    lt_desc_get_fn dget = (lt_desc_get_fn)tsc_real_get(&real_dget);
    int32_t transa = 0, transb = 0, compute = 0;
    tsc_lt_layout la, lb, ld;
    size_t w;
    if (lget == NULL || dget == NULL) {
        tsc_gemm_desc_direct(d, TSC_GEMM_LT_MATMUL, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        return;
    }
    dget(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa, &w);
    dget(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb, &w);
    dget(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute, &w);
    read_layout(lget, a, &la);
    read_layout(lget, b, &lb);
    read_layout(lget, dl != NULL ? dl : c, &ld);
    tsc_gemm_desc_lt(d, transa, transb, &la, &lb, &ld, (uint32_t)compute);
}

typedef cublasStatus_t (*lt_matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                       const void *, cublasLtMatrixLayout_t, const void *,
                                       cublasLtMatrixLayout_t, const void *, const void *,
                                       cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                       const cublasLtMatmulAlgo_t *, void *, size_t,
                                       cudaStream_t);

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                                     const void *alpha, const void *A,
                                     cublasLtMatrixLayout_t Adesc, const void *B,
                                     cublasLtMatrixLayout_t Bdesc, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                     cublasLtMatrixLayout_t Ddesc,
                                     const cublasLtMatmulAlgo_t *algo, void *workspace,
                                     size_t workspaceSize, cudaStream_t stream)
{
    REAL(lt_matmul_fn, cublasLtMatmul);
    gemm_call c;
    if (gemm_enter(&c)) {
        tsc_desc_gemm d;
        describe_lt(&d, desc, Adesc, Bdesc, Cdesc, Ddesc);
        gemm_start(&c, &d);
    }
    cublasStatus_t st = real(h, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                             workspace, workspaceSize, stream);
    return gemm_finish(&c, st);
}

/* -------------------------------------------------------- cuBLAS *Ex */

typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const void *, const void *, cudaDataType, int,
                                     const void *, cudaDataType, int, const void *, void *,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const void *alpha, const void *A,
                                   cudaDataType Atype, int lda, const void *B, cudaDataType Btype,
                                   int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                   cublasComputeType_t ct, cublasGemmAlgo_t algo)
{
    REAL(gemm_ex_fn, cublasGemmEx);
    gemm_call c;
    if (gemm_enter(&c)) {
        tsc_desc_gemm d;
        tsc_gemm_desc_direct(&d, TSC_GEMM_EX, ta, tb, m, n, k, 1, (uint32_t)Atype,
                             (uint32_t)Ctype, effective_compute(h, (uint32_t)Atype, (uint32_t)ct));
        gemm_start(&c, &d);
    }
    cublasStatus_t st =
        real(h, ta, tb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, ct, algo);
    return gemm_finish(&c, st);
}

typedef cublasStatus_t (*gemm_sb_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                        int, int, int, const void *, const void *, cudaDataType,
                                        int, long long, const void *, cudaDataType, int, long long,
                                        const void *, void *, cudaDataType, int, long long, int,
                                        cublasComputeType_t, cublasGemmAlgo_t);

EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long strideA,
    const void *B, cudaDataType Btype, int ldb, long long strideB, const void *beta, void *C,
    cudaDataType Ctype, int ldc, long long strideC, int batch, cublasComputeType_t ct,
    cublasGemmAlgo_t algo)
{
    REAL(gemm_sb_ex_fn, cublasGemmStridedBatchedEx);
    gemm_call c;
    if (gemm_enter(&c)) {
        tsc_desc_gemm d;
        tsc_gemm_desc_direct(&d, TSC_GEMM_STRIDED_BATCHED_EX, ta, tb, m, n, k, batch,
                             (uint32_t)Atype, (uint32_t)Ctype,
                             effective_compute(h, (uint32_t)Atype, (uint32_t)ct));
        gemm_start(&c, &d);
    }
    cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                             strideB, beta, C, Ctype, ldc, strideC, batch, ct, algo);
    return gemm_finish(&c, st);
}

typedef cublasStatus_t (*gemm_b_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                       int, int, const void *, const void *const[], cudaDataType,
                                       int, const void *const[], cudaDataType, int, const void *,
                                       void *const[], cudaDataType, int, int, cublasComputeType_t,
                                       cublasGemmAlgo_t);

EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *const Aarray[],
                                          cudaDataType Atype, int lda,
                                          const void *const Barray[], cudaDataType Btype, int ldb,
                                          const void *beta, void *const Carray[],
                                          cudaDataType Ctype, int ldc, int batch,
                                          cublasComputeType_t ct, cublasGemmAlgo_t algo)
{
    REAL(gemm_b_ex_fn, cublasGemmBatchedEx);
    gemm_call c;
    if (gemm_enter(&c)) {
        tsc_desc_gemm d;
        tsc_gemm_desc_direct(&d, TSC_GEMM_BATCHED_EX, ta, tb, m, n, k, batch, (uint32_t)Atype,
                             (uint32_t)Ctype, effective_compute(h, (uint32_t)Atype, (uint32_t)ct));
        gemm_start(&c, &d);
    }
    cublasStatus_t st = real(h, ta, tb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
                             beta, Carray, Ctype, ldc, batch, ct, algo);
    return gemm_finish(&c, st);
}

/* ------------------------------------------------------- typed gemms */

/* One definition per typed gemm: same arguments, element type differs. */
#define TYPED_GEMM(fn, T, dtype, ctype)                                                        \
    typedef cublasStatus_t (*fn##_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, \
                                      int, int, int, const T *, const T *, int, const T *,    \
                                      int, const T *, T *, int);                              \
    EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,     \
                             int m, int n, int k, const T *alpha, const T *A, int lda,         \
                             const T *B, int ldb, const T *beta, T *C, int ldc)                \
    {                                                                                          \
        REAL(fn##_fn, fn);                                                                     \
        gemm_call c;                                                                           \
        if (gemm_enter(&c)) {                                                                  \
            tsc_desc_gemm d;                                                                   \
            tsc_gemm_desc_direct(&d, TSC_GEMM_TYPED, ta, tb, m, n, k, 1, dtype, dtype,         \
                                 effective_compute(h, dtype, ctype));                          \
            gemm_start(&c, &d);                                                                \
        }                                                                                      \
        return gemm_finish(&c, real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)); \
    }

#define TYPED_GEMM_SB(fn, T, dtype, ctype)                                                     \
    typedef cublasStatus_t (*fn##_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, \
                                      int, int, int, const T *, const T *, int, long long,    \
                                      const T *, int, long long, const T *, T *, int,         \
                                      long long, int);                                        \
    EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,     \
                             int m, int n, int k, const T *alpha, const T *A, int lda,         \
                             long long sa, const T *B, int ldb, long long sb, const T *beta,   \
                             T *C, int ldc, long long sc, int batch)                           \
    {                                                                                          \
        REAL(fn##_fn, fn);                                                                     \
        gemm_call c;                                                                           \
        if (gemm_enter(&c)) {                                                                  \
            tsc_desc_gemm d;                                                                   \
            tsc_gemm_desc_direct(&d, TSC_GEMM_TYPED_STRIDED, ta, tb, m, n, k, batch, dtype,    \
                                 dtype, effective_compute(h, dtype, ctype));                   \
            gemm_start(&c, &d);                                                                \
        }                                                                                      \
        return gemm_finish(&c, real(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta,   \
                                    C, ldc, sc, batch));                                       \
    }

/* cuda_fp16.h defines __half for C++ only, and cublas_api.h then declares
 * the half-precision gemms for C++ only: a 2-byte stand-in is enough for
 * pointers we only pass through. */
typedef struct tsc_half {
    uint16_t bits;
} tsc_half;

TYPED_GEMM(cublasSgemm_v2, float, T_R32F, CT_32F)
TYPED_GEMM(cublasDgemm_v2, double, T_R64F, CT_64F)
TYPED_GEMM(cublasHgemm, tsc_half, T_R16F, CT_16F)
TYPED_GEMM(cublasCgemm_v2, cuComplex, T_C32F, CT_32F)
TYPED_GEMM(cublasZgemm_v2, cuDoubleComplex, T_C64F, CT_64F)
TYPED_GEMM_SB(cublasSgemmStridedBatched, float, T_R32F, CT_32F)
TYPED_GEMM_SB(cublasDgemmStridedBatched, double, T_R64F, CT_64F)
TYPED_GEMM_SB(cublasHgemmStridedBatched, tsc_half, T_R16F, CT_16F)
