/* The table of recorded API calls; see cbid_filter.h for why these.
 * Entries name CUPTI's own enumerators, so a cbid that a future header
 * renumbers or drops fails to compile instead of silently misfiltering.
 * The numbers in comments are the CUDA 13.0 values. */
#include "cbid_filter.h"

#include <pthread.h>
#include <stdatomic.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "tsc_format.h"

#define RT(fn, ver, cls, devsync) \
    {TSC_API_RUNTIME, TSC_APICLASS_##cls, devsync, CUPTI_RUNTIME_TRACE_CBID_##fn##ver, #fn}
#define DRV(fn, cls, devsync) \
    {TSC_API_DRIVER, TSC_APICLASS_##cls, devsync, CUPTI_DRIVER_TRACE_CBID_##fn, #fn}

static const tsc_api_entry api_table[] = {
    RT(cudaLaunch, _v3020, LAUNCH, 0), /* 13 */
    RT(cudaMemcpy, _v3020, COPY, 0), /* 31 */
    RT(cudaMemcpy2D, _v3020, COPY, 0), /* 32 */
    RT(cudaMemcpyToArray, _v3020, COPY, 0), /* 33 */
    RT(cudaMemcpy2DToArray, _v3020, COPY, 0), /* 34 */
    RT(cudaMemcpyFromArray, _v3020, COPY, 0), /* 35 */
    RT(cudaMemcpy2DFromArray, _v3020, COPY, 0), /* 36 */
    RT(cudaMemcpyArrayToArray, _v3020, COPY, 0), /* 37 */
    RT(cudaMemcpy2DArrayToArray, _v3020, COPY, 0), /* 38 */
    RT(cudaMemcpyToSymbol, _v3020, COPY, 0), /* 39 */
    RT(cudaMemcpyFromSymbol, _v3020, COPY, 0), /* 40 */
    RT(cudaMemcpyAsync, _v3020, COPY, 0), /* 41 */
    RT(cudaMemcpyToArrayAsync, _v3020, COPY, 0), /* 42 */
    RT(cudaMemcpyFromArrayAsync, _v3020, COPY, 0), /* 43 */
    RT(cudaMemcpy2DAsync, _v3020, COPY, 0), /* 44 */
    RT(cudaMemcpy2DToArrayAsync, _v3020, COPY, 0), /* 45 */
    RT(cudaMemcpy2DFromArrayAsync, _v3020, COPY, 0), /* 46 */
    RT(cudaMemcpyToSymbolAsync, _v3020, COPY, 0), /* 47 */
    RT(cudaMemcpyFromSymbolAsync, _v3020, COPY, 0), /* 48 */
    RT(cudaMemset, _v3020, MEMSET, 0), /* 49 */
    RT(cudaMemset2D, _v3020, MEMSET, 0), /* 50 */
    RT(cudaMemsetAsync, _v3020, MEMSET, 0), /* 51 */
    RT(cudaMemset2DAsync, _v3020, MEMSET, 0), /* 52 */
    RT(cudaThreadSynchronize, _v3020, SYNC, 1), /* 126 */
    RT(cudaStreamSynchronize, _v3020, SYNC, 0), /* 131 */
    RT(cudaEventSynchronize, _v3020, SYNC, 0), /* 137 */
    RT(cudaMemset3D, _v3020, MEMSET, 0), /* 142 */
    RT(cudaMemset3DAsync, _v3020, MEMSET, 0), /* 143 */
    RT(cudaMemcpy3D, _v3020, COPY, 0), /* 144 */
    RT(cudaMemcpy3DAsync, _v3020, COPY, 0), /* 145 */
    RT(cudaStreamWaitEvent, _v3020, SYNC, 0), /* 147 */
    RT(cudaMemcpyPeer, _v4000, COPY, 0), /* 160 */
    RT(cudaMemcpyPeerAsync, _v4000, COPY, 0), /* 161 */
    RT(cudaMemcpy3DPeer, _v4000, COPY, 0), /* 162 */
    RT(cudaMemcpy3DPeerAsync, _v4000, COPY, 0), /* 163 */
    RT(cudaDeviceSynchronize, _v3020, SYNC, 1), /* 165 */
    RT(cudaLaunchKernel, _v7000, LAUNCH, 0), /* 211 */
    RT(cudaLaunch_ptsz, _v7000, LAUNCH, 0), /* 213 */
    RT(cudaLaunchKernel_ptsz, _v7000, LAUNCH, 0), /* 214 */
    RT(cudaMemcpy_ptds, _v7000, COPY, 0), /* 215 */
    RT(cudaMemcpy2D_ptds, _v7000, COPY, 0), /* 216 */
    RT(cudaMemcpyToArray_ptds, _v7000, COPY, 0), /* 217 */
    RT(cudaMemcpy2DToArray_ptds, _v7000, COPY, 0), /* 218 */
    RT(cudaMemcpyFromArray_ptds, _v7000, COPY, 0), /* 219 */
    RT(cudaMemcpy2DFromArray_ptds, _v7000, COPY, 0), /* 220 */
    RT(cudaMemcpyArrayToArray_ptds, _v7000, COPY, 0), /* 221 */
    RT(cudaMemcpy2DArrayToArray_ptds, _v7000, COPY, 0), /* 222 */
    RT(cudaMemcpyToSymbol_ptds, _v7000, COPY, 0), /* 223 */
    RT(cudaMemcpyFromSymbol_ptds, _v7000, COPY, 0), /* 224 */
    RT(cudaMemcpyAsync_ptsz, _v7000, COPY, 0), /* 225 */
    RT(cudaMemcpyToArrayAsync_ptsz, _v7000, COPY, 0), /* 226 */
    RT(cudaMemcpyFromArrayAsync_ptsz, _v7000, COPY, 0), /* 227 */
    RT(cudaMemcpy2DAsync_ptsz, _v7000, COPY, 0), /* 228 */
    RT(cudaMemcpy2DToArrayAsync_ptsz, _v7000, COPY, 0), /* 229 */
    RT(cudaMemcpy2DFromArrayAsync_ptsz, _v7000, COPY, 0), /* 230 */
    RT(cudaMemcpyToSymbolAsync_ptsz, _v7000, COPY, 0), /* 231 */
    RT(cudaMemcpyFromSymbolAsync_ptsz, _v7000, COPY, 0), /* 232 */
    RT(cudaMemset_ptds, _v7000, MEMSET, 0), /* 233 */
    RT(cudaMemset2D_ptds, _v7000, MEMSET, 0), /* 234 */
    RT(cudaMemsetAsync_ptsz, _v7000, MEMSET, 0), /* 235 */
    RT(cudaMemset2DAsync_ptsz, _v7000, MEMSET, 0), /* 236 */
    RT(cudaStreamSynchronize_ptsz, _v7000, SYNC, 0), /* 239 */
    RT(cudaMemset3D_ptds, _v7000, MEMSET, 0), /* 243 */
    RT(cudaMemset3DAsync_ptsz, _v7000, MEMSET, 0), /* 244 */
    RT(cudaMemcpy3D_ptds, _v7000, COPY, 0), /* 245 */
    RT(cudaMemcpy3DAsync_ptsz, _v7000, COPY, 0), /* 246 */
    RT(cudaStreamWaitEvent_ptsz, _v7000, SYNC, 0), /* 247 */
    RT(cudaMemcpy3DPeer_ptds, _v7000, COPY, 0), /* 249 */
    RT(cudaMemcpy3DPeerAsync_ptsz, _v7000, COPY, 0), /* 250 */
    RT(cudaLaunchCooperativeKernel, _v9000, LAUNCH, 0), /* 269 */
    RT(cudaLaunchCooperativeKernel_ptsz, _v9000, LAUNCH, 0), /* 270 */
    RT(cudaLaunchCooperativeKernelMultiDevice, _v9000, LAUNCH, 0), /* 272 */
    RT(cudaGraphLaunch, _v10000, GRAPH_LAUNCH, 0), /* 311 */
    RT(cudaGraphLaunch_ptsz, _v10000, GRAPH_LAUNCH, 0), /* 312 */
    RT(cudaLaunchKernelExC, _v11060, LAUNCH, 0), /* 430 */
    RT(cudaLaunchKernelExC_ptsz, _v11060, LAUNCH, 0), /* 431 */
    RT(cudaMemcpyBatchAsync, _v12080, COPY, 0), /* 482 */
    RT(cudaMemcpyBatchAsync_ptsz, _v12080, COPY, 0), /* 483 */
    RT(cudaMemcpy3DBatchAsync, _v12080, COPY, 0), /* 484 */
    RT(cudaMemcpy3DBatchAsync_ptsz, _v12080, COPY, 0), /* 485 */
    RT(__cudaLaunchKernel, _v13000, LAUNCH, 0), /* 505 */
    RT(__cudaLaunchKernel_ptsz, _v13000, LAUNCH, 0), /* 506 */
    RT(cudaMemcpyBatchAsync, _v13000, COPY, 0), /* 509 */
    RT(cudaMemcpyBatchAsync_ptsz, _v13000, COPY, 0), /* 510 */
    RT(cudaMemcpy3DBatchAsync, _v13000, COPY, 0), /* 511 */
    RT(cudaMemcpy3DBatchAsync_ptsz, _v13000, COPY, 0), /* 512 */
    DRV(cuCtxSynchronize, SYNC, 0), /* 17 */
    DRV(cuMemcpyHtoD, COPY, 0), /* 43 */
    DRV(cuMemcpyDtoH, COPY, 0), /* 45 */
    DRV(cuMemcpyDtoD, COPY, 0), /* 47 */
    DRV(cuMemcpyDtoA, COPY, 0), /* 49 */
    DRV(cuMemcpyAtoD, COPY, 0), /* 51 */
    DRV(cuMemcpyHtoA, COPY, 0), /* 53 */
    DRV(cuMemcpyAtoH, COPY, 0), /* 54 */
    DRV(cuMemcpyAtoA, COPY, 0), /* 55 */
    DRV(cuMemcpy2D, COPY, 0), /* 56 */
    DRV(cuMemcpy2DUnaligned, COPY, 0), /* 57 */
    DRV(cuMemcpy3D, COPY, 0), /* 58 */
    DRV(cuMemcpyHtoDAsync, COPY, 0), /* 60 */
    DRV(cuMemcpyDtoHAsync, COPY, 0), /* 62 */
    DRV(cuMemcpyDtoDAsync, COPY, 0), /* 64 */
    DRV(cuMemcpyHtoAAsync, COPY, 0), /* 66 */
    DRV(cuMemcpyAtoHAsync, COPY, 0), /* 67 */
    DRV(cuMemcpy2DAsync, COPY, 0), /* 68 */
    DRV(cuMemcpy3DAsync, COPY, 0), /* 69 */
    DRV(cuMemsetD8, MEMSET, 0), /* 71 */
    DRV(cuMemsetD16, MEMSET, 0), /* 73 */
    DRV(cuMemsetD32, MEMSET, 0), /* 75 */
    DRV(cuMemsetD2D8, MEMSET, 0), /* 77 */
    DRV(cuMemsetD2D16, MEMSET, 0), /* 79 */
    DRV(cuMemsetD2D32, MEMSET, 0), /* 81 */
    DRV(cuLaunch, LAUNCH, 0), /* 115 */
    DRV(cuLaunchGrid, LAUNCH, 0), /* 116 */
    DRV(cuLaunchGridAsync, LAUNCH, 0), /* 117 */
    DRV(cuEventSynchronize, SYNC, 0), /* 121 */
    DRV(cuStreamSynchronize, SYNC, 0), /* 126 */
    DRV(cuMemsetD8Async, MEMSET, 0), /* 216 */
    DRV(cuMemsetD16Async, MEMSET, 0), /* 218 */
    DRV(cuMemsetD32Async, MEMSET, 0), /* 220 */
    DRV(cuMemsetD2D8Async, MEMSET, 0), /* 222 */
    DRV(cuMemsetD2D16Async, MEMSET, 0), /* 224 */
    DRV(cuMemsetD2D32Async, MEMSET, 0), /* 226 */
    DRV(cuMemcpy_v2, COPY, 0), /* 248 */
    DRV(cuMemsetD8_v2, MEMSET, 0), /* 249 */
    DRV(cuMemsetD16_v2, MEMSET, 0), /* 250 */
    DRV(cuMemsetD32_v2, MEMSET, 0), /* 251 */
    DRV(cuMemsetD2D8_v2, MEMSET, 0), /* 252 */
    DRV(cuMemsetD2D16_v2, MEMSET, 0), /* 253 */
    DRV(cuMemsetD2D32_v2, MEMSET, 0), /* 254 */
    DRV(cuMemcpyHtoD_v2, COPY, 0), /* 276 */
    DRV(cuMemcpyHtoDAsync_v2, COPY, 0), /* 277 */
    DRV(cuMemcpyDtoH_v2, COPY, 0), /* 278 */
    DRV(cuMemcpyDtoHAsync_v2, COPY, 0), /* 279 */
    DRV(cuMemcpyDtoD_v2, COPY, 0), /* 280 */
    DRV(cuMemcpyDtoDAsync_v2, COPY, 0), /* 281 */
    DRV(cuMemcpyAtoH_v2, COPY, 0), /* 282 */
    DRV(cuMemcpyAtoHAsync_v2, COPY, 0), /* 283 */
    DRV(cuMemcpyAtoD_v2, COPY, 0), /* 284 */
    DRV(cuMemcpyDtoA_v2, COPY, 0), /* 285 */
    DRV(cuMemcpyAtoA_v2, COPY, 0), /* 286 */
    DRV(cuMemcpy2D_v2, COPY, 0), /* 287 */
    DRV(cuMemcpy2DUnaligned_v2, COPY, 0), /* 288 */
    DRV(cuMemcpy2DAsync_v2, COPY, 0), /* 289 */
    DRV(cuMemcpy3D_v2, COPY, 0), /* 290 */
    DRV(cuMemcpy3DAsync_v2, COPY, 0), /* 291 */
    DRV(cuMemcpyHtoA_v2, COPY, 0), /* 292 */
    DRV(cuMemcpyHtoAAsync_v2, COPY, 0), /* 293 */
    DRV(cuStreamWaitEvent, SYNC, 0), /* 295 */
    DRV(cuMemcpy, COPY, 0), /* 305 */
    DRV(cuMemcpyAsync, COPY, 0), /* 306 */
    DRV(cuLaunchKernel, LAUNCH, 0), /* 307 */
    DRV(cuMemcpyPeer, COPY, 0), /* 318 */
    DRV(cuMemcpyPeerAsync, COPY, 0), /* 319 */
    DRV(cuMemcpy3DPeer, COPY, 0), /* 320 */
    DRV(cuMemcpy3DPeerAsync, COPY, 0), /* 321 */
    DRV(cuMemcpyHtoD_v2_ptds, COPY, 0), /* 397 */
    DRV(cuMemcpyDtoH_v2_ptds, COPY, 0), /* 398 */
    DRV(cuMemcpyDtoD_v2_ptds, COPY, 0), /* 399 */
    DRV(cuMemcpyDtoA_v2_ptds, COPY, 0), /* 400 */
    DRV(cuMemcpyAtoD_v2_ptds, COPY, 0), /* 401 */
    DRV(cuMemcpyHtoA_v2_ptds, COPY, 0), /* 402 */
    DRV(cuMemcpyAtoH_v2_ptds, COPY, 0), /* 403 */
    DRV(cuMemcpyAtoA_v2_ptds, COPY, 0), /* 404 */
    DRV(cuMemcpy2D_v2_ptds, COPY, 0), /* 405 */
    DRV(cuMemcpy2DUnaligned_v2_ptds, COPY, 0), /* 406 */
    DRV(cuMemcpy3D_v2_ptds, COPY, 0), /* 407 */
    DRV(cuMemcpy_ptds, COPY, 0), /* 408 */
    DRV(cuMemcpyPeer_ptds, COPY, 0), /* 409 */
    DRV(cuMemcpy3DPeer_ptds, COPY, 0), /* 410 */
    DRV(cuMemsetD8_v2_ptds, MEMSET, 0), /* 411 */
    DRV(cuMemsetD16_v2_ptds, MEMSET, 0), /* 412 */
    DRV(cuMemsetD32_v2_ptds, MEMSET, 0), /* 413 */
    DRV(cuMemsetD2D8_v2_ptds, MEMSET, 0), /* 414 */
    DRV(cuMemsetD2D16_v2_ptds, MEMSET, 0), /* 415 */
    DRV(cuMemsetD2D32_v2_ptds, MEMSET, 0), /* 416 */
    DRV(cuMemcpyAsync_ptsz, COPY, 0), /* 418 */
    DRV(cuMemcpyHtoAAsync_v2_ptsz, COPY, 0), /* 419 */
    DRV(cuMemcpyAtoHAsync_v2_ptsz, COPY, 0), /* 420 */
    DRV(cuMemcpyHtoDAsync_v2_ptsz, COPY, 0), /* 421 */
    DRV(cuMemcpyDtoHAsync_v2_ptsz, COPY, 0), /* 422 */
    DRV(cuMemcpyDtoDAsync_v2_ptsz, COPY, 0), /* 423 */
    DRV(cuMemcpy2DAsync_v2_ptsz, COPY, 0), /* 424 */
    DRV(cuMemcpy3DAsync_v2_ptsz, COPY, 0), /* 425 */
    DRV(cuMemcpyPeerAsync_ptsz, COPY, 0), /* 426 */
    DRV(cuMemcpy3DPeerAsync_ptsz, COPY, 0), /* 427 */
    DRV(cuMemsetD8Async_ptsz, MEMSET, 0), /* 428 */
    DRV(cuMemsetD16Async_ptsz, MEMSET, 0), /* 429 */
    DRV(cuMemsetD32Async_ptsz, MEMSET, 0), /* 430 */
    DRV(cuMemsetD2D8Async_ptsz, MEMSET, 0), /* 431 */
    DRV(cuMemsetD2D16Async_ptsz, MEMSET, 0), /* 432 */
    DRV(cuMemsetD2D32Async_ptsz, MEMSET, 0), /* 433 */
    DRV(cuStreamWaitEvent_ptsz, SYNC, 0), /* 436 */
    DRV(cuStreamSynchronize_ptsz, SYNC, 0), /* 440 */
    DRV(cuLaunchKernel_ptsz, LAUNCH, 0), /* 442 */
    DRV(cuLaunchCooperativeKernel, LAUNCH, 0), /* 477 */
    DRV(cuLaunchCooperativeKernel_ptsz, LAUNCH, 0), /* 478 */
    DRV(cuLaunchCooperativeKernelMultiDevice, LAUNCH, 0), /* 480 */
    DRV(cuGraphLaunch, GRAPH_LAUNCH, 0), /* 514 */
    DRV(cuGraphLaunch_ptsz, GRAPH_LAUNCH, 0), /* 515 */
    DRV(cuLaunchKernelEx, NCCL_LAUNCH, 0), /* 652 */
    DRV(cuLaunchKernelEx_ptsz, NCCL_LAUNCH, 0), /* 653 */
    DRV(cuMemcpyBatchAsync, COPY, 0), /* 776 */
    DRV(cuMemcpyBatchAsync_ptsz, COPY, 0), /* 777 */
    DRV(cuMemcpy3DBatchAsync, COPY, 0), /* 778 */
    DRV(cuMemcpy3DBatchAsync_ptsz, COPY, 0), /* 779 */
    DRV(cuMemcpyBatchAsync_v2, COPY, 0), /* 796 */
    DRV(cuMemcpyBatchAsync_v2_ptsz, COPY, 0), /* 797 */
    DRV(cuMemcpy3DBatchAsync_v2, COPY, 0), /* 798 */
    DRV(cuMemcpy3DBatchAsync_v2_ptsz, COPY, 0), /* 799 */
    DRV(cuCtxSynchronize_v2, SYNC, 0), /* 800 */
};

#undef RT
#undef DRV

const tsc_api_entry *tsc_api_table(size_t *count)
{
    *count = sizeof api_table / sizeof api_table[0];
    return api_table;
}

/* cbids are small dense integers (under 1024 in CUDA 13), so a direct
 * index built once replaces a scan of the table per API record. */
#define TSC_CBID_INDEX_SIZE 1024u
static uint16_t index_by_cbid[3][TSC_CBID_INDEX_SIZE]; /* table position + 1 */
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
    for (size_t i = 0; i < sizeof api_table / sizeof api_table[0]; i++) {
        const tsc_api_entry *e = &api_table[i];
        if (e->cbid < TSC_CBID_INDEX_SIZE && e->domain <= 2)
            index_by_cbid[e->domain][e->cbid] = (uint16_t)(i + 1);
    }
}

static _Atomic int index_ready;

static void build_index_once(void)
{
    pthread_once(&index_once, build_index);
    atomic_store_explicit(&index_ready, 1, memory_order_release);
}

const tsc_api_entry *tsc_api_lookup(uint8_t domain, uint32_t cbid)
{
    if (domain != TSC_API_RUNTIME && domain != TSC_API_DRIVER)
        return NULL;
    if (cbid >= TSC_CBID_INDEX_SIZE) {
        /* Not indexed (a future header): fall back to the table. */
        for (size_t i = 0; i < sizeof api_table / sizeof api_table[0]; i++)
            if (api_table[i].cbid == cbid && api_table[i].domain == domain)
                return &api_table[i];
        return NULL;
    }
    /* One load per record once built (the writer looks up every call). */
    if (__builtin_expect(!atomic_load_explicit(&index_ready, memory_order_acquire), 0))
        build_index_once();
    uint16_t pos = index_by_cbid[domain][cbid];
    return pos ? &api_table[pos - 1] : NULL;
}

int tsc_api_entry_wanted(const tsc_api_entry *e, tsc_cupti_mode mode)
{
    if (mode == TSC_CUPTI_OFF || e == NULL)
        return 0;
    if (mode == TSC_CUPTI_FULL)
        return 1;
    return e->cls != TSC_APICLASS_LAUNCH && e->cls != TSC_APICLASS_GRAPH_LAUNCH;
}

int tsc_api_wanted(uint8_t domain, uint32_t cbid, tsc_cupti_mode mode)
{
    return tsc_api_entry_wanted(tsc_api_lookup(domain, cbid), mode);
}
