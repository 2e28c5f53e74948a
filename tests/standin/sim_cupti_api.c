/* Entry points of the stand-in CUPTI (libcupti.so.13) with the
 * signatures of the CUDA 13.0 headers; the behaviour they model is
 * described in sim_cupti.c. */
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "sim_cupti_park.h"
#include "sim_cupti_queue.h"
#include "sim_cupti_state.h"
#include "sim_seam.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI stand-in error";
    return CUPTI_SUCCESS;
}

/* --------------------------------------------------------- subscribers */

static CUptiResult subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc fn, void *ud)
{
    atomic_fetch_add(&simc.subscribe_calls, 1);
    if (h == NULL)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&simc.lock);
    if (simc.sub != NULL) {
        pthread_mutex_unlock(&simc.lock);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    simc_subscriber *s = calloc(1, sizeof *s);
    if (s == NULL) {
        pthread_mutex_unlock(&simc.lock);
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    s->fn = fn;
    s->userdata = ud;
    simc.sub = s;
    pthread_mutex_unlock(&simc.lock);
    *h = (CUpti_SubscriberHandle)s;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc fn, void *ud)
{
    return subscribe(h, fn, ud);
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *h, CUpti_CallbackFunc fn, void *ud,
                                     CUpti_SubscriberParams *params)
{
    if (params != NULL && params->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return subscribe(h, fn, ud);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
    pthread_mutex_lock(&simc.lock);
    int ours = simc.sub != NULL && (CUpti_SubscriberHandle)simc.sub == h;
    if (ours) {
        free(simc.sub);
        simc.sub = NULL;
    }
    pthread_mutex_unlock(&simc.lock);
    return ours ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle h,
                                     CUpti_CallbackDomain d)
{
    if ((unsigned)d >= CUPTI_CB_DOMAIN_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&simc.lock);
    int ours = simc.sub != NULL && (CUpti_SubscriberHandle)simc.sub == h;
    if (ours)
        simc.sub->domain_on[d] = enable != 0;
    pthread_mutex_unlock(&simc.lock);
    return ours ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle h,
                                       CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
    if ((unsigned)d >= CUPTI_CB_DOMAIN_SIZE || cbid >= SIMC_MAX_CBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&simc.lock);
    int ours = simc.sub != NULL && (CUpti_SubscriberHandle)simc.sub == h;
    if (ours)
        simc.sub->cbid_on[d][cbid] = enable != 0;
    pthread_mutex_unlock(&simc.lock);
    return ours ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* ------------------------------------------------------------ activity */

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    if ((unsigned)k >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    atomic_store(&simc.kind_on[k], 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    if ((unsigned)k >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    atomic_store(&simc.kind_on[k], 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= SIMC_MAX_CBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&simc.runtime_cbid_on[cbid], enable != 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= SIMC_MAX_CBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&simc.driver_cbid_on[cbid], enable != 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    if (req == NULL || done == NULL)
        return CUPTI_ERROR_INVALID_PARAMETER;
    simq_set_callbacks(req, done);
    simc_start_worker();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    if (!simq_have_callbacks())
        return CUPTI_ERROR_INVALID_OPERATION;
    simq_complete((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) ? SIMQ_FLUSH_FORCED : SIMQ_FLUSH);
    simq_deliver(0);
    simp_flush_ended();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    atomic_store(&simc.flush_period_ms, ms);
    return CUPTI_SUCCESS;
}

/* Records lie one after another, each padded to 8 bytes.  An incomplete
 * device record (a forced flush) is returned with INVALID_KIND, already
 * stepped over, so a reader may go on past it. */
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
    if (buffer == NULL || rec == NULL)
        return CUPTI_ERROR_INVALID_PARAMETER;
    size_t off = 0;
    if (*rec != NULL) {
        size_t cur = (size_t)((uint8_t *)*rec - buffer);
        size_t sz = simq_record_size((*rec)->kind);
        if (sz == 0)
            return CUPTI_ERROR_MAX_LIMIT_REACHED;
        off = cur + ((sz + 7u) & ~(size_t)7u);
    }
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_Activity *a = (CUpti_Activity *)(buffer + off);
    size_t sz = simq_record_size(a->kind);
    if (sz == 0 || off + sz > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = a;
    if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        ((CUpti_ActivityKernel10 *)a)->start == 0)
        return CUPTI_ERROR_INVALID_KIND;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
                                                     size_t *dropped)
{
    (void)stream;
    if (dropped == NULL)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *dropped = simq_take_dropped(ctx);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
    atomic_store(&simc.thread_id_type, (int)t);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *t)
{
    *t = (CUpti_ActivityThreadIdType)atomic_load(&simc.thread_id_type);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
    *ts = simq_now();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    simq_set_timestamp_fn(fn);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k,
                                                          uint64_t id)
{
    if ((unsigned)k >= SIMC_EXT_KINDS || simc_ext_top[k] >= SIMC_EXT_DEPTH)
        return CUPTI_ERROR_INVALID_PARAMETER;
    simc_ext_stack[k][simc_ext_top[k]++] = id;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k,
                                                         uint64_t *last)
{
    if ((unsigned)k >= SIMC_EXT_KINDS || simc_ext_top[k] == 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    uint64_t id = simc_ext_stack[k][--simc_ext_top[k]];
    if (last)
        *last = id;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetDeviceId(CUcontext ctx, uint32_t *dev)
{
    (void)ctx;
    *dev = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
    *id = (uint64_t)(uintptr_t)node;
    return CUPTI_SUCCESS;
}

/* NVTX routing is not modelled: NVTX stays uninstrumented.  Markers are
 * produced directly with sim_cupti_marker. */
EXPORT int InitializeInjectionNvtx2(const void *(*get)(uint32_t))
{
    (void)get;
    return 0;
}

/* Stand-in only: a MARKER record pair as CUPTI writes for an NVTX range of
 * `domain` (NULL: the default domain). */
EXPORT void sim_cupti_marker(const char *domain, const char *name, uint32_t id, uint64_t start,
                             uint64_t end, uint32_t tid)
{
    if (!atomic_load(&simc.kind_on[CUPTI_ACTIVITY_KIND_MARKER]))
        return;
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.id = id;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.threadId = tid;
    m.domain = domain;
    m.name = name;
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m.timestamp = simq_timestamp(start);
    simq_append(NULL, &m, sizeof m);
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    m.name = NULL;
    m.timestamp = simq_timestamp(end);
    simq_append(NULL, &m, sizeof m);
}
