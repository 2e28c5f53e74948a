/* Translation of every CUPTI 13 record kind, built by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "activity_xlate.h"

#define T0 1763700000000000000ull

static CUpti_ActivityKernel10 kernel(const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = T0 + 100;
    k.end = T0 + 5100;
    k.deviceId = 3;
    k.streamId = 7;
    k.gridX = 128;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 49152;
    k.correlationId = 4242;
    k.graphId = 9;
    k.name = name;
    return k;
}

static void kernel_record(void **state)
{
    (void)state;
    CUpti_ActivityKernel10 k = kernel("_Z10my_kernelPf");
    tsc_xrec x;
    assert_int_equal(tsc_xlate_kernel(&k, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_KERNEL);
    assert_int_equal(x.desc_type, TSC_DESC_KERNEL);
    assert_int_equal(x.desc_len, sizeof(tsc_desc_kernel));
    assert_int_equal(x.start_ns, T0 + 100);
    assert_int_equal(x.end_ns, T0 + 5100);
    assert_int_equal(x.val, 4242);
    assert_string_equal(x.name, "_Z10my_kernelPf");
    assert_int_equal(x.desc.kernel.name, 0); /* filled by the sink */
    assert_int_equal(x.desc.kernel.device, 3);
    assert_int_equal(x.desc.kernel.stream, 7);
    assert_int_equal(x.desc.kernel.grid[0], 128);
    assert_int_equal(x.desc.kernel.grid[1], 2);
    assert_int_equal(x.desc.kernel.grid[2], 1);
    assert_int_equal(x.desc.kernel.block[0], 256);
    assert_int_equal(x.desc.kernel.block[1], 1);
    assert_int_equal(x.desc.kernel.block[2], 1);
    assert_int_equal(x.desc.kernel.shared_mem, 1024 + 49152);
    assert_int_equal(x.desc.kernel.graph_id, 9);
    assert_int_equal(x.host_tid, 0);

    /* Malformed: end before start, no start; negative sizes clamp. */
    k.end = k.start - 1;
    assert_int_equal(tsc_xlate_kernel(&k, &x), 0);
    k = kernel(NULL);
    k.start = 0;
    assert_int_equal(tsc_xlate_kernel(&k, &x), 0);
    k = kernel(NULL);
    k.gridX = -4;
    k.staticSharedMemory = -1;
    assert_int_equal(tsc_xlate_kernel(&k, &x), 1);
    assert_int_equal(x.desc.kernel.grid[0], 0);
    assert_int_equal(x.desc.kernel.shared_mem, 49152);
    assert_non_null(x.name); /* a placeholder, never NULL */
}

static CUpti_ActivityMemcpy6 memcpy_rec(uint8_t copy_kind, uint8_t src, uint8_t dst)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = copy_kind;
    m.srcKind = src;
    m.dstKind = dst;
    m.bytes = 1 << 20;
    m.start = T0;
    m.end = T0 + 800;
    m.deviceId = 1;
    m.streamId = 13;
    m.correlationId = 77;
    return m;
}

static void memcpy_directions(void **state)
{
    (void)state;
    const struct {
        uint8_t copy_kind, src, dst;
        uint8_t dir, pinned;
    } cases[] = {
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, TSC_COPY_H2D, 1},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, TSC_COPY_H2D, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_PINNED, TSC_COPY_D2H, 1},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, TSC_COPY_D2H, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, TSC_COPY_H2D, 1},
        {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY,
         CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, TSC_COPY_D2H, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, TSC_COPY_D2D, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, 4, 4, TSC_COPY_D2D, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, 4, 3, TSC_COPY_D2D, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, 3, 4, TSC_COPY_D2D, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_PINNED, TSC_COPY_H2H, 1},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, TSC_COPY_H2H, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 3, 3, TSC_COPY_P2P, 0},
        {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, 0, 0, TSC_COPY_OTHER, 0},
        {99, 0, 0, TSC_COPY_OTHER, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUpti_ActivityMemcpy6 m = memcpy_rec(cases[i].copy_kind, cases[i].src, cases[i].dst);
        tsc_xrec x;
        assert_int_equal(tsc_xlate_memcpy(&m, &x), 1);
        assert_int_equal(x.ev_kind, TSC_EV_MEMCPY);
        assert_int_equal(x.desc_type, TSC_DESC_COPY);
        assert_int_equal(x.desc_len, sizeof(tsc_desc_copy));
        assert_int_equal(x.desc.copy.dir, cases[i].dir);
        assert_int_equal(x.desc.copy.pinned, cases[i].pinned);
        assert_int_equal(x.desc.copy.src_kind, cases[i].src);
        assert_int_equal(x.desc.copy.dst_kind, cases[i].dst);
        assert_int_equal(x.desc.copy.bytes, 1 << 20);
        assert_int_equal(x.desc.copy.device, 1);
        assert_int_equal(x.desc.copy.dst_device, 1);
        assert_int_equal(x.desc.copy.stream, 13);
        assert_int_equal(x.val, 77);
        assert_int_equal(x.start_ns, T0);
        assert_int_equal(x.end_ns, T0 + 800);
        assert_null(x.name);
    }
    CUpti_ActivityMemcpy6 bad = memcpy_rec(1, 2, 3);
    bad.end = 0;
    tsc_xrec x;
    assert_int_equal(tsc_xlate_memcpy(&bad, &x), 0);
}

static void p2p_record(void **state)
{
    (void)state;
    CUpti_ActivityMemcpyPtoP4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD; /* still peer to peer */
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 64 << 20;
    m.start = T0 + 10;
    m.end = T0 + 20;
    m.deviceId = 0;
    m.streamId = 21;
    m.srcDeviceId = 2;
    m.dstDeviceId = 5;
    m.correlationId = 555;
    tsc_xrec x;
    assert_int_equal(tsc_xlate_p2p(&m, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_MEMCPY);
    assert_int_equal(x.desc.copy.dir, TSC_COPY_P2P);
    assert_int_equal(x.desc.copy.device, 2);
    assert_int_equal(x.desc.copy.dst_device, 5);
    assert_int_equal(x.desc.copy.stream, 21);
    assert_int_equal(x.desc.copy.bytes, 64 << 20);
    assert_int_equal(x.desc.copy.pinned, 0);
    assert_int_equal(x.val, 555);
}

static void memset_record(void **state)
{
    (void)state;
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = 0;
    m.bytes = 4096;
    m.start = T0;
    m.end = T0 + 3;
    m.deviceId = 6;
    m.streamId = 8;
    m.correlationId = 31;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    tsc_xrec x;
    assert_int_equal(tsc_xlate_memset(&m, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_MEMSET);
    assert_int_equal(x.desc_type, TSC_DESC_COPY);
    assert_int_equal(x.desc.copy.dir, TSC_COPY_MEMSET);
    assert_int_equal(x.desc.copy.dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(x.desc.copy.src_kind, 0);
    assert_int_equal(x.desc.copy.device, 6);
    assert_int_equal(x.desc.copy.dst_device, 6);
    assert_int_equal(x.desc.copy.stream, 8);
    assert_int_equal(x.desc.copy.bytes, 4096);
    assert_int_equal(x.val, 31);
    /* A zero-length (start == end) memset is valid. */
    m.end = m.start;
    assert_int_equal(tsc_xlate_memset(&m, &x), 1);
}

static CUpti_ActivityAPI api_rec(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr,
                                 uint32_t tid)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.cbid = cbid;
    a.start = T0 + 1;
    a.end = T0 + 9;
    a.processId = 100;
    a.threadId = tid;
    a.correlationId = corr;
    return a;
}

static void sync_records(void **state)
{
    (void)state;
    tsc_corr_cache *cache = test_malloc(sizeof *cache);
    tsc_corr_clear(cache);
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = T0;
    s.end = T0 + 7000000;
    s.correlationId = 900;
    s.streamId = 14;
    tsc_xrec x;

    /* No API record seen: thread unknown. */
    assert_int_equal(tsc_xlate_sync(&s, cache, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_SYNC);
    assert_int_equal(x.desc_type, TSC_DESC_SYNC);
    assert_int_equal(x.desc_len, sizeof(tsc_desc_sync));
    assert_int_equal(x.desc.sync.type, TSC_SYNC_STREAM);
    assert_int_equal(x.desc.sync.stream, 14);
    assert_int_equal(x.desc.sync.tid, 0);
    assert_int_equal(x.val, 900);
    assert_int_equal(x.end_ns - x.start_ns, 7000000);
    assert_int_equal(tsc_xlate_sync(&s, NULL, &x), 1);

    /* Its API record fills the thread in. */
    tsc_corr_put(cache, 900, 4321, TSC_API_RUNTIME,
                 CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020);
    assert_int_equal(tsc_xlate_sync(&s, cache, &x), 1);
    assert_int_equal(x.desc.sync.tid, 4321);
    assert_int_equal(x.host_tid, 4321);

    /* Context sync from cudaDeviceSynchronize is a device sync. */
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.correlationId = 901;
    tsc_corr_put(cache, 901, 4321, TSC_API_RUNTIME,
                 CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
    assert_int_equal(tsc_xlate_sync(&s, cache, &x), 1);
    assert_int_equal(x.desc.sync.type, TSC_SYNC_DEVICE);
    assert_int_equal(x.desc.sync.stream, 0);
    /* ...but from cuCtxSynchronize it stays a context sync. */
    s.correlationId = 902;
    tsc_corr_put(cache, 902, 4321, TSC_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize);
    assert_int_equal(tsc_xlate_sync(&s, cache, &x), 1);
    assert_int_equal(x.desc.sync.type, TSC_SYNC_CONTEXT);

    const struct {
        uint32_t cupti, tsc;
    } types[] = {
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, TSC_SYNC_EVENT},
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, TSC_SYNC_STREAM_WAIT_EVENT},
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, TSC_SYNC_OTHER},
        {77, TSC_SYNC_OTHER},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        s.type = (CUpti_ActivitySynchronizationType)types[i].cupti;
        s.correlationId = 5000 + (uint32_t)i;
        assert_int_equal(tsc_xlate_sync(&s, cache, &x), 1);
        assert_int_equal(x.desc.sync.type, types[i].tsc);
    }
    test_free(cache);
}

static void api_records(void **state)
{
    (void)state;
    tsc_xrec x;
    CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME,
                                  CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 12, 777);
    assert_int_equal(tsc_xlate_api(&a, TSC_API_RUNTIME, TSC_CUPTI_FULL, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_API);
    assert_int_equal(x.desc_type, TSC_DESC_API);
    assert_int_equal(x.desc_len, sizeof(tsc_desc_api));
    assert_int_equal(x.desc.api.domain, TSC_API_RUNTIME);
    assert_int_equal(x.desc.api.cbid, 505);
    assert_int_equal(x.desc.api.tid, 777);
    assert_int_equal(x.host_tid, 777);
    assert_string_equal(x.name, "__cudaLaunchKernel");
    assert_int_equal(x.val, 12);
    assert_int_equal(x.start_ns, T0 + 1);
    assert_int_equal(x.end_ns, T0 + 9);
    /* Light mode drops plain launches, keeps NCCL's cuLaunchKernelEx. */
    assert_int_equal(tsc_xlate_api(&a, TSC_API_RUNTIME, TSC_CUPTI_LIGHT, &x), 0);
    CUpti_ActivityAPI d =
        api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 13, 778);
    assert_int_equal(tsc_xlate_api(&d, TSC_API_DRIVER, TSC_CUPTI_LIGHT, &x), 1);
    assert_string_equal(x.name, "cuLaunchKernelEx");
    assert_int_equal(x.desc.api.domain, TSC_API_DRIVER);
    /* Uninteresting calls are dropped. */
    CUpti_ActivityAPI g = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 14, 1);
    assert_int_equal(tsc_xlate_api(&g, TSC_API_RUNTIME, TSC_CUPTI_FULL, &x), 0);
    /* Bad times. */
    a.end = a.start - 1;
    assert_int_equal(tsc_xlate_api(&a, TSC_API_RUNTIME, TSC_CUPTI_FULL, &x), 0);
}

static void extcorr_records(void **state)
{
    (void)state;
    CUpti_ActivityExternalCorrelation e;
    memset(&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    e.externalId = TSC_EXTCORR_ID(17, 3);
    e.correlationId = 4242;
    tsc_xrec x;
    assert_int_equal(tsc_xlate_extcorr(&e, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_EXTCORR);
    assert_int_equal(x.desc_type, 0);
    assert_int_equal(x.desc_field, 4242);
    assert_int_equal(x.val, TSC_EXTCORR_ID(17, 3));
    assert_int_equal(x.flags, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
    assert_int_equal(x.start_ns, 0);
    assert_int_equal(x.end_ns, 0);
    /* The id decodes back to (desc, val), as the analyzer joins it. */
    assert_int_equal((x.val >> 32) & 0x7fffffffu, 17);
    assert_int_equal(x.val & 0xffffffffu, 3);
    /* Kineto's kinds and ids without bit 63 are not ours. */
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    assert_int_equal(tsc_xlate_extcorr(&e, &x), 0);
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    e.externalId = 12345;
    assert_int_equal(tsc_xlate_extcorr(&e, &x), 0);
    e.externalId = TSC_EXTCORR_ID(1, 1);
    e.correlationId = 0;
    assert_int_equal(tsc_xlate_extcorr(&e, &x), 0);
}

static void nccl_kernel_names(void **state)
{
    (void)state;
    assert_true(tsc_is_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    assert_true(tsc_is_nccl_kernel("_Z38ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
    assert_true(tsc_is_nccl_kernel("ncclDevKernel_SendRecv"));
    assert_true(tsc_is_nccl_kernel("ncclDevKernel_Generic"));
    assert_true(tsc_is_nccl_kernel("ncclSymkDevKernel_AllGather_LL"));
    assert_true(tsc_is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
    assert_false(tsc_is_nccl_kernel("void at::native::vectorized_elementwise_kernel<4>"));
    assert_false(tsc_is_nccl_kernel("_Z10my_kernelPf"));
    assert_false(tsc_is_nccl_kernel("nccl"));
    assert_false(tsc_is_nccl_kernel(""));
    assert_false(tsc_is_nccl_kernel(NULL));
    assert_false(tsc_is_nccl_kernel("_Z"));
    assert_false(tsc_is_nccl_kernel("_ZN"));
}

static void dispatch(void **state)
{
    (void)state;
    tsc_corr_cache *cache = test_malloc(sizeof *cache);
    tsc_corr_clear(cache);
    tsc_xrec x;
    uint64_t overhead = 0;

    CUpti_ActivityKernel10 k = kernel("_Z10my_kernelPf");
    CUpti_ActivityKernel10 nk = kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&k, TSC_CUPTI_FULL, cache, &overhead, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_KERNEL);
    /* Light: only NCCL kernels survive (if kernel records arrive at all). */
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&k, TSC_CUPTI_LIGHT, cache, &overhead, &x), 0);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&nk, TSC_CUPTI_LIGHT, cache, &overhead, &x), 1);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&k, TSC_CUPTI_OFF, cache, &overhead, &x), 0);
    k.kind = CUPTI_ACTIVITY_KIND_KERNEL; /* serialized kernels use the same struct */
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&k, TSC_CUPTI_FULL, cache, &overhead, &x), 1);

    CUpti_ActivityMemcpy6 m = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 2, 3);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&m, TSC_CUPTI_LIGHT, cache, &overhead, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_MEMCPY);

    /* An API record is cached even when filtered out, so its sync finds it. */
    CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 321, 55);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&a, TSC_CUPTI_FULL, cache, &overhead, &x), 1);
    CUpti_ActivityAPI q = api_rec(CUPTI_ACTIVITY_KIND_DRIVER,
                                  CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 322, 56);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&q, TSC_CUPTI_FULL, cache, &overhead, &x), 0);
    const tsc_corr_entry *ce = tsc_corr_get(cache, 322);
    assert_non_null(ce);
    assert_int_equal(ce->tid, 56);
    assert_int_equal(ce->domain, TSC_API_DRIVER);

    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.start = T0;
    s.end = T0 + 1;
    s.correlationId = 321;
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&s, TSC_CUPTI_FULL, cache, &overhead, &x), 1);
    assert_int_equal(x.desc.sync.type, TSC_SYNC_DEVICE);
    assert_int_equal(x.desc.sync.tid, 55);

    CUpti_ActivityOverhead3 o;
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.start = T0;
    o.end = T0 + 2500;
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&o, TSC_CUPTI_FULL, cache, &overhead, &x), 0);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&o, TSC_CUPTI_FULL, cache, &overhead, &x), 0);
    assert_int_equal(overhead, 5000);
    assert_int_equal(tsc_xlate_record((CUpti_Activity *)&o, TSC_CUPTI_FULL, cache, NULL, &x), 0);

    CUpti_Activity other = {.kind = CUPTI_ACTIVITY_KIND_MARKER};
    assert_int_equal(tsc_xlate_record(&other, TSC_CUPTI_FULL, cache, &overhead, &x), 0);
    assert_int_equal(tsc_xlate_record(NULL, TSC_CUPTI_FULL, cache, &overhead, &x), 0);
    test_free(cache);
}

static void corr_cache_behaviour(void **state)
{
    (void)state;
    tsc_corr_cache *c = test_malloc(sizeof *c);
    tsc_corr_clear(c);
    assert_null(tsc_corr_get(c, 1));
    assert_null(tsc_corr_get(c, 0));
    tsc_corr_put(c, 0, 9, 1, 1); /* id 0 is never stored */
    assert_null(tsc_corr_get(c, 0));
    tsc_corr_put(c, 10, 100, TSC_API_RUNTIME, 505);
    const tsc_corr_entry *e = tsc_corr_get(c, 10);
    assert_non_null(e);
    assert_int_equal(e->tid, 100);
    assert_int_equal(e->cbid, 505);
    /* A colliding id evicts the older one; no false hit. */
    tsc_corr_put(c, 10 + TSC_CORR_CACHE_SLOTS, 200, TSC_API_DRIVER, 652);
    assert_null(tsc_corr_get(c, 10));
    assert_int_equal(tsc_corr_get(c, 10 + TSC_CORR_CACHE_SLOTS)->tid, 200);
    test_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernel_record),    cmocka_unit_test(memcpy_directions),
        cmocka_unit_test(p2p_record),       cmocka_unit_test(memset_record),
        cmocka_unit_test(sync_records),     cmocka_unit_test(api_records),
        cmocka_unit_test(extcorr_records),  cmocka_unit_test(nccl_kernel_names),
        cmocka_unit_test(dispatch),         cmocka_unit_test(corr_cache_behaviour),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
