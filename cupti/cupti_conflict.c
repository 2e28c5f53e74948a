/* Noticing another CUPTI client arriving after tscope.
 *
 * Before CUDA 13.3 / driver r610 CUPTI has one subscriber and one pair of
 * activity buffer callbacks per process.  When a tool that starts later
 * (torch.profiler through Kineto, typically) calls cuptiSubscribe or
 * cuptiActivityRegisterCallbacks while tscope holds them, it would fail or
 * silently receive tscope's buffers.  These exported wrappers see that
 * call first: tscope flushes, disables its activity kinds and
 * unsubscribes, says so once, and then forwards the call untouched, so
 * the other tool gets a clean CUPTI.  tscope's own CUPTI calls go through
 * pointers taken from libcupti's handle and never come here.  (GUESS to
 * verify on a GPU: PyTorch's libkineto calls these through the dynamic
 * linker, i.e. links libcupti dynamically.)
 */
#include <dlfcn.h>
#include <stddef.h>

#include <cupti.h>

#include "cupti_control.h"

/* The real function: the next definition after this library, or, when
 * libcupti was loaded RTLD_LOCAL (not in the global scope), its own. */
static void *real_cupti(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f != NULL)
        return f;
    static const char *const sonames[] = {"libcupti.so.13", "libcupti.so"};
    for (size_t i = 0; i < 2; i++) {
        void *h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
        if (h != NULL) {
            f = dlsym(h, name);
            dlclose(h);
            if (f != NULL)
                return f;
        }
    }
    return NULL;
}

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);

__attribute__((visibility("default"))) CUptiResult
cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    subscribe_fn real = (subscribe_fn)real_cupti("cuptiSubscribe");
    tsc_cupti_yield("another CUPTI client (cuptiSubscribe)");
    if (real == NULL)
        return CUPTI_ERROR_NOT_INITIALIZED;
    return real(subscriber, callback, userdata);
}

__attribute__((visibility("default"))) CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                               CUpti_BuffersCallbackCompleteFunc complete)
{
    register_fn real = (register_fn)real_cupti("cuptiActivityRegisterCallbacks");
    tsc_cupti_yield("another CUPTI client (cuptiActivityRegisterCallbacks)");
    if (real == NULL)
        return CUPTI_ERROR_NOT_INITIALIZED;
    return real(request, complete);
}
