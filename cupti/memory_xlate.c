/* CUPTI memory records -> TSC_EV_MEM_*; see memory_xlate.h. */
#include "memory_xlate.h"

#include <string.h>

static tsc_desc_mem *mem_rec_init(tsc_xrec *out, uint8_t ev_kind, uint8_t source,
                                  uint64_t t_ns, uint64_t bytes)
{
    memset(out, 0, sizeof *out);
    out->ev_kind = ev_kind;
    out->desc_type = TSC_DESC_MEM;
    out->desc_len = sizeof(tsc_desc_mem);
    out->start_ns = out->end_ns = t_ns;
    out->val = bytes;
    out->desc.mem.source = source;
    return &out->desc.mem;
}

int tsc_is_memory_kind(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_MEMORY2 || kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL;
}

/* Memory the process holds on the device; pinned or pageable host memory
 * is not reserved GPU memory. */
static int device_kind(uint32_t kind)
{
    return kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
           kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
}

static uint32_t stream_or_zero(uint32_t stream)
{
    return stream == CUPTI_INVALID_STREAM_ID ? 0 : stream;
}

size_t tsc_xlate_memory2(const CUpti_ActivityMemory4 *m, tsc_xrec out[TSC_MEM_XREC_MAX])
{
    uint8_t ev;
    switch (m->memoryOperationType) {
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION: ev = TSC_EV_MEM_ALLOC; break;
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE: ev = TSC_EV_MEM_FREE; break;
    default: return 0;
    }
    if (m->timestamp == 0 || !device_kind((uint32_t)m->memoryKind))
        return 0;
    int async = m->isAsync != 0;
    tsc_desc_mem *d = mem_rec_init(&out[0], ev, async ? TSC_MEM_SRC_ASYNC : TSC_MEM_SRC_MALLOC,
                                   m->timestamp, m->bytes);
    d->mem_kind = (uint8_t)m->memoryKind;
    d->device = m->deviceId;
    d->stream = stream_or_zero(m->streamId);
    if (!async)
        return 1;
    uint32_t pool_type = (uint32_t)m->memoryPoolConfig.memoryPoolType;
    d->pool_type = pool_type <= CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED ? (uint8_t)pool_type : 0;
    d->pool = m->memoryPoolConfig.address;
    /* The pool's size is what the device really gave: only a local pool
     * reports it (an imported pool's field holds a process id). */
    if (pool_type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL || m->memoryPoolConfig.pool.size == 0)
        return 1;
    tsc_desc_mem *p = mem_rec_init(&out[1], TSC_EV_MEM_POOL, TSC_MEM_SRC_POOL, m->timestamp,
                                   m->memoryPoolConfig.pool.size);
    out[1].flags = TSC_MEM_POOL_USAGE;
    p->mem_kind = d->mem_kind;
    p->pool_type = d->pool_type;
    p->device = d->device;
    p->pool = d->pool;
    return 2;
}

size_t tsc_xlate_memory_pool(const CUpti_ActivityMemoryPool3 *p, tsc_xrec out[TSC_MEM_XREC_MAX])
{
    uint8_t op;
    switch (p->memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED: op = TSC_MEM_POOL_CREATED; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: op = TSC_MEM_POOL_DESTROYED; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED: op = TSC_MEM_POOL_TRIMMED; break;
    default: return 0;
    }
    /* Sizes are valid for local pools only; managed pools are not device
     * memory held by this process. */
    if (p->timestamp == 0 || p->memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL ||
        p->isManagedPool)
        return 0;
    uint64_t bytes = op == TSC_MEM_POOL_DESTROYED ? 0 : p->size;
    tsc_desc_mem *d = mem_rec_init(&out[0], TSC_EV_MEM_POOL, TSC_MEM_SRC_POOL, p->timestamp, bytes);
    out[0].flags = op;
    d->mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    d->pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    d->device = p->deviceId;
    d->pool = p->address;
    return 1;
}

size_t tsc_xlate_memory_record(const CUpti_Activity *rec, tsc_xrec out[TSC_MEM_XREC_MAX])
{
    if (rec == NULL)
        return 0;
    if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY2)
        return tsc_xlate_memory2((const CUpti_ActivityMemory4 *)rec, out);
    if (rec->kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL)
        return tsc_xlate_memory_pool((const CUpti_ActivityMemoryPool3 *)rec, out);
    return 0;
}

int tsc_xlate_vmm(int release, uint8_t source, uint64_t bytes, uint32_t device, uint64_t t_ns,
                  tsc_xrec *out)
{
    if (bytes == 0)
        return 0;
    tsc_desc_mem *d = mem_rec_init(out, release ? TSC_EV_MEM_FREE : TSC_EV_MEM_ALLOC, source,
                                   t_ns, bytes);
    d->mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    d->device = device;
    return 1;
}

/* ------------------------------------------------------- handle table */

static size_t home(uint64_t handle)
{
    /* Handles are pointers or small counters: mix before masking. */
    uint64_t h = handle * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 40) & (TSC_VMM_SLOTS - 1);
}

int tsc_vmm_put(tsc_vmm_table *t, uint64_t handle, const tsc_vmm_entry *e)
{
    if (handle == 0 || t->n >= TSC_VMM_SLOTS - 1)
        return -1;
    size_t i = home(handle);
    while (t->handle[i] != 0 && t->handle[i] != handle)
        i = (i + 1) & (TSC_VMM_SLOTS - 1);
    t->n += t->handle[i] == 0;
    t->handle[i] = handle;
    t->bytes[i] = e->bytes;
    t->device[i] = e->device;
    t->source[i] = e->source;
    return 0;
}

int tsc_vmm_take(tsc_vmm_table *t, uint64_t handle, tsc_vmm_entry *e)
{
    if (handle == 0)
        return 0;
    size_t i = home(handle);
    while (t->handle[i] != handle) {
        if (t->handle[i] == 0)
            return 0;
        i = (i + 1) & (TSC_VMM_SLOTS - 1);
    }
    e->bytes = t->bytes[i];
    e->device = t->device[i];
    e->source = t->source[i];
    /* Backward shift: move later entries of the cluster into the hole when
     * their home position allows, so lookups never meet a false gap. */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & (TSC_VMM_SLOTS - 1);
        if (t->handle[j] == 0)
            break;
        size_t h = home(t->handle[j]);
        /* j's entry may fill the hole unless its home lies in (hole, j]. */
        int stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
        if (stays)
            continue;
        t->handle[hole] = t->handle[j];
        t->bytes[hole] = t->bytes[j];
        t->device[hole] = t->device[j];
        t->source[hole] = t->source[j];
        hole = j;
    }
    t->handle[hole] = 0;
    t->n--;
    return 1;
}
