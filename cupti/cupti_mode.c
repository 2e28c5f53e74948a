/* Environment parsing for the GPU capture; see cupti_mode.h. */
#include "cupti_mode.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

tsc_cupti_mode tsc_cupti_mode_parse(const char *value, int *unknown)
{
    if (unknown)
        *unknown = 0;
    if (value == NULL || value[0] == '\0')
        return TSC_CUPTI_FULL;
    static const char *const off[] = {"off", "0", "no", "false", "none"};
    static const char *const full[] = {"full", "on", "1", "yes", "true"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcasecmp(value, off[i]) == 0)
            return TSC_CUPTI_OFF;
    for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
        if (strcasecmp(value, full[i]) == 0)
            return TSC_CUPTI_FULL;
    if (strcasecmp(value, "light") == 0)
        return TSC_CUPTI_LIGHT;
    if (unknown)
        *unknown = 1;
    return TSC_CUPTI_FULL;
}

const char *tsc_cupti_mode_name(tsc_cupti_mode m)
{
    switch (m) {
    case TSC_CUPTI_OFF: return "off";
    case TSC_CUPTI_LIGHT: return "light";
    case TSC_CUPTI_FULL: return "full";
    }
    return "unknown";
}

static const char *base_name(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

tsc_inject_action tsc_inject_decide(const char *current, tsc_cupti_mode mode,
                                    const char *self_path)
{
    if (mode == TSC_CUPTI_OFF)
        return TSC_INJECT_DISABLED;
    int have_self = self_path != NULL && self_path[0] != '\0';
    if (current != NULL && current[0] != '\0') {
        if (have_self && (strcmp(current, self_path) == 0 ||
                          strcmp(base_name(current), base_name(self_path)) == 0))
            return TSC_INJECT_ALREADY_OURS;
        return TSC_INJECT_FOREIGN;
    }
    return have_self ? TSC_INJECT_SET : TSC_INJECT_NO_SELF;
}

int tsc_cupti_version_supported(uint32_t runtime, uint32_t compiled)
{
    uint32_t major = compiled / 10000u;
    return runtime / 10000u == major && runtime >= major * 10000u;
}

int tsc_nvtx_wanted(const char *tscope_nvtx, const char *nvtx_injection, tsc_cupti_mode mode)
{
    if (mode == TSC_CUPTI_OFF)
        return 0;
    if (nvtx_injection != NULL && nvtx_injection[0] != '\0')
        return 0;
    if (tscope_nvtx != NULL && tsc_cupti_mode_parse(tscope_nvtx, NULL) == TSC_CUPTI_OFF)
        return 0;
    return 1;
}
