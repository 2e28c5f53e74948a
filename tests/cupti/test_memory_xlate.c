/* Translation of CUPTI memory records and VMM calls (memory_xlate.h),
 * built by hand: every field that reaches the dump, every record that
 * must be skipped, and the VMM handle table under collisions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "memory_xlate.h"

#define T0 1763700000000000000ull

static CUpti_ActivityMemory4 mem2(CUpti_ActivityMemoryOperationType op, int async)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = op;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 77;
    m.address = 0x7f1200000000ull;
    m.bytes = 2ull << 30;
    m.timestamp = T0 + 123;
    m.deviceId = 5;
    m.streamId = async ? 13 : CUPTI_INVALID_STREAM_ID;
    m.isAsync = (uint32_t)async;
    if (async) {
        m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        m.memoryPoolConfig.address = 0x7f0000000000ull;
        m.memoryPoolConfig.pool.size = 6ull << 30;
        m.memoryPoolConfig.utilizedSize = 2ull << 30;
    }
    return m;
}

static void malloc_and_free(void **state)
{
    (void)state;
    tsc_xrec x[TSC_MEM_XREC_MAX];
    CUpti_ActivityMemory4 m = mem2(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0);
    assert_int_equal(tsc_xlate_memory_record((const CUpti_Activity *)&m, x), 1);
    assert_int_equal(x[0].ev_kind, TSC_EV_MEM_ALLOC);
    assert_int_equal(x[0].desc_type, TSC_DESC_MEM);
    assert_int_equal(x[0].desc_len, sizeof(tsc_desc_mem));
    assert_int_equal(x[0].start_ns, T0 + 123);
    assert_int_equal(x[0].end_ns, T0 + 123);
    assert_int_equal(x[0].val, 2ull << 30);
    assert_int_equal(x[0].desc.mem.source, TSC_MEM_SRC_MALLOC);
    assert_int_equal(x[0].desc.mem.mem_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(x[0].desc.mem.device, 5);
    assert_int_equal(x[0].desc.mem.stream, 0); /* CUPTI_INVALID_STREAM_ID */
    assert_int_equal(x[0].desc.mem.pool, 0);
    assert_null(x[0].name);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    assert_int_equal(tsc_xlate_memory2(&m, x), 1);
    assert_int_equal(x[0].ev_kind, TSC_EV_MEM_FREE);
    assert_int_equal(x[0].val, 2ull << 30);
}

static void async_reports_pool_size(void **state)
{
    (void)state;
    tsc_xrec x[TSC_MEM_XREC_MAX];
    CUpti_ActivityMemory4 m = mem2(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 1);
    assert_int_equal(tsc_xlate_memory2(&m, x), 2);
    assert_int_equal(x[0].ev_kind, TSC_EV_MEM_ALLOC);
    assert_int_equal(x[0].desc.mem.source, TSC_MEM_SRC_ASYNC);
    assert_int_equal(x[0].desc.mem.stream, 13);
    assert_int_equal(x[0].desc.mem.pool, 0x7f0000000000ull);
    assert_int_equal(x[0].desc.mem.pool_type, CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
    assert_int_equal(x[1].ev_kind, TSC_EV_MEM_POOL);
    assert_int_equal(x[1].flags, TSC_MEM_POOL_USAGE);
    assert_int_equal(x[1].val, 6ull << 30);
    assert_int_equal(x[1].desc.mem.source, TSC_MEM_SRC_POOL);
    assert_int_equal(x[1].desc.mem.pool, 0x7f0000000000ull);
    assert_int_equal(x[1].desc.mem.stream, 0);
    assert_int_equal(x[1].start_ns, T0 + 123);
    /* Imported pool: its size field is a process id, not reported. */
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
    assert_int_equal(tsc_xlate_memory2(&m, x), 1);
    assert_int_equal(x[0].desc.mem.pool_type, CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED);
}

static void skipped_records(void **state)
{
    (void)state;
    tsc_xrec x[TSC_MEM_XREC_MAX];
    CUpti_ActivityMemory4 m = mem2(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID, 0);
    assert_int_equal(tsc_xlate_memory2(&m, x), 0);
    m = mem2(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0);
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED; /* cudaHostAlloc: host memory */
    assert_int_equal(tsc_xlate_memory2(&m, x), 0);
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    assert_int_equal(tsc_xlate_memory2(&m, x), 0);
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC; /* __device__ variables: kept */
    assert_int_equal(tsc_xlate_memory2(&m, x), 1);
    m.timestamp = 0;
    assert_int_equal(tsc_xlate_memory2(&m, x), 0);
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    assert_int_equal(tsc_xlate_memory_record((const CUpti_Activity *)&k, x), 0);
    assert_false(tsc_is_memory_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    assert_true(tsc_is_memory_kind(CUPTI_ACTIVITY_KIND_MEMORY2));
    assert_true(tsc_is_memory_kind(CUPTI_ACTIVITY_KIND_MEMORY_POOL));
    assert_int_equal(tsc_xlate_memory_record(NULL, x), 0);
}

static CUpti_ActivityMemoryPool3 pool(CUpti_ActivityMemoryPoolOperationType op)
{
    CUpti_ActivityMemoryPool3 p;
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    p.memoryPoolOperationType = op;
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p.deviceId = 2;
    p.address = 0x7e0000000000ull;
    p.size = 512ull << 20;
    p.timestamp = T0 + 9;
    return p;
}

static void pool_records(void **state)
{
    (void)state;
    tsc_xrec x[TSC_MEM_XREC_MAX];
    static const struct {
        CUpti_ActivityMemoryPoolOperationType op;
        uint8_t flags;
        uint64_t val;
    } cases[] = {
        {CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, TSC_MEM_POOL_CREATED, 512ull << 20},
        {CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, TSC_MEM_POOL_TRIMMED, 512ull << 20},
        {CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, TSC_MEM_POOL_DESTROYED, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUpti_ActivityMemoryPool3 p = pool(cases[i].op);
        assert_int_equal(tsc_xlate_memory_record((const CUpti_Activity *)&p, x), 1);
        assert_int_equal(x[0].ev_kind, TSC_EV_MEM_POOL);
        assert_int_equal(x[0].flags, cases[i].flags);
        assert_int_equal(x[0].val, cases[i].val);
        assert_int_equal(x[0].start_ns, T0 + 9);
        assert_int_equal(x[0].desc.mem.source, TSC_MEM_SRC_POOL);
        assert_int_equal(x[0].desc.mem.device, 2);
        assert_int_equal(x[0].desc.mem.pool, 0x7e0000000000ull);
    }
    CUpti_ActivityMemoryPool3 p = pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID);
    assert_int_equal(tsc_xlate_memory_pool(&p, x), 0);
    p = pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED);
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
    assert_int_equal(tsc_xlate_memory_pool(&p, x), 0);
    p = pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED);
    p.isManagedPool = 1;
    assert_int_equal(tsc_xlate_memory_pool(&p, x), 0);
}

static void vmm_records(void **state)
{
    (void)state;
    tsc_xrec x;
    assert_int_equal(tsc_xlate_vmm(0, TSC_MEM_SRC_VMM, 20ull << 20, 1, T0, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_MEM_ALLOC);
    assert_int_equal(x.desc.mem.source, TSC_MEM_SRC_VMM);
    assert_int_equal(x.desc.mem.device, 1);
    assert_int_equal(x.val, 20ull << 20);
    assert_int_equal(tsc_xlate_vmm(1, TSC_MEM_SRC_VMM, 20ull << 20, 1, T0 + 1, &x), 1);
    assert_int_equal(x.ev_kind, TSC_EV_MEM_FREE);
    assert_int_equal(tsc_xlate_vmm(1, TSC_MEM_SRC_VMM, 0, 1, T0 + 1, &x), 0);
}

static tsc_vmm_table table;

/* A handle's size, device and source, as tsc_vmm_put takes them. */
static tsc_vmm_entry entry(uint64_t bytes, uint32_t device, uint8_t source)
{
    return (tsc_vmm_entry){.bytes = bytes, .device = device, .source = source};
}

static void vmm_table(void **state)
{
    (void)state;
    memset(&table, 0, sizeof table);
    tsc_vmm_entry e = entry(1, 0, TSC_MEM_SRC_VMM), got;
    assert_int_equal(tsc_vmm_put(&table, 0, &e), -1);
    assert_int_equal(tsc_vmm_take(&table, 42, &got), 0);
    /* Many handles (clusters form), then take every other one and check
     * that each remaining one is still found with its size, device and
     * source. */
    const uint64_t n = 5000;
    for (uint64_t h = 1; h <= n; h++) {
        e = entry(h, (uint32_t)(h % 8), h % 3 ? TSC_MEM_SRC_VMM : TSC_MEM_SRC_NCCL);
        assert_int_equal(tsc_vmm_put(&table, h * 0x200000ull, &e), 0);
    }
    assert_int_equal(table.n, n);
    for (uint64_t h = 1; h <= n; h += 2) {
        assert_int_equal(tsc_vmm_take(&table, h * 0x200000ull, &got), 1);
        assert_int_equal(got.bytes, h);
        assert_int_equal(got.device, h % 8);
        assert_int_equal(got.source, h % 3 ? TSC_MEM_SRC_VMM : TSC_MEM_SRC_NCCL);
    }
    for (uint64_t h = 2; h <= n; h += 2) {
        assert_int_equal(tsc_vmm_take(&table, h * 0x200000ull, &got), 1);
        assert_int_equal(got.bytes, h);
        assert_int_equal(got.source, h % 3 ? TSC_MEM_SRC_VMM : TSC_MEM_SRC_NCCL);
    }
    assert_int_equal(table.n, 0);
    for (size_t i = 0; i < TSC_VMM_SLOTS; i++)
        assert_int_equal(table.handle[i], 0);
    /* Full: refuses instead of growing. */
    for (uint64_t h = 1; h < TSC_VMM_SLOTS; h++) {
        e = entry(h, 0, TSC_MEM_SRC_VMM);
        assert_int_equal(tsc_vmm_put(&table, h, &e), 0);
    }
    e = entry(1, 0, TSC_MEM_SRC_VMM);
    assert_int_equal(tsc_vmm_put(&table, TSC_VMM_SLOTS + 7, &e), -1);
    assert_int_equal(tsc_vmm_take(&table, 777, &got), 1);
    assert_int_equal(got.bytes, 777);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malloc_and_free),
        cmocka_unit_test(async_reports_pool_size),
        cmocka_unit_test(skipped_records),
        cmocka_unit_test(pool_records),
        cmocka_unit_test(vmm_records),
        cmocka_unit_test(vmm_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
