/* The stand-in CUDA driver (libcuda.so.1): the part of the driver API that
 * tscope and the stand-in job use, with the real signatures of cuda.h.
 *
 * cuInit loads the library named by CUDA_INJECTION64_PATH and calls its
 * InitializeInjection, as the real driver does; that is how tscope's CUPTI
 * session starts.  Every call reports itself to the stand-in CUPTI once it
 * is attached (sim_seam.h): entry, exit, the device work it queued, the
 * time it waited.  One device, one (primary) context.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#include "sim_gpu.h"
#include "sim_seam.h"

#define EXPORT __attribute__((visibility("default")))

#define SIM_DEVICE_MEM (80ull << 30)

typedef struct sim_ctx {
    uint32_t id;
    int device;
} sim_ctx;

static _Atomic(const sim_prof_ops *) prof;
static sim_ctx primary = {.id = 1, .device = 0};
static atomic_int ctx_state;            /* 0 none, 1 creating, 2 created */
static atomic_ullong allocated;
static atomic_ullong vmm_handles;
static __thread CUcontext current;

EXPORT void sim_driver_attach(const sim_prof_ops *ops)
{
    atomic_store(&prof, ops);
}

EXPORT const sim_prof_ops *sim_driver_prof(void)
{
    return atomic_load(&prof);
}

EXPORT uint32_t sim_context_id(CUcontext ctx)
{
    return ctx ? ((sim_ctx *)ctx)->id : 0;
}

/* The primary context, created (and announced) on first use. */
static CUcontext context(void)
{
    int expect = 0;
    if (atomic_compare_exchange_strong(&ctx_state, &expect, 1)) {
        const sim_prof_ops *ops = atomic_load(&prof);
        if (ops && ops->context_created)
            ops->context_created((CUcontext)&primary, 0);
        atomic_store(&ctx_state, 2);
    }
    while (atomic_load(&ctx_state) != 2)
        ;
    return (CUcontext)&primary;
}

static void enter(sim_call *c, CUpti_CallbackId cbid, const char *name, const void *params)
{
    memset(c, 0, sizeof *c);
    c->domain = CUPTI_CB_DOMAIN_DRIVER_API;
    c->cbid = cbid;
    c->name = name;
    c->params = params;
    c->ctx = current ? current : (atomic_load(&ctx_state) == 2 ? (CUcontext)&primary : NULL);
    const sim_prof_ops *ops = atomic_load(&prof);
    if (ops)
        ops->api_enter(c);
}

static CUresult leave(sim_call *c, CUresult r)
{
    const sim_prof_ops *ops = atomic_load(&prof);
    if (ops)
        ops->api_exit(c, (int)r);
    return r;
}

static void report_work(const sim_work *w)
{
    const sim_prof_ops *ops = atomic_load(&prof);
    if (ops)
        ops->work(w);
}

/* ----------------------------------------------------- init and device */

EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    static atomic_int once;
    if (atomic_exchange(&once, 1))
        return CUDA_SUCCESS;
    /* What the real driver does during cuInit: load the injection library
     * and call its entry point; a failure there does not fail cuInit. */
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (path != NULL && *path != '\0') {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
        if (init)
            init();
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    if (len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    strncpy(name, "NVIDIA H100 80GB HBM3", (size_t)len - 1);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
    (void)d;
    *bytes = SIM_DEVICE_MEM;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------- contexts */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
    (void)d;
    *ctx = context();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    (void)d;
    *flags = 0;
    *active = atomic_load(&ctx_state) == 2;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
    current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent(CUcontext *ctx)
{
    if (ctx)
        *ctx = current;
    current = NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = current;
    return CUDA_SUCCESS;
}

/* --------------------------------------------------------------- memory */

EXPORT CUresult cuMemGetInfo(size_t *free_bytes, size_t *total)
{
    *total = SIM_DEVICE_MEM;
    *free_bytes = SIM_DEVICE_MEM - atomic_load(&allocated);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2", NULL);
    void *m = malloc(bytes ? bytes : 1);
    if (m == NULL)
        return leave(&c, CUDA_ERROR_OUT_OF_MEMORY);
    atomic_fetch_add(&allocated, bytes);
    *p = (CUdeviceptr)(uintptr_t)m;
    return leave(&c, CUDA_SUCCESS);
}

EXPORT CUresult cuMemFree(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

/* Physical memory behind virtual mappings: nothing is allocated, only the
 * calls (and their parameters, for callbacks) are real. */
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
    cuMemCreate_params p = {.handle = h, .size = size, .prop = prop, .flags = flags};
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, "cuMemCreate", &p);
    *h = (CUmemGenericAllocationHandle)atomic_fetch_add(&vmm_handles, 1) + 0x1000;
    atomic_fetch_add(&allocated, size);
    return leave(&c, CUDA_SUCCESS);
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    cuMemRelease_params p = {.handle = h};
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, "cuMemRelease", &p);
    return leave(&c, CUDA_SUCCESS);
}

/* ------------------------------------------------------------- kernels */

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    sim_function *fn = malloc(sizeof *fn);
    if (fn == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fn->name = strdup(name);
    *f = (CUfunction)fn;
    return CUDA_SUCCESS;
}

/* The stand-in's convention: a kernel's first argument is its duration on
 * the device in ns (a uint64_t), so a job says how long its work takes. */
static uint64_t kernel_duration(void **params)
{
    if (params == NULL || params[0] == NULL)
        return 1000;
    uint64_t d;
    memcpy(&d, params[0], sizeof d);
    return d;
}

static void run_kernel(const sim_call *c, const sim_function *fn, const int32_t grid[3],
                       const int32_t block[3], int32_t smem, int stream, uint64_t dur,
                       uint32_t corr, uint32_t graph_id, uint64_t node)
{
    sim_work w = {.kind = SIM_WORK_KERNEL, .name = fn->name, .device = 0,
                  .ctx = (CUcontext)&primary, .context = primary.id, .stream = sim_cupti_stream_id(stream),
                  .corr = corr, .graph_id = graph_id, .graph_node = node,
                  .dynamic_smem = smem};
    (void)c;
    memcpy(w.grid, grid, sizeof w.grid);
    memcpy(w.block, block, sizeof w.block);
    sim_gpu_place(stream, dur, &w);
    report_work(&w);
}

/* A launch keeps its host thread busy at least this long, the driver's
 * own work: 2 us (STANDIN_LAUNCH_NS to change it) lets one thread launch
 * 500,000 kernels a second, twice what a real host thread reaches. */
static uint64_t launch_floor_ns(void)
{
    static _Atomic int64_t floor_ns = -1;
    int64_t v = atomic_load(&floor_ns);
    if (v < 0) {
        const char *s = getenv("STANDIN_LAUNCH_NS");
        v = s ? atoll(s) : 2000;
        atomic_store(&floor_ns, v < 0 ? 0 : v);
    }
    return (uint64_t)v;
}

static CUresult launch(sim_call *c, CUfunction f, const int32_t grid[3], const int32_t block[3],
                       unsigned smem, CUstream hs, void **params)
{
    if (f == NULL)
        return leave(c, CUDA_ERROR_INVALID_HANDLE);
    uint64_t busy_until = sim_realtime_ns() + launch_floor_ns();
    while (sim_realtime_ns() < busy_until)
        ;
    context();
    int s = sim_stream_index(hs);
    sim_graph *g = sim_capture_target(s);
    if (g != NULL) {
        /* Captured, not run: a node of the graph being built. */
        if (g->n >= SIM_MAX_GRAPH_NODES)
            return leave(c, CUDA_ERROR_OUT_OF_MEMORY);
        sim_node *n = &g->nodes[g->n++];
        n->fn = (const sim_function *)f;
        memcpy(n->grid, grid, sizeof n->grid);
        memcpy(n->block, block, sizeof n->block);
        n->smem = (int32_t)smem;
        n->dur_ns = kernel_duration(params);
        n->id = sim_next_node_id();
        const sim_prof_ops *ops = atomic_load(&prof);
        if (ops && ops->graph_node)
            ops->graph_node(c, 0, n->id);
        return leave(c, CUDA_SUCCESS);
    }
    run_kernel(c, (const sim_function *)f, grid, block, (int32_t)smem, s,
               kernel_duration(params), c->corr, 0, 0);
    return leave(c, CUDA_SUCCESS);
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned smem, CUstream hs,
                               void **params, void **extra)
{
    (void)extra;
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", NULL);
    int32_t grid[3] = {(int32_t)gx, (int32_t)gy, (int32_t)gz};
    int32_t block[3] = {(int32_t)bx, (int32_t)by, (int32_t)bz};
    return launch(&c, f, grid, block, smem, hs, params);
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
                                 void **extra)
{
    (void)extra;
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", NULL);
    int32_t grid[3] = {(int32_t)cfg->gridDimX, (int32_t)cfg->gridDimY, (int32_t)cfg->gridDimZ};
    int32_t block[3] = {(int32_t)cfg->blockDimX, (int32_t)cfg->blockDimY,
                        (int32_t)cfg->blockDimZ};
    return launch(&c, f, grid, block, cfg->sharedMemBytes, cfg->hStream, params);
}

/* ------------------------------------------------------ copies, memset */

/* A positive number from the environment, else dflt; read once. */
static double env_positive(const char *name, double dflt, double *cache)
{
    if (*cache <= 0) {
        const char *s = getenv(name);
        *cache = s && atof(s) > 0 ? atof(s) : dflt;
    }
    return *cache;
}

/* ns a copy of `bytes` takes: a fixed start-up, then the bytes at the
 * link's rate (STANDIN_COPY_BYTES_PER_US, default 25 GB/s), times
 * STANDIN_COPY_FACTOR (a process whose link is slower; read at its first
 * copy, so a job may set it for one rank). */
static uint64_t copy_ns(size_t bytes)
{
    static double rate, factor;
    double per_us = env_positive("STANDIN_COPY_BYTES_PER_US", SIM_COPY_BYTES_PER_US, &rate);
    return (uint64_t)((1000 + (double)bytes * 1000 / per_us) *
                      env_positive("STANDIN_COPY_FACTOR", 1, &factor));
}

static CUresult copy(sim_call *c, void *dst, const void *src, size_t bytes, CUstream hs,
                     uint8_t copy_kind)
{
    context();
    memmove(dst, src, bytes);
    int s = sim_stream_index(hs);
    sim_work w = {.kind = SIM_WORK_MEMCPY, .copy_kind = copy_kind, .device = 0,
                  .ctx = (CUcontext)&primary, .context = primary.id, .stream = sim_cupti_stream_id(s), .corr = c->corr,
                  .bytes = bytes};
    w.src_kind = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
                                                              : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    w.dst_kind = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
                                                              : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    sim_gpu_place(s, copy_ns(bytes), &w);
    report_work(&w);
    return leave(c, CUDA_SUCCESS);
}

EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream hs)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", NULL);
    return copy(&c, (void *)(uintptr_t)dst, src, bytes, hs, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
}

EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream hs)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2", NULL);
    return copy(&c, dst, (const void *)(uintptr_t)src, bytes, hs,
                CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream hs)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, "cuMemsetD8Async", NULL);
    context();
    memset((void *)(uintptr_t)dst, v, n);
    int s = sim_stream_index(hs);
    sim_work w = {.kind = SIM_WORK_MEMSET, .device = 0, .ctx = (CUcontext)&primary, .context = primary.id,
                  .stream = sim_cupti_stream_id(s), .corr = c.corr, .bytes = n,
                  .dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE};
    sim_gpu_place(s, 1000, &w);
    report_work(&w);
    return leave(&c, CUDA_SUCCESS);
}

/* ------------------------------------------------------ streams, syncs */

EXPORT CUresult cuStreamCreate(CUstream *hs, unsigned int flags)
{
    (void)flags;
    *hs = sim_stream_create();
    return *hs ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult wait_for(sim_call *c, int stream, CUpti_ActivitySynchronizationType type)
{
    uint64_t t0 = sim_realtime_ns();
    sim_gpu_wait(stream);
    uint64_t t1 = sim_realtime_ns();
    const sim_prof_ops *ops = atomic_load(&prof);
    if (ops)
        ops->sync(c, type, primary.id, stream < 0 ? 0 : sim_cupti_stream_id(stream), t0, t1);
    return leave(c, CUDA_SUCCESS);
}

EXPORT CUresult cuStreamSynchronize(CUstream hs)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, "cuStreamSynchronize", NULL);
    return wait_for(&c, sim_stream_index(hs), CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
}

EXPORT CUresult cuCtxSynchronize(void)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", NULL);
    return wait_for(&c, -1, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
}

/* --------------------------------------------------------------- graphs */

EXPORT CUresult cuStreamBeginCapture(CUstream hs, CUstreamCaptureMode mode)
{
    (void)mode;
    return sim_capture_begin(sim_stream_index(hs)) == 0 ? CUDA_SUCCESS
                                                        : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuStreamEndCapture(CUstream hs, CUgraph *graph)
{
    sim_graph *g = sim_capture_end(sim_stream_index(hs));
    if (g == NULL)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    *graph = (CUgraph)g;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                            unsigned long long flags)
{
    (void)flags;
    sim_graph *g = malloc(sizeof *g);
    if (g == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(g, graph, sizeof *g);
    g->id = sim_next_graph_id();
    *exec = (CUgraphExec)g;
    return CUDA_SUCCESS;
}

/* Every node runs in order on the stream; all carry the launch call's
 * correlation id, as CUPTI reports graph kernels. */
EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream hs)
{
    sim_call c;
    enter(&c, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", NULL);
    context();
    const sim_graph *g = (const sim_graph *)exec;
    int s = sim_stream_index(hs);
    for (size_t i = 0; i < g->n; i++) {
        const sim_node *n = &g->nodes[i];
        run_kernel(&c, n->fn, n->grid, n->block, n->smem, s, n->dur_ns, c.corr, g->id, n->id);
    }
    return leave(&c, CUDA_SUCCESS);
}
