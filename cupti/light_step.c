/* Stepping a full-mode capture down to light and back (light_step.h). */
#include "light_step.h"

#include "activity_sink.h"
#include "cbid_filter.h"

/* The API records full mode keeps and light mode does not (kernel and
 * graph launches), switched one by one; where CUPTI refuses (it was
 * enabled by whole domain), the sink's light filter drops them. */
static int switch_launch_records(const tsc_cupti_api *api, int on)
{
    size_t n;
    const tsc_api_entry *t = tsc_api_table(&n);
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        if (tsc_api_entry_wanted(&t[i], TSC_CUPTI_LIGHT))
            continue;
        CUptiResult r = t[i].domain == TSC_API_RUNTIME
                            ? api->ActivityEnableRuntimeApi(t[i].cbid, (uint8_t)on)
                            : api->ActivityEnableDriverApi(t[i].cbid, (uint8_t)on);
        ok &= r == CUPTI_SUCCESS;
    }
    return ok;
}

int tsc_light_step_apply(const tsc_cupti_api *api, int light)
{
    int ok;
    if (light) {
        /* CUPTI first: what it still hands over after this is what was
         * made before, and the fold still pairs those kernels. */
        ok = api->ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
        ok &= switch_launch_records(api, 0);
        tsc_sink_set_light(1);
    } else {
        tsc_sink_set_light(0);
        ok = switch_launch_records(api, 1);
        ok &= api->ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
    }
    return ok ? 0 : -1;
}
