/* What the real NCCL does on the device, when a CUDA driver is loaded.
 *
 * The real NCCL enqueues one kernel per group launch with cuLaunchKernelEx
 * (through cuGetProcAddress), on the caller's stream, inside the API call,
 * and maps its own buffers with cuMemCreate while a communicator is made.
 * The test NCCL has no device, so it does this only when a driver is in
 * the process (the CUDA stand-in), after the data moved, with names of
 * NCCL 2.28's form.  Built without CUDA headers, it does nothing. */
#include "fn_ops.h"

#ifdef TSC_HAVE_CUPTI
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda.h>

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*get_function_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*mem_create_fn)(CUmemGenericAllocationHandle *, size_t,
                                  const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*mem_release_fn)(CUmemGenericAllocationHandle);

static launch_ex_fn launch_ex;
static mem_create_fn mem_create;
static mem_release_fn mem_release;
static CUfunction functions[FN_RECV + 1];

static const char *kernel_name(enum fn_kind k)
{
    switch (k) {
    case FN_ALLREDUCE: return "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    case FN_ALLGATHER: return "ncclDevKernel_AllGather_RING_LL";
    case FN_REDUCESCATTER: return "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL";
    case FN_BROADCAST: return "ncclDevKernel_Broadcast_RING_LL";
    case FN_REDUCE: return "ncclDevKernel_Reduce_Sum_f32_RING_LL";
    default: return "ncclDevKernel_SendRecv";
    }
}

static void resolve(void)
{
    mem_create = (mem_create_fn)dlsym(RTLD_DEFAULT, "cuMemCreate");
    mem_release = (mem_release_fn)dlsym(RTLD_DEFAULT, "cuMemRelease");
    get_function_fn get = (get_function_fn)dlsym(RTLD_DEFAULT, "cuModuleGetFunction");
    launch_ex = (launch_ex_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernelEx");
    if (get == NULL || launch_ex == NULL) {
        launch_ex = NULL;
        return;
    }
    for (int k = FN_ALLREDUCE; k <= FN_RECV; k++)
        if (get(&functions[k], NULL, kernel_name((enum fn_kind)k)) != CUDA_SUCCESS)
            launch_ex = NULL;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

void fn_device_map(ncclComm_t comm)
{
    pthread_once(&once, resolve);
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemGenericAllocationHandle h = 0;
    if (mem_create && mem_create(&h, FN_DEVICE_BUFFER_BYTES, &prop, 0) == CUDA_SUCCESS)
        comm->dev_buffers = h;
}

void fn_device_unmap(ncclComm_t comm)
{
    if (comm->dev_buffers && mem_release)
        mem_release(comm->dev_buffers);
    comm->dev_buffers = 0;
}

void fn_device_kernel(const fn_op *ops, size_t n)
{
    pthread_once(&once, resolve);
    /* FAKENCCL_NO_KERNEL=1: no kernel, so a job's collectives are timed on
     * the host.  The stand-in device does not make one rank's kernel wait
     * for another's, so a kernel launched here would end as if the ranks
     * had never waited for each other; the host call does wait. */
    if (launch_ex == NULL || n == 0 || getenv("FAKENCCL_NO_KERNEL"))
        return;
    uint64_t duration_ns = 5000;
    void *params[] = {&duration_ns};
    CUlaunchConfig cfg = {.gridDimX = 8, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 512,
                          .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = 0,
                          .hStream = (CUstream)ops[0].stream};
    launch_ex(&cfg, functions[ops[0].kind], params, NULL);
}
#else
void fn_device_kernel(const fn_op *ops, size_t n)
{
    (void)ops, (void)n;
}

void fn_device_map(ncclComm_t comm)
{
    (void)comm;
}

void fn_device_unmap(ncclComm_t comm)
{
    (void)comm;
}
#endif
