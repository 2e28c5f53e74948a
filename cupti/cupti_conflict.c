/* Noticing another CUPTI client arriving after tscope.
 *
 * Before CUDA 13.3 / driver r610 CUPTI has one subscriber and one pair of
 * activity buffer callbacks per process.  When a tool that starts later
 * (torch.profiler through Kineto, typically) subscribes (cuptiSubscribe,
 * or cuptiSubscribe_v2 that newer Kineto tries first and does not fall
 * back from when it fails), registers buffer callbacks, or installs its
 * own timestamp clock while tscope holds CUPTI, it would fail, silently
 * receive tscope's buffers, or move tscope's records onto its clock.
 * These exported wrappers see that call first: tscope flushes (so every
 * record it keeps is on its own clock), disables its activity kinds,
 * resets what it set, unsubscribes, says so once, and then forwards the
 * call untouched, so the other tool gets a clean CUPTI.  tscope's own
 * CUPTI calls go through pointers taken from libcupti's handle and never
 * come here.  (GUESS to verify on a GPU: PyTorch's libkineto calls these
 * through the dynamic linker, i.e. links libcupti dynamically.)
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "cupti_control.h"
#include "real_sym.h"

#define EXPORT __attribute__((visibility("default")))

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*subscribe_v2_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                       CUpti_SubscriberParams *);
typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*timestamp_fn)(CUpti_TimestampCallbackFunc);

/* "CALL from LIBRARY": the call and the library of the code that made it
 * (libkineto's, nsys's), so the user is told who holds CUPTI. */
static const char *who_called(char *buf, size_t len, const char *call, const void *ret)
{
    Dl_info di;
    const char *lib = dladdr(ret, &di) && di.dli_fname ? di.dli_fname : NULL;
    const char *base = lib ? strrchr(lib, '/') : NULL;
    snprintf(buf, len, "another CUPTI client (%s from %s)", call,
             base ? base + 1 : lib ? lib : "an unknown library");
    return buf;
}

#define YIELD(call)                                                                           \
    do {                                                                                      \
        char who_[320];                                                                       \
        tsc_cupti_yield(who_called(who_, sizeof who_, call, __builtin_return_address(0)));   \
    } while (0)

static tsc_real_fn real_subscribe = TSC_REAL_FN(cuptiSubscribe);
static tsc_real_fn real_subscribe_v2 = TSC_REAL_FN(cuptiSubscribe_v2);
static tsc_real_fn real_register = TSC_REAL_FN(cuptiActivityRegisterCallbacks);
static tsc_real_fn real_timestamp = TSC_REAL_FN(cuptiActivityRegisterTimestampCallback);

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    subscribe_fn real = (subscribe_fn)tsc_real_get(&real_subscribe);
    YIELD("cuptiSubscribe");
    return real ? real(subscriber, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                     CUpti_CallbackFunc callback, void *userdata,
                                     CUpti_SubscriberParams *params)
{
    subscribe_v2_fn real = (subscribe_v2_fn)tsc_real_get(&real_subscribe_v2);
    YIELD("cuptiSubscribe_v2");
    if (real)
        return real(subscriber, callback, userdata, params);
    /* An older CUPTI without _v2: this export must not make the call fail
     * where the application would have found no _v2 and used the first. */
    subscribe_fn v1 = (subscribe_fn)tsc_real_get(&real_subscribe);
    return v1 ? v1(subscriber, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    register_fn real = (register_fn)tsc_real_get(&real_register);
    YIELD("cuptiActivityRegisterCallbacks");
    return real ? real(request, complete) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    timestamp_fn real = (timestamp_fn)tsc_real_get(&real_timestamp);
    YIELD("cuptiActivityRegisterTimestampCallback");
    return real ? real(fn) : CUPTI_ERROR_NOT_INITIALIZED;
}
