/* Device memory capture inside the CUPTI session (format 1.1 records):
 * CUPTI's MEMORY2 and MEMORY_POOL activity records (cudaMalloc/cudaFree,
 * cuMemAlloc/cuMemFree, cudaMallocAsync/cudaFreeAsync and their pools),
 * driver callbacks on cuMemCreate/cuMemRelease (the physical memory behind
 * VMM mappings: PyTorch's expandable segments), and cuMemGetInfo once as
 * metadata.  Each part that CUPTI or the driver refuses degrades to
 * "not available" (the mem_capture metadata key says which); the job and
 * the rest of the capture go on. */
#ifndef TSC_MEMORY_CAPTURE_H
#define TSC_MEMORY_CAPTURE_H

#include <cupti.h>

#include "cupti_api.h"

/* Enable the records and callbacks; writes TSC_META_MEM_CAPTURE. */
void tsc_mem_capture_start(const tsc_cupti_api *api, CUpti_SubscriberHandle sub);
/* Disable them (yield to another client, or stop). */
void tsc_mem_capture_stop(void);
/* Driver-API callback (CUPTI_CB_DOMAIN_DRIVER_API) from the session's
 * subscriber. */
void tsc_mem_capture_callback(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);
/* cuMemGetInfo of `device`'s primary context, once, if that context is
 * active (never creates one): mem_info_* metadata. */
void tsc_mem_capture_info(int device);

#endif
