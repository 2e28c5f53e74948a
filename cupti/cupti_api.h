/* The CUPTI entry points tscope uses, resolved with dlsym from a libcupti
 * that is only opened inside InitializeInjection: the preload never links
 * CUPTI, so processes that never start CUDA never load it. */
#ifndef TSC_CUPTI_API_H
#define TSC_CUPTI_API_H

#include <cupti.h>

typedef struct tsc_cupti_api {
    void *handle;
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityFlushPeriod)(uint32_t);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*PushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*PopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*GetDeviceId)(CUcontext, uint32_t *);
    /* Optional (NULL when missing): per-cbid callbacks, for memory_capture.c. */
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
    /* Optional: a graph node's id as kernel records carry it. */
    CUptiResult (*GetGraphNodeId)(CUgraphNode, uint64_t *);
} tsc_cupti_api;

/* Open libcupti (an already loaded copy first, then libcupti.so.13,
 * libcupti.so, $CUDA_HOME/extras/CUPTI/lib64, /usr/local/cuda/...) and
 * resolve every entry point.  0 on success; on failure *why names what
 * was missing. */
int tsc_cupti_api_load(tsc_cupti_api *api, const char **why);

/* The libcupti handle (opened as above, already loaded copy first), or
 * NULL; refuses a process that carries CUDA 12's CUPTI. */
void *tsc_cupti_open(void);

#endif
