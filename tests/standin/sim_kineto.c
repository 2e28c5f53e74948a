/* A second CUPTI client, shaped like torch.profiler's Kineto: linked
 * against libcupti (so its CUPTI calls go through the dynamic linker) and
 * loaded by the stand-in job with RTLD_LOCAL, as libtorch is.  It
 * subscribes (cuptiSubscribe_v2 first, as newer Kineto does), registers
 * its own buffers, enables kernels and runtime calls, and may install a
 * timestamp callback on another clock. */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_SubscriberHandle sub;
static atomic_ullong kernels_seen;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *p)
{
    (void)ud, (void)d, (void)id, (void)p;
}

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *size = 1 << 20;
    *buf = malloc(*size);
    *max = 0;
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                              size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            atomic_fetch_add(&kernels_seen, 1);
    free(buf);
}

/* A clock that is not CLOCK_REALTIME (Kineto's TSC-based one). */
static uint64_t CUPTIAPI other_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Returns the CUptiResult of the subscription. */
EXPORT int sim_kineto_start(int use_v2, int own_clock)
{
    CUptiResult r;
    if (use_v2) {
        CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE};
        r = cuptiSubscribe_v2(&sub, on_cb, NULL, &p);
    } else {
        r = cuptiSubscribe(&sub, on_cb, NULL);
    }
    if (r != CUPTI_SUCCESS)
        return (int)r;
    cuptiActivityRegisterCallbacks(request, complete);
    if (own_clock)
        cuptiActivityRegisterTimestampCallback(other_clock);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    return (int)r;
}

/* Kernel records this client received, after a flush. */
EXPORT unsigned long long sim_kineto_stop(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return atomic_load(&kernels_seen);
}

/* What the client finds set when it took CUPTI over. */
EXPORT int sim_kineto_thread_id_type(void)
{
    CUpti_ActivityThreadIdType t = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
    cuptiGetThreadIdType(&t);
    return (int)t;
}
