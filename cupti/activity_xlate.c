/* CUPTI record -> tscope record; see activity_xlate.h.  Field meanings are
 * in tsc_format.h next to each event kind. */
#include "activity_xlate.h"

#include <string.h>

#include "cbid_filter.h"

static void xrec_init(tsc_xrec *out, uint8_t ev_kind, uint8_t desc_type, uint16_t desc_len)
{
    memset(out, 0, sizeof *out);
    out->ev_kind = ev_kind;
    out->desc_type = desc_type;
    out->desc_len = desc_len;
}

/* GPU activity with start/end: a record with end before start (or a zero
 * start: CUPTI writes 0 for records it could not time) is not written. */
static int times_ok(uint64_t start, uint64_t end)
{
    return start != 0 && end >= start;
}

static uint32_t nonneg32(int32_t v)
{
    return v < 0 ? 0u : (uint32_t)v;
}

/* The span and CUPTI correlation id every timed record carries. */
static void set_span(tsc_xrec *out, uint64_t start, uint64_t end, uint32_t correlation_id)
{
    out->start_ns = start;
    out->end_ns = end;
    out->val = correlation_id;
}

/* A memcpy, peer-to-peer or memset record: what the three share. */
static tsc_desc_copy *copy_rec_init(tsc_xrec *out, uint8_t ev_kind, uint8_t dir,
                                    uint32_t device, uint32_t dst_device, uint32_t stream,
                                    uint64_t bytes)
{
    xrec_init(out, ev_kind, TSC_DESC_COPY, sizeof(tsc_desc_copy));
    tsc_desc_copy *d = &out->desc.copy;
    d->dir = dir;
    d->device = device;
    d->dst_device = dst_device;
    d->stream = stream;
    d->bytes = bytes;
    return d;
}

int tsc_kernel_rec_of(const CUpti_ActivityKernel10 *k, tsc_kernel_rec *out)
{
    if (!times_ok(k->start, k->end))
        return 0;
    out->corr = k->correlationId;
    out->start = k->start;
    out->end = k->end;
    out->graph_node = k->graphNodeId;
    out->name = k->name ? k->name : "<unknown kernel>";
    tsc_desc_kernel *d = &out->desc;
    d->name = 0;
    d->device = k->deviceId;
    d->stream = k->streamId;
    d->grid[0] = nonneg32(k->gridX);
    d->grid[1] = nonneg32(k->gridY);
    d->grid[2] = nonneg32(k->gridZ);
    d->block[0] = nonneg32(k->blockX);
    d->block[1] = nonneg32(k->blockY);
    d->block[2] = nonneg32(k->blockZ);
    d->shared_mem = nonneg32(k->staticSharedMemory) + nonneg32(k->dynamicSharedMemory);
    d->graph_id = k->graphId;
    return 1;
}

void tsc_xrec_of_kernel(const tsc_kernel_rec *k, tsc_xrec *out)
{
    xrec_init(out, TSC_EV_KERNEL, TSC_DESC_KERNEL, sizeof(tsc_desc_kernel));
    out->desc.kernel = k->desc;
    out->name = k->name;
    out->graph_node = k->graph_node;
    set_span(out, k->start, k->end, k->corr);
}

int tsc_xlate_kernel(const CUpti_ActivityKernel10 *k, tsc_xrec *out)
{
    tsc_kernel_rec r;
    if (!tsc_kernel_rec_of(k, &r))
        return 0;
    tsc_xrec_of_kernel(&r, out);
    return 1;
}

/* CUPTI's copy kinds folded into tscope's directions: arrays live on the
 * device, so anything touching an array is a device-side copy. */
static uint8_t copy_dir(uint8_t copy_kind)
{
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return TSC_COPY_H2D;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return TSC_COPY_D2H;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return TSC_COPY_D2D;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return TSC_COPY_H2H;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return TSC_COPY_P2P;
    default:
        return TSC_COPY_OTHER;
    }
}

/* Pinned when the host side of the copy is page-locked: pageable copies
 * are staged and synchronous, a classic data-loading stall. */
static uint8_t host_pinned(uint8_t dir, uint8_t src_kind, uint8_t dst_kind)
{
    uint8_t host = dir == TSC_COPY_H2D ? src_kind : dir == TSC_COPY_D2H ? dst_kind : 0;
    if (dir == TSC_COPY_H2H)
        return src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED &&
               dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    return host == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
}

int tsc_xlate_memcpy(const CUpti_ActivityMemcpy6 *m, tsc_xrec *out)
{
    if (!times_ok(m->start, m->end))
        return 0;
    tsc_desc_copy *d = copy_rec_init(out, TSC_EV_MEMCPY, copy_dir(m->copyKind), m->deviceId,
                                     m->deviceId, m->streamId, m->bytes);
    d->src_kind = m->srcKind;
    d->dst_kind = m->dstKind;
    d->pinned = host_pinned(d->dir, m->srcKind, m->dstKind);
    set_span(out, m->start, m->end, m->correlationId);
    return 1;
}

int tsc_xlate_p2p(const CUpti_ActivityMemcpyPtoP4 *m, tsc_xrec *out)
{
    if (!times_ok(m->start, m->end))
        return 0;
    /* A MEMCPY2 record is peer-to-peer whatever its copyKind says. */
    tsc_desc_copy *d = copy_rec_init(out, TSC_EV_MEMCPY, TSC_COPY_P2P, m->srcDeviceId,
                                     m->dstDeviceId, m->streamId, m->bytes);
    d->src_kind = m->srcKind;
    d->dst_kind = m->dstKind;
    set_span(out, m->start, m->end, m->correlationId);
    return 1;
}

int tsc_xlate_memset(const CUpti_ActivityMemset4 *m, tsc_xrec *out)
{
    if (!times_ok(m->start, m->end))
        return 0;
    tsc_desc_copy *d = copy_rec_init(out, TSC_EV_MEMSET, TSC_COPY_MEMSET, m->deviceId,
                                     m->deviceId, m->streamId, m->bytes);
    d->dst_kind = (uint8_t)m->memoryKind;
    set_span(out, m->start, m->end, m->correlationId);
    return 1;
}

static uint8_t sync_type(uint32_t cupti_type)
{
    switch (cupti_type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return TSC_SYNC_EVENT;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return TSC_SYNC_STREAM_WAIT_EVENT;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return TSC_SYNC_STREAM;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return TSC_SYNC_CONTEXT;
    default: return TSC_SYNC_OTHER;
    }
}

int tsc_xlate_sync(const CUpti_ActivitySynchronization2 *s, const tsc_corr_cache *cache,
                   tsc_xrec *out)
{
    if (!times_ok(s->start, s->end))
        return 0;
    xrec_init(out, TSC_EV_SYNC, TSC_DESC_SYNC, sizeof(tsc_desc_sync));
    tsc_desc_sync *d = &out->desc.sync;
    d->type = sync_type((uint32_t)s->type);
    d->stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
    const tsc_corr_entry *api = cache ? tsc_corr_get(cache, s->correlationId) : NULL;
    if (api != NULL) {
        d->tid = api->tid;
        const tsc_api_entry *e = tsc_api_lookup(api->domain, api->cbid);
        if (d->type == TSC_SYNC_CONTEXT && e != NULL && e->is_device_sync)
            d->type = TSC_SYNC_DEVICE;
    }
    set_span(out, s->start, s->end, s->correlationId);
    out->host_tid = d->tid;
    return 1;
}

int tsc_xlate_api(const CUpti_ActivityAPI *a, uint8_t domain, tsc_cupti_mode mode,
                  tsc_xrec *out)
{
    const tsc_api_entry *e = tsc_api_lookup(domain, a->cbid);
    if (!tsc_api_entry_wanted(e, mode) || !times_ok(a->start, a->end))
        return 0;
    xrec_init(out, TSC_EV_API, TSC_DESC_API, sizeof(tsc_desc_api));
    out->api = e;
    tsc_desc_api *d = &out->desc.api;
    d->domain = domain;
    d->cbid = a->cbid;
    d->tid = a->threadId;
    out->name = e->name;
    set_span(out, a->start, a->end, a->correlationId);
    out->host_tid = a->threadId;
    return 1;
}

int tsc_xlate_extcorr(const CUpti_ActivityExternalCorrelation *e, tsc_xrec *out)
{
    if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 ||
        (e->externalId >> 63) == 0 || e->correlationId == 0)
        return 0;
    xrec_init(out, TSC_EV_EXTCORR, 0, 0);
    out->flags = (uint8_t)e->externalKind;
    out->desc_field = e->correlationId;
    out->val = e->externalId;
    return 1;
}

int tsc_is_nccl_kernel(const char *name)
{
    if (name == NULL)
        return 0;
    const char *p = name;
    /* Skip an Itanium mangling prefix "_Z<len>" (also "_ZN<len>"). */
    if (p[0] == '_' && p[1] == 'Z') {
        p += 2;
        if (*p == 'N')
            p++;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return strncmp(p, "ncclDevKernel_", 14) == 0 || strncmp(p, "ncclKernel_", 11) == 0 ||
           strncmp(p, "ncclSymkDevKernel_", 18) == 0;
}

int tsc_xlate_record(const CUpti_Activity *rec, tsc_cupti_mode mode, tsc_corr_cache *cache,
                     uint64_t *overhead_ns, tsc_xrec *out)
{
    if (rec == NULL || mode == TSC_CUPTI_OFF)
        return 0;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        if (mode == TSC_CUPTI_LIGHT && !tsc_is_nccl_kernel(k->name))
            return 0;
        return tsc_xlate_kernel(k, out);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return tsc_xlate_memcpy((const CUpti_ActivityMemcpy6 *)rec, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return tsc_xlate_p2p((const CUpti_ActivityMemcpyPtoP4 *)rec, out);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return tsc_xlate_memset((const CUpti_ActivityMemset4 *)rec, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return tsc_xlate_sync((const CUpti_ActivitySynchronization2 *)rec, cache, out);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
        uint8_t domain = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? TSC_API_RUNTIME : TSC_API_DRIVER;
        if (cache)
            tsc_corr_put(cache, a->correlationId, a->threadId, domain, a->cbid);
        return tsc_xlate_api(a, domain, mode, out);
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return tsc_xlate_extcorr((const CUpti_ActivityExternalCorrelation *)rec, out);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = (const CUpti_ActivityOverhead3 *)rec;
        if (overhead_ns && o->end > o->start)
            *overhead_ns += o->end - o->start;
        return 0;
    }
    default:
        return 0;
    }
}
