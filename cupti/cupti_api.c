/* Loading libcupti at run time; see cupti_api.h. */
#include "cupti_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *open_cupti(void);

void *tsc_cupti_open(void)
{
    void *old = dlopen("libcupti.so.12", RTLD_NOW | RTLD_NOLOAD);
    if (old != NULL) {
        dlclose(old);
        return NULL;
    }
    return open_cupti();
}

static void *open_cupti(void)
{
    static const char *const sonames[] = {"libcupti.so.13", "libcupti.so"};
    /* A copy the application already loaded (PyTorch links one) must be
     * the one we talk to: two CUPTI instances in one process fight over the
     * driver's profiling hooks. */
    for (size_t i = 0; i < 2; i++) {
        void *h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
        if (h)
            return h;
    }
    for (size_t i = 0; i < 2; i++) {
        void *h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    static const char *const subdirs[] = {"extras/CUPTI/lib64", "lib64", "targets/x86_64-linux/lib",
                                          "targets/sbsa-linux/lib"};
    for (size_t r = 0; r < 3; r++) {
        if (roots[r] == NULL || roots[r][0] == '\0')
            continue;
        for (size_t s = 0; s < sizeof subdirs / sizeof subdirs[0]; s++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s/libcupti.so", roots[r], subdirs[s]);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
        }
    }
    return NULL;
}

int tsc_cupti_api_load(tsc_cupti_api *api, const char **why)
{
    memset(api, 0, sizeof *api);
    /* A CUDA 12 build of PyTorch brings its own CUDA 12 CUPTI, whose
     * records have other layouts; loading ours beside it would put two
     * CUPTIs in one process. */
    void *old = dlopen("libcupti.so.12", RTLD_NOW | RTLD_NOLOAD);
    if (old != NULL) {
        dlclose(old);
        *why = "this process uses CUDA 12's CUPTI (libcupti.so.12); tscope reads CUDA 13 records only";
        return -1;
    }
    api->handle = open_cupti();
    if (api->handle == NULL) {
        *why = "libcupti not found (set CUDA_HOME or LD_LIBRARY_PATH)";
        return -1;
    }
#define RESOLVE(field, sym)                                        \
    do {                                                           \
        *(void **)&api->field = dlsym(api->handle, sym);           \
        if (api->field == NULL) {                                  \
            *why = "libcupti lacks " sym;                          \
            return -1;                                             \
        }                                                          \
    } while (0)
    RESOLVE(GetVersion, "cuptiGetVersion");
    RESOLVE(GetResultString, "cuptiGetResultString");
    RESOLVE(Subscribe, "cuptiSubscribe");
    RESOLVE(Unsubscribe, "cuptiUnsubscribe");
    RESOLVE(EnableDomain, "cuptiEnableDomain");
    RESOLVE(ActivityEnable, "cuptiActivityEnable");
    RESOLVE(ActivityDisable, "cuptiActivityDisable");
    RESOLVE(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
    RESOLVE(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
    RESOLVE(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    RESOLVE(ActivityFlushAll, "cuptiActivityFlushAll");
    RESOLVE(ActivityFlushPeriod, "cuptiActivityFlushPeriod");
    RESOLVE(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    RESOLVE(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    RESOLVE(SetThreadIdType, "cuptiSetThreadIdType");
    RESOLVE(GetTimestamp, "cuptiGetTimestamp");
    RESOLVE(PushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId");
    RESOLVE(PopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId");
    RESOLVE(GetDeviceId, "cuptiGetDeviceId");
#undef RESOLVE
    *(void **)&api->EnableCallback = dlsym(api->handle, "cuptiEnableCallback");
    *(void **)&api->GetGraphNodeId = dlsym(api->handle, "cuptiGetGraphNodeId");
    return 0;
}
