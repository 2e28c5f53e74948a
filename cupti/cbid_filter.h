/* Which runtime/driver API records go into the dump.
 *
 * CUPTI's RUNTIME and DRIVER activity kinds report every API call (getters,
 * attribute queries, allocation...), far more than the analyzer needs.
 * tscope keeps only calls that launch, copy, set or synchronise, because
 * those carry the host thread and host time of the GPU work they start
 * (joined by correlation id).  The table also lists CUDA 13's
 * __cudaLaunchKernel (runtime cbid 505, _ptsz 506: what nvcc's <<<>>> now
 * lowers to) and cuLaunchKernelEx (how NCCL 2.28 launches), which a filter
 * knowing only cudaLaunchKernel would miss.  The capture enables exactly
 * these cbids (cuptiActivityEnableRuntimeApi/DriverApi) so CUPTI never
 * produces the others, and the translation filters again with the same
 * table.
 */
#ifndef TSC_CBID_FILTER_H
#define TSC_CBID_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "cupti_mode.h"

typedef enum tsc_api_class {
    TSC_APICLASS_NONE = 0,    /* not recorded */
    TSC_APICLASS_LAUNCH = 1,  /* kernel or graph launch */
    TSC_APICLASS_COPY = 2,
    TSC_APICLASS_MEMSET = 3,
    TSC_APICLASS_SYNC = 4,
    TSC_APICLASS_NCCL_LAUNCH = 5, /* cuLaunchKernelEx: NCCL's launcher, kept in light mode */
    TSC_APICLASS_GRAPH_LAUNCH = 6, /* every kernel of the graph carries this call's id */
} tsc_api_class;

/* A call whose kernels fold into it (launch_fold.h). */
static inline int tsc_api_class_launches(uint8_t cls)
{
    return cls == TSC_APICLASS_LAUNCH || cls == TSC_APICLASS_NCCL_LAUNCH ||
           cls == TSC_APICLASS_GRAPH_LAUNCH;
}

typedef struct tsc_api_entry {
    uint8_t domain;        /* enum tsc_api_domain */
    uint8_t cls;           /* enum tsc_api_class */
    uint16_t is_device_sync; /* cudaDeviceSynchronize/cuCtxSynchronize */
    uint32_t cbid;
    const char *name;      /* function name without CUPTI's version suffix */
} tsc_api_entry;

/* The entry for (domain, cbid), or NULL when that call is not recorded. */
const tsc_api_entry *tsc_api_lookup(uint8_t domain, uint32_t cbid);

/* 1 when the call is recorded in this mode: full keeps every class; light
 * keeps copies, memsets, syncs and NCCL launches; off keeps nothing. */
int tsc_api_wanted(uint8_t domain, uint32_t cbid, tsc_cupti_mode mode);
/* The same for an entry already looked up (NULL: not recorded). */
int tsc_api_entry_wanted(const tsc_api_entry *e, tsc_cupti_mode mode);

/* The whole table (to enable the cbids one by one). */
const tsc_api_entry *tsc_api_table(size_t *count);

#endif
