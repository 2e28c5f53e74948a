/* The stand-in CUDA runtime (libcudart.so.13): the runtime calls the
 * stand-in job makes, each built on the stand-in driver's calls, so the
 * profiler sees a runtime call with the driver call it makes nested
 * inside, as with the real runtime.  The first call initialises the
 * driver (cuInit: injection) and the primary context.
 *
 * <<<>>> in CUDA 13 compiles to __cudaLaunchKernel (runtime cbid 505);
 * cudaLaunchKernel (211) is the explicit form.  Both are here.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "sim_seam.h"

#define EXPORT __attribute__((visibility("default")))

static void driver_init(void)
{
    cuInit(0);
}

static void rt_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, driver_init);
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
}

static void enter(sim_call *c, CUpti_CallbackId cbid, const char *name)
{
    rt_init();
    memset(c, 0, sizeof *c);
    c->domain = CUPTI_CB_DOMAIN_RUNTIME_API;
    c->cbid = cbid;
    c->name = name;
    const sim_prof_ops *ops = sim_driver_prof();
    if (ops)
        ops->api_enter(c);
}

static cudaError_t leave(sim_call *c, CUresult r)
{
    cudaError_t e = r == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    const sim_prof_ops *ops = sim_driver_prof();
    if (ops)
        ops->api_exit(c, (int)e);
    return e;
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int device)
{
    rt_init();
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

EXPORT cudaError_t cudaMalloc(void **p, size_t bytes)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020");
    CUdeviceptr d = 0;
    CUresult r = cuMemAlloc(&d, bytes);
    *p = (void *)(uintptr_t)d;
    return leave(&c, r);
}

EXPORT cudaError_t cudaFree(void *p)
{
    return cuMemFree((CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    rt_init();
    return cuStreamCreate((CUstream *)s, 0) == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

/* ------------------------------------------------------------- kernels */

/* Host stub -> device function, filled by __cudaRegisterFunction (what
 * nvcc's generated code calls at start-up for every kernel). */
#define MAX_KERNELS 256
static struct {
    const void *stub;
    CUfunction fn;
} registry[MAX_KERNELS];
static int n_registered;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT void __cudaRegisterFunction(void **fatbin, const char *stub, char *device_fun,
                                   const char *device_name, int thread_limit, uint3 *tid,
                                   uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
    (void)fatbin, (void)device_fun, (void)thread_limit, (void)tid, (void)bid, (void)bdim,
        (void)gdim, (void)wsize;
    CUfunction f;
    if (cuModuleGetFunction(&f, NULL, device_name) != CUDA_SUCCESS)
        return;
    pthread_mutex_lock(&reg_lock);
    if (n_registered < MAX_KERNELS) {
        registry[n_registered].stub = stub;
        registry[n_registered].fn = f;
        n_registered++;
    }
    pthread_mutex_unlock(&reg_lock);
}

static CUfunction lookup(const void *stub)
{
    CUfunction f = NULL;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < n_registered && !f; i++)
        if (registry[i].stub == stub)
            f = registry[i].fn;
    pthread_mutex_unlock(&reg_lock);
    return f;
}

static cudaError_t launch(CUpti_CallbackId cbid, const char *name, const void *func, dim3 g,
                          dim3 b, void **args, size_t smem, cudaStream_t s)
{
    sim_call c;
    enter(&c, cbid, name);
    CUfunction f = lookup(func);
    if (f == NULL)
        return leave(&c, CUDA_ERROR_INVALID_HANDLE);
    return leave(&c, cuLaunchKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)smem,
                                    (CUstream)s, args, NULL));
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem,
                                    cudaStream_t s)
{
    return launch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", func,
                  g, b, args, smem, s);
}

EXPORT cudaError_t __cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args,
                                      size_t smem, cudaStream_t s)
{
    return launch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel_v13000",
                  func, g, b, args, smem, s);
}

/* ------------------------------------------------------ copies, memset */

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                   cudaStream_t s)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync_v3020");
    CUresult r;
    if (k == cudaMemcpyHostToDevice)
        r = cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, n, (CUstream)s);
    else if (k == cudaMemcpyDeviceToHost)
        r = cuMemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, n, (CUstream)s);
    else
        r = CUDA_ERROR_NOT_SUPPORTED;
    return leave(&c, r);
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int v, size_t n, cudaStream_t s)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync_v3020");
    return leave(&c, cuMemsetD8Async((CUdeviceptr)(uintptr_t)dst, (unsigned char)v, n,
                                     (CUstream)s));
}

/* ------------------------------------------------------------- syncs */

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
          "cudaStreamSynchronize_v3020");
    return leave(&c, cuStreamSynchronize((CUstream)s));
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
          "cudaDeviceSynchronize_v3020");
    return leave(&c, cuCtxSynchronize());
}

/* --------------------------------------------------------------- graphs */

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
          "cudaStreamBeginCapture_v10000");
    return leave(&c, cuStreamBeginCapture((CUstream)s, (CUstreamCaptureMode)mode));
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
          "cudaStreamEndCapture_v10000");
    return leave(&c, cuStreamEndCapture((CUstream)s, (CUgraph *)g));
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g,
                                        unsigned long long flags)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, "cudaGraphInstantiate_v12000");
    return leave(&c, cuGraphInstantiateWithFlags((CUgraphExec *)e, (CUgraph)g, flags));
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    sim_call c;
    enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch_v10000");
    return leave(&c, cuGraphLaunch((CUgraphExec)e, (CUstream)s));
}
