/* See gpu_loss.h. */
#include "gpu_loss.h"

#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"

void tsr_gpu_counts_meta(tsr_gpu_counts *c, const char *key, const char *value)
{
    if (!strcmp(key, TSC_META_CUPTI_MODE))
        c->traced = !strcmp(value, "full");
    else if (!strcmp(key, TSC_META_GPU_CAPTURED))
        c->captured = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_GPU_INCOMPLETE))
        c->incomplete = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_GPU_LOST_WRITE))
        c->lost_write = strtoull(value, NULL, 10);
    else if (!strcmp(key, TSC_META_CUPTI_DROPPED_DEVICE))
        c->dropped_device = strtoull(value, NULL, 10);
}

uint64_t tsr_gpu_kernels_lost(const tsr_gpu_counts *c)
{
    if (!c->traced)
        return 0;
    /* An unfinished kernel's call is unmatched too: not counted twice. */
    uint64_t never = c->launches_unmatched > c->captured ? c->launches_unmatched - c->captured : 0;
    return never + c->lost_write;
}

int tsr_is_launch_call(const char *name)
{
    return name != NULL && strstr(name, "Launch") != NULL;
}
