/* From a hand-built activity buffer to recorded events and descriptors,
 * through the real sink and a recorder that keeps everything in memory. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "activity_sink.h"
#include "fake_recorder.h"
#include "nccl_launch_gate.h"

#define T0 1763700000000000000ull

/* The "buffer" is an array of record pointers; the iterator mimics
 * cuptiActivityGetNextRecord (NULL asks for the first record). */
static CUptiResult next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    CUpti_Activity **recs = (CUpti_Activity **)(void *)buffer;
    size_t n = valid / sizeof *recs;
    size_t i = 0;
    if (*record != NULL) {
        while (i < n && recs[i] != *record)
            i++;
        i++;
    }
    if (i >= n) {
        *record = NULL;
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    *record = recs[i];
    return CUPTI_SUCCESS;
}

static void run(CUpti_Activity **recs, size_t n)
{
    tsc_sink_buffer((uint8_t *)(void *)recs, n * sizeof *recs, next_record, &tsc_sink_to_ring);
}

/* The final flush: kernels and calls still waiting for a partner. */
static void finish(void)
{
    tsc_sink_finish(&tsc_sink_to_ring);
}

/* The first event of a kind with this val (correlation id), or NULL. */
static const tsc_event *event_with_val(uint8_t kind, uint64_t val)
{
    for (size_t i = 0; i < fake.n_events; i++)
        if (fake.events[i].kind == kind && fake.events[i].val == val)
            return &fake.events[i];
    return NULL;
}

/* The first event of a kind, or NULL. */
static const tsc_event *first_event(uint8_t kind)
{
    for (size_t i = 0; i < fake.n_events; i++)
        if (fake.events[i].kind == kind)
            return &fake.events[i];
    return NULL;
}

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t start, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = start + 1000;
    k.deviceId = 0;
    k.streamId = 7;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 128;
    k.blockY = k.blockZ = 1;
    k.correlationId = corr;
    k.name = name;
    return k;
}

static CUpti_ActivityAPI api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint32_t tid)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.cbid = cbid;
    a.start = T0;
    a.end = T0 + 10;
    a.threadId = tid;
    a.correlationId = corr;
    return a;
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    tsc_sink_reset(TSC_CUPTI_FULL);
    return 0;
}

static void kernels_interned_once(void **state)
{
    (void)state;
    CUpti_ActivityKernel10 k1 = kernel("_Z6gemm_kv", T0 + 100, 1);
    CUpti_ActivityKernel10 k2 = kernel("_Z6gemm_kv", T0 + 2000, 2);
    CUpti_ActivityKernel10 k3 = kernel("_Z7softmaxv", T0 + 4000, 3);
    CUpti_Activity *recs[] = {(CUpti_Activity *)&k1, (CUpti_Activity *)&k2, (CUpti_Activity *)&k3};
    run(recs, 3);
    run(recs, 3); /* a second buffer with the same kernels defines nothing new */
    finish();     /* no launch call came: written alone */
    assert_int_equal(fake_count_events(TSC_EV_KERNEL), 6);
    assert_int_equal(fake_count_descs(TSC_DESC_STRING), 2);
    assert_int_equal(fake_count_descs(TSC_DESC_KERNEL), 2);
    /* Written alone at the end, in no particular order: find them by id. */
    const tsc_event *e = event_with_val(TSC_EV_KERNEL, 1);
    assert_non_null(e);
    assert_int_equal(e->start_ns, T0 + 100);
    assert_int_equal(event_with_val(TSC_EV_KERNEL, 2)->desc, e->desc); /* same launch config */
    assert_int_not_equal(event_with_val(TSC_EV_KERNEL, 3)->desc, e->desc);
    const fake_desc *kd = fake_find_desc(e->desc);
    assert_non_null(kd);
    assert_int_equal(kd->type, TSC_DESC_KERNEL);
    tsc_desc_kernel kdesc;
    memcpy(&kdesc, kd->payload, sizeof kdesc);
    const fake_desc *name = fake_find_desc(kdesc.name);
    assert_non_null(name);
    assert_int_equal(name->type, TSC_DESC_STRING);
    assert_int_equal(name->len, strlen("_Z6gemm_kv"));
    assert_memory_equal(name->payload, "_Z6gemm_kv", name->len);
    assert_int_equal(kdesc.block[0], 128);
    tsc_sink_stats st = tsc_sink_get_stats();
    assert_int_equal(st.records, 6);
    assert_int_equal(st.written, 6);
    assert_int_equal(st.skipped, 0);
}

static size_t own_comm(char *buf, size_t cap)
{
    int fd = open("/proc/thread-self/comm", O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, cap);
    close(fd);
    assert_true(n > 1);
    return (size_t)n - 1; /* newline */
}

static void api_records_and_threads(void **state)
{
    (void)state;
    uint32_t me = (uint32_t)gettid();
    CUpti_ActivityAPI launch =
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 10, me);
    CUpti_ActivityAPI launch2 =
        api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 11, me);
    launch2.start += 100; /* a call after the first one, not around it */
    launch2.end += 100;
    /* A thread that no longer exists: its record is kept, its name is not. */
    CUpti_ActivityAPI gone =
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 12,
            0x3ffffff0u);
    CUpti_ActivityAPI getter =
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 13, me);
    CUpti_Activity *recs[] = {(CUpti_Activity *)&launch, (CUpti_Activity *)&launch2,
                              (CUpti_Activity *)&gone, (CUpti_Activity *)&getter};
    run(recs, 4);
    finish(); /* the launch calls' kernels never came */
    assert_int_equal(fake_count_events(TSC_EV_API), 3);
    assert_int_equal(tsc_sink_get_stats().calls_alone, 2);
    assert_int_equal(fake_count_descs(TSC_DESC_THREAD), 1);
    assert_int_equal(fake_count_descs(TSC_DESC_API), 3);
    /* The thread descriptor names this thread. */
    const fake_desc *td = NULL;
    for (size_t i = 0; i < fake.n_descs; i++)
        if (fake.descs[i].type == TSC_DESC_THREAD)
            td = &fake.descs[i];
    tsc_desc_thread head;
    memcpy(&head, td->payload, sizeof head);
    assert_int_equal(head.tid, me);
    char comm[32];
    size_t len = own_comm(comm, sizeof comm);
    assert_int_equal(head.name_len, len);
    assert_int_equal(td->len, sizeof head + len);
    assert_memory_equal(td->payload + sizeof head, comm, len);
    /* API desc carries name id, domain, cbid and thread. */
    tsc_desc_api ad;
    const tsc_event *first = first_event(TSC_EV_API);
    for (size_t i = 0; i < fake.n_events; i++)
        if (fake.events[i].kind == TSC_EV_API && fake.events[i].val == 10)
            first = &fake.events[i];
    memcpy(&ad, fake_find_desc(first->desc)->payload, sizeof ad);
    assert_int_equal(ad.domain, TSC_API_RUNTIME);
    assert_int_equal(ad.cbid, 505);
    assert_int_equal(ad.tid, me);
    const fake_desc *nm = fake_find_desc(ad.name);
    assert_memory_equal(nm->payload, "__cudaLaunchKernel", nm->len);
    assert_int_equal(nm->len, strlen("__cudaLaunchKernel"));
    assert_int_equal(first->val, 10);
    /* Seen again: no second thread descriptor. */
    run(recs, 2);
    assert_int_equal(fake_count_descs(TSC_DESC_THREAD), 1);
    tsc_sink_stats st = tsc_sink_get_stats();
    assert_int_equal(st.skipped, 1);
}

static void light_mode_and_extcorr(void **state)
{
    (void)state;
    tsc_sink_reset(TSC_CUPTI_LIGHT);
    CUpti_ActivityKernel10 k = kernel("_Z6gemm_kv", T0, 1);
    CUpti_ActivityKernel10 nk = kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", T0 + 5, 2);
    CUpti_ActivityExternalCorrelation ec;
    memset(&ec, 0, sizeof ec);
    ec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    ec.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    ec.externalId = TSC_EXTCORR_ID(4, 9);
    ec.correlationId = 2;
    CUpti_ActivityAPI launch =
        api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 5);
    CUpti_Activity *recs[] = {(CUpti_Activity *)&k, (CUpti_Activity *)&nk, (CUpti_Activity *)&ec,
                              (CUpti_Activity *)&launch};
    run(recs, 4);
    assert_int_equal(fake_count_events(TSC_EV_KERNEL), 1);
    assert_int_equal(fake_count_events(TSC_EV_API), 0);
    assert_int_equal(fake_count_events(TSC_EV_EXTCORR), 1);
    const tsc_event *x = &fake.events[fake.n_events - 1];
    assert_int_equal(x->kind, TSC_EV_EXTCORR);
    assert_int_equal(x->desc, 2);
    assert_int_equal(x->val, TSC_EXTCORR_ID(4, 9));
    assert_int_equal(x->flags, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
    /* The extcorr joins the NCCL kernel by correlation id. */
    assert_int_equal(fake.events[0].val, 2);
}

/* tscope's external id of descriptor `desc` (NCCL_DESC: an NCCL call's,
 * noted as the NCCL wrapper's push notes it; GEMM_DESC: a GEMM's). */
enum { NCCL_DESC = 4, GEMM_DESC = 5 };
static CUpti_ActivityExternalCorrelation tscope_ext(uint32_t desc, uint32_t corr)
{
    CUpti_ActivityExternalCorrelation ec;
    memset(&ec, 0, sizeof ec);
    ec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    ec.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    ec.externalId = TSC_EXTCORR_ID(desc, corr);
    ec.correlationId = corr;
    return ec;
}

static CUpti_ActivityExternalCorrelation nccl_ext(uint32_t corr)
{
    return tscope_ext(NCCL_DESC, corr);
}

/* Light mode keeps NCCL's cuLaunchKernelEx calls (inside an NCCL call:
 * tscope's external id tied to them, in this buffer before or after the
 * call, or in an earlier buffer) and no other: cuBLASLt's (inside a
 * wrapped GEMM: tscope's id of a GEMM) and Triton's go. */
static void light_mode_keeps_nccl_launches_only(void **state)
{
    (void)state;
    tsc_sink_reset(TSC_CUPTI_LIGHT);
    tsc_gate_note_nccl_desc(NCCL_DESC);
    uint32_t ex = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
    CUpti_ActivityExternalCorrelation early = nccl_ext(20);
    CUpti_Activity *first[] = {(CUpti_Activity *)&early};
    run(first, 1);
    CUpti_ActivityAPI nccl_before = api(CUPTI_ACTIVITY_KIND_DRIVER, ex, 21, 5);
    CUpti_ActivityExternalCorrelation ext_before = nccl_ext(21);
    CUpti_ActivityAPI nccl_after = api(CUPTI_ACTIVITY_KIND_DRIVER, ex, 22, 5);
    CUpti_ActivityExternalCorrelation ext_after = nccl_ext(22);
    CUpti_ActivityAPI nccl_earlier = api(CUPTI_ACTIVITY_KIND_DRIVER, ex, 20, 5);
    CUpti_ActivityAPI cublaslt = api(CUPTI_ACTIVITY_KIND_DRIVER, ex, 23, 5);
    CUpti_ActivityExternalCorrelation in_gemm = tscope_ext(GEMM_DESC, 23);
    CUpti_ActivityAPI triton =
        api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 24, 5);
    /* Kineto's own external ids (CUSTOM0) do not make a call NCCL's. */
    CUpti_ActivityExternalCorrelation kineto = nccl_ext(23);
    kineto.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    CUpti_Activity *recs[] = {(CUpti_Activity *)&ext_before, (CUpti_Activity *)&nccl_before,
                              (CUpti_Activity *)&nccl_after, (CUpti_Activity *)&ext_after,
                              (CUpti_Activity *)&nccl_earlier, (CUpti_Activity *)&kineto,
                              (CUpti_Activity *)&in_gemm, (CUpti_Activity *)&cublaslt,
                              (CUpti_Activity *)&triton};
    run(recs, 9);
    assert_int_equal(fake_count_events(TSC_EV_API), 3);
    assert_non_null(event_with_val(TSC_EV_API, 20));
    assert_non_null(event_with_val(TSC_EV_API, 21));
    assert_non_null(event_with_val(TSC_EV_API, 22));
    assert_null(event_with_val(TSC_EV_API, 23));
    assert_int_equal(tsc_sink_get_stats().light_launches_not_nccl, 1);
    /* Full mode keeps every launch: the gate is light mode's only. */
    tsc_sink_reset(TSC_CUPTI_FULL);
    CUpti_Activity *again[] = {(CUpti_Activity *)&cublaslt};
    run(again, 1);
    finish();
    assert_int_equal(tsc_sink_get_stats().light_launches_not_nccl, 0);
    assert_int_equal(tsc_sink_get_stats().calls_alone, 1);
}

static void recorder_refuses(void **state)
{
    (void)state;
    fake.active = 0;
    CUpti_ActivityKernel10 k = kernel("_Z6gemm_kv", T0, 1);
    CUpti_Activity *recs[] = {(CUpti_Activity *)&k};
    run(recs, 1);
    finish();
    assert_int_equal(fake.n_events, 0);
    assert_int_equal(fake.dropped, 1);
    /* Junk input is ignored. */
    tsc_sink_buffer(NULL, 10, next_record, &tsc_sink_to_ring);
    tsc_sink_buffer((uint8_t *)(void *)recs, 0, next_record, &tsc_sink_to_ring);
    tsc_sink_buffer((uint8_t *)(void *)recs, sizeof recs, NULL, &tsc_sink_to_ring);
    assert_int_equal(fake.dropped, 1);
}

static void explicit_thread_names(void **state)
{
    (void)state;
    tsc_sink_note_thread(99, "pt_autograd_0", &tsc_sink_to_ring);
    tsc_sink_note_thread(99, "other name", &tsc_sink_to_ring);
    tsc_sink_note_thread(0, "ignored", &tsc_sink_to_ring);
    assert_int_equal(fake_count_descs(TSC_DESC_THREAD), 1);
    const fake_desc *td = &fake.descs[0];
    assert_int_equal(td->len, sizeof(tsc_desc_thread) + strlen("pt_autograd_0"));
    assert_memory_equal(td->payload + sizeof(tsc_desc_thread), "pt_autograd_0", 13);
}

static CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts, const char *name)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = (CUpti_ActivityFlag)flags;
    m.timestamp = ts;
    m.id = id;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 1;
    m.objectId.pt.threadId = 0x3ffffff1u; /* not a live thread: no name lookup */
    m.name = name;
    return m;
}

static void nvtx_ranges(void **state)
{
    (void)state;
    CUpti_ActivityMarker2 s1 = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, T0 + 10, "ProfilerStep#7");
    CUpti_ActivityMarker2 i1 = marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 6, T0 + 20, "mark");
    CUpti_ActivityMarker2 e1 = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, T0 + 500, NULL);
    CUpti_ActivityMarker2 e2 = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 77, T0 + 600, NULL);
    CUpti_Activity *first[] = {(CUpti_Activity *)&s1, (CUpti_Activity *)&i1};
    CUpti_Activity *second[] = {(CUpti_Activity *)&e1, (CUpti_Activity *)&e2};
    run(first, 2);   /* START in one buffer ... */
    run(second, 2);  /* ... END in the next */
    assert_int_equal(fake_count_events(TSC_EV_NVTX), 2);
    const tsc_event *inst = &fake.events[0];
    assert_int_equal(inst->start_ns, T0 + 20);
    assert_int_equal(inst->end_ns, T0 + 20);
    const tsc_event *range = &fake.events[1];
    assert_int_equal(range->start_ns, T0 + 10);
    assert_int_equal(range->end_ns, T0 + 500);
    /* The range's thread, and no domain: the user's own range. */
    assert_int_equal(range->val, 0x3ffffff1u);
    const fake_desc *name = fake_find_desc(range->desc);
    assert_int_equal(name->type, TSC_DESC_STRING);
    assert_int_equal(name->len, strlen("ProfilerStep#7"));
    assert_memory_equal(name->payload, "ProfilerStep#7", name->len);
    tsc_sink_stats st = tsc_sink_get_stats();
    assert_int_equal(st.written, 2);
    assert_int_equal(st.skipped, 2); /* the START and the unmatched END */
}

/* Memory records reach the recorder through the sink: an async
 * allocation gives two events sharing nothing but their time, and the
 * descriptors are interned (two plain allocations share one). */
static void memory_records(void **state)
{
    (void)state;
    CUpti_ActivityMemory4 a, b, c;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    a.bytes = 4096;
    a.timestamp = T0 + 10;
    a.streamId = CUPTI_INVALID_STREAM_ID;
    b = a;
    b.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    b.timestamp = T0 + 20;
    c = a;
    c.isAsync = 1;
    c.streamId = 3;
    c.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    c.memoryPoolConfig.address = 0x1000;
    c.memoryPoolConfig.pool.size = 1 << 20;
    CUpti_Activity *recs[] = {(CUpti_Activity *)&a, (CUpti_Activity *)&b,
                              (CUpti_Activity *)&c};
    run(recs, 3);
    assert_int_equal(fake.n_events, 4);
    assert_int_equal(fake_count_events(TSC_EV_MEM_ALLOC), 2);
    assert_int_equal(fake_count_events(TSC_EV_MEM_FREE), 1);
    assert_int_equal(fake_count_events(TSC_EV_MEM_POOL), 1);
    assert_int_equal(fake.events[0].desc, fake.events[1].desc);
    assert_int_equal(fake_count_descs(TSC_DESC_MEM), 3); /* malloc, async, pool */
    assert_int_equal(fake.events[3].val, 1 << 20);
    tsc_sink_stats st = tsc_sink_get_stats();
    assert_int_equal(st.written, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(kernels_interned_once, setup),
        cmocka_unit_test_setup(api_records_and_threads, setup),
        cmocka_unit_test_setup(light_mode_and_extcorr, setup),
        cmocka_unit_test_setup(light_mode_keeps_nccl_launches_only, setup),
        cmocka_unit_test_setup(recorder_refuses, setup),
        cmocka_unit_test_setup(explicit_thread_names, setup),
        cmocka_unit_test_setup(nvtx_ranges, setup),
        cmocka_unit_test_setup(memory_records, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
