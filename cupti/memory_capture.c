/* Device memory capture; see memory_capture.h. */
#include "memory_capture.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <cuda.h>

#include "activity_sink.h"
#include "memory_xlate.h"
#include "parts.h"
#include "recorder.h"

static const tsc_cupti_api *mem_api;
static atomic_int kinds_on, info_done;
static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static tsc_vmm_table vmm; /* ~320 KiB of BSS, touched only by VMM users */

static const CUpti_CallbackId vmm_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
};

void tsc_mem_capture_start(const tsc_cupti_api *api, CUpti_SubscriberHandle sub)
{
    mem_api = api;
    int alloc_ok = api->ActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS;
    int pool_ok = api->ActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL) == CUPTI_SUCCESS;
    int vmm_ok = api->EnableCallback != NULL;
    for (size_t i = 0; vmm_ok && i < sizeof vmm_cbids / sizeof vmm_cbids[0]; i++)
        vmm_ok = api->EnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, vmm_cbids[i]) ==
                 CUPTI_SUCCESS;
    atomic_store(&kinds_on, 1);
    char status[96];
    if (alloc_ok && pool_ok && vmm_ok)
        snprintf(status, sizeof status, "ok");
    else
        snprintf(status, sizeof status, "partial:%s%s%s", alloc_ok ? "" : " no allocations",
                 pool_ok ? "" : " no pools", vmm_ok ? "" : " no VMM");
    if (!alloc_ok)
        tsc_warn_once("mem_capture", "CUPTI refused memory records (%s): the report has no "
                                     "memory section", status);
    tsc_rec_meta(TSC_META_MEM_CAPTURE, status);
}

void tsc_mem_capture_stop(void)
{
    if (!atomic_exchange(&kinds_on, 0) || mem_api == NULL)
        return;
    mem_api->ActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
    mem_api->ActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
}

/* The physical allocation's device; host-located VMM memory is skipped. */
static int create_device(const cuMemCreate_params *p, uint32_t *device)
{
    if (p->prop == NULL || p->prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        p->prop->location.id < 0)
        return 0;
    *device = (uint32_t)p->prop->location.id;
    return 1;
}

void tsc_mem_capture_callback(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    if (!atomic_load(&kinds_on) || cb == NULL || cb->callbackSite != CUPTI_API_EXIT ||
        cb->functionParams == NULL || cb->functionReturnValue == NULL ||
        *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
        return;
    tsc_xrec x;
    tsc_vmm_entry v = {0};
    int have = 0;
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate) {
        const cuMemCreate_params *p = cb->functionParams;
        if (p->handle == NULL || !create_device(p, &v.device))
            return;
        v.bytes = p->size;
        /* NCCL maps its own buffers with cuMemCreate (inside its calls, on
         * the caller's thread): they are not the caching allocator's. */
        v.source = tsc_call_in_nccl ? TSC_MEM_SRC_NCCL : TSC_MEM_SRC_VMM;
        pthread_mutex_lock(&vmm_lock);
        have = tsc_vmm_put(&vmm, (uint64_t)*p->handle, &v) == 0;
        pthread_mutex_unlock(&vmm_lock);
        if (!have) {
            tsc_rec_count_dropped(1); /* table full: its release could not be sized */
            return;
        }
        have = tsc_xlate_vmm(0, v.source, v.bytes, v.device, tsc_now_ns(), &x);
    } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemRelease) {
        const cuMemRelease_params *p = cb->functionParams;
        pthread_mutex_lock(&vmm_lock);
        int known = tsc_vmm_take(&vmm, (uint64_t)p->handle, &v);
        pthread_mutex_unlock(&vmm_lock);
        if (known)
            have = tsc_xlate_vmm(1, v.source, v.bytes, v.device, tsc_now_ns(), &x);
    }
    if (have)
        tsc_sink_emit(&x, &tsc_sink_to_ring);
}

typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*ctx_state_fn)(CUdevice, unsigned int *, int *);
typedef CUresult (*ctx_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*ctx_release_fn)(CUdevice);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*mem_info_fn)(size_t *, size_t *);

void tsc_mem_capture_info(int device)
{
    if (device < 0 || atomic_exchange(&info_done, 1))
        return;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == NULL)
        return;
    dev_get_fn dev_get = (dev_get_fn)dlsym(cuda, "cuDeviceGet");
    ctx_state_fn state = (ctx_state_fn)dlsym(cuda, "cuDevicePrimaryCtxGetState");
    ctx_retain_fn retain = (ctx_retain_fn)dlsym(cuda, "cuDevicePrimaryCtxRetain");
    ctx_release_fn release = (ctx_release_fn)dlsym(cuda, "cuDevicePrimaryCtxRelease_v2");
    ctx_push_fn push = (ctx_push_fn)dlsym(cuda, "cuCtxPushCurrent_v2");
    ctx_pop_fn pop = (ctx_pop_fn)dlsym(cuda, "cuCtxPopCurrent_v2");
    mem_info_fn info = (mem_info_fn)dlsym(cuda, "cuMemGetInfo_v2");
    CUdevice dev;
    unsigned int flags = 0;
    int active = 0;
    CUcontext ctx = NULL, popped = NULL;
    size_t free_b = 0, total_b = 0;
    /* Retaining an inactive primary context would create one (hundreds of
     * MiB on the device): only an active one is used. */
    if (dev_get && state && retain && release && push && pop && info &&
        dev_get(&dev, device) == CUDA_SUCCESS && state(dev, &flags, &active) == CUDA_SUCCESS &&
        active && retain(&ctx, dev) == CUDA_SUCCESS) {
        uint64_t when = tsc_now_ns();
        int pushed = push(ctx) == CUDA_SUCCESS;
        int ok = pushed && info(&free_b, &total_b) == CUDA_SUCCESS;
        if (pushed)
            pop(&popped);
        release(dev);
        if (ok) {
            char text[32];
            snprintf(text, sizeof text, "%zu", free_b);
            tsc_rec_meta(TSC_META_MEM_INFO_FREE, text);
            snprintf(text, sizeof text, "%zu", total_b);
            tsc_rec_meta(TSC_META_MEM_INFO_TOTAL, text);
            snprintf(text, sizeof text, "%llu", (unsigned long long)when);
            tsc_rec_meta(TSC_META_MEM_INFO_TIME, text);
        }
    }
    dlclose(cuda);
}
