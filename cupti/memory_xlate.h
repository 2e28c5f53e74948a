/* Device memory records: CUPTI MEMORY2 / MEMORY_POOL activity records and
 * the driver's VMM calls (cuMemCreate / cuMemRelease, seen through CUPTI
 * callbacks) translated into TSC_EV_MEM_* events with a TSC_DESC_MEM
 * descriptor (format 1.1).
 *
 * Pure: hand-built CUPTI structs in, tsc_xrec out, no CUPTI call, so every
 * case is unit-tested without a GPU.  memory_capture.c enables the records
 * and installs the callbacks. */
#ifndef TSC_MEMORY_XLATE_H
#define TSC_MEMORY_XLATE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_activity.h>

#include "activity_xlate.h"

/* One CUPTI record gives at most two events: a stream-ordered allocation
 * also reports its pool's size. */
#define TSC_MEM_XREC_MAX 2

/* 1 for the activity kinds tsc_xlate_memory_record handles. */
int tsc_is_memory_kind(CUpti_ActivityKind kind);

/* MEMORY2: device (and device-static) memory only; host allocations and
 * records without a time or operation are skipped.  Returns the count. */
size_t tsc_xlate_memory2(const CUpti_ActivityMemory4 *m, tsc_xrec out[TSC_MEM_XREC_MAX]);
/* MEMORY_POOL: a local pool's creation, trim or destruction. */
size_t tsc_xlate_memory_pool(const CUpti_ActivityMemoryPool3 *p,
                             tsc_xrec out[TSC_MEM_XREC_MAX]);
/* Dispatch on rec->kind; 0 for other kinds. */
size_t tsc_xlate_memory_record(const CUpti_Activity *rec, tsc_xrec out[TSC_MEM_XREC_MAX]);

/* A VMM physical allocation (cuMemCreate) or its release; source
 * TSC_MEM_SRC_VMM (the caching allocator's expandable segments) or
 * TSC_MEM_SRC_NCCL (made inside an NCCL call: NCCL's own buffers); 0 when
 * bytes is 0. */
int tsc_xlate_vmm(int release, uint8_t source, uint64_t bytes, uint32_t device, uint64_t t_ns,
                  tsc_xrec *out);

/* cuMemRelease names only the handle: sizes of live handles, kept from
 * cuMemCreate.  Bounded open addressing (linear probing, deletion by
 * backward shift); a full table refuses, the caller counts the loss. */
#define TSC_VMM_SLOTS 16384u

typedef struct tsc_vmm_table {
    uint64_t handle[TSC_VMM_SLOTS]; /* 0: empty */
    uint64_t bytes[TSC_VMM_SLOTS];
    uint32_t device[TSC_VMM_SLOTS];
    uint8_t source[TSC_VMM_SLOTS];
    size_t n;
} tsc_vmm_table;

/* What a live handle holds. */
typedef struct tsc_vmm_entry {
    uint64_t bytes;
    uint32_t device;
    uint8_t source;      /* enum tsc_mem_source */
} tsc_vmm_entry;

/* 0, or -1 when full (or handle 0). */
int tsc_vmm_put(tsc_vmm_table *t, uint64_t handle, const tsc_vmm_entry *e);
/* Removes the handle; 1 with what it held, 0 when unknown. */
int tsc_vmm_take(tsc_vmm_table *t, uint64_t handle, tsc_vmm_entry *e);

#endif
