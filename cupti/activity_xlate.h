/* Translation of CUPTI 13 activity records into tscope records.
 *
 * Pure functions: they read hand-buildable CUPTI structs and call nothing
 * in CUPTI, so every kind is unit-tested without a GPU.  The recorder side
 * (interning names and descriptors, appending events) is activity_sink.c.
 */
#ifndef TSC_ACTIVITY_XLATE_H
#define TSC_ACTIVITY_XLATE_H

#include <stdint.h>

#include <cupti_activity.h>

#include "corr_cache.h"
#include "cupti_mode.h"
#include "tsc_format.h"

/* One translated record: an event plus the descriptor it refers to.  The
 * descriptor's string field (kernel name, API name) is filled by the sink
 * after interning `name`; here it is 0. */
typedef struct tsc_xrec {
    uint8_t ev_kind;     /* TSC_EV_* */
    uint8_t flags;
    uint16_t aux;
    uint8_t desc_type;   /* TSC_DESC_*, 0 when the event needs no descriptor */
    uint16_t desc_len;
    union {
        tsc_desc_kernel kernel;
        tsc_desc_copy copy;
        tsc_desc_sync sync;
        tsc_desc_api api;
        tsc_desc_mem mem;        /* memory_xlate.h */
    } desc;
    const char *name;    /* kernel or API name to intern, or NULL */
    uint32_t desc_field; /* event desc when desc_type == 0 (EXTCORR: correlation id) */
    uint64_t start_ns, end_ns, val;
    uint32_t host_tid;   /* API records: the calling thread (for TSC_DESC_THREAD) */
    uint64_t graph_node; /* kernels launched from a graph: CUPTI's node id, else 0 */
    const struct tsc_api_entry *api; /* API records: the call's entry in cbid_filter.c */
} tsc_xrec;

/* A kernel as the launch fold keeps it until its call comes: less than a
 * tsc_xrec, everything the dump needs.  desc.name is filled later. */
typedef struct tsc_kernel_rec {
    uint32_t corr;
    uint64_t start, end;
    uint64_t graph_node;       /* CUPTI graph node id, 0 when not from a graph */
    const char *name;          /* CUPTI's (stable) name string */
    tsc_desc_kernel desc;
} tsc_kernel_rec;

/* 1 when usable (timed: start set, end not before start). */
int tsc_kernel_rec_of(const CUpti_ActivityKernel10 *k, tsc_kernel_rec *out);
/* The same kernel as a record to write on its own. */
void tsc_xrec_of_kernel(const tsc_kernel_rec *k, tsc_xrec *out);

/* Each returns 1 when `out` holds a record to write, 0 when the record is
 * skipped (filtered, or malformed: end before start, zero kind). */
int tsc_xlate_kernel(const CUpti_ActivityKernel10 *k, tsc_xrec *out);
int tsc_xlate_memcpy(const CUpti_ActivityMemcpy6 *m, tsc_xrec *out);
int tsc_xlate_p2p(const CUpti_ActivityMemcpyPtoP4 *m, tsc_xrec *out);
int tsc_xlate_memset(const CUpti_ActivityMemset4 *m, tsc_xrec *out);
/* cache: API records seen so far (may be NULL): gives the sync's thread
 * and tells a device sync from a context sync. */
int tsc_xlate_sync(const CUpti_ActivitySynchronization2 *s, const tsc_corr_cache *cache,
                   tsc_xrec *out);
/* domain: TSC_API_RUNTIME or TSC_API_DRIVER.  Filtered with cbid_filter. */
int tsc_xlate_api(const CUpti_ActivityAPI *a, uint8_t domain, tsc_cupti_mode mode,
                  tsc_xrec *out);
/* Only tscope's own ids (CUSTOM2 kind, bit 63 set) are kept. */
int tsc_xlate_extcorr(const CUpti_ActivityExternalCorrelation *e, tsc_xrec *out);

/* NCCL's kernels by name: ncclDevKernel_*, ncclKernel_*, ncclSymkDevKernel_*
 * (mangled or not).  Used to keep NCCL kernels when others are dropped. */
int tsc_is_nccl_kernel(const char *name);

/* Dispatch on rec->kind.  Kernels are dropped in light mode.  API records
 * are put into `cache` (if not NULL) before filtering so syncs can find
 * them.  Unknown kinds and OVERHEAD records give 0; *overhead_ns (if not
 * NULL) is increased by the duration of OVERHEAD records. */
int tsc_xlate_record(const CUpti_Activity *rec, tsc_cupti_mode mode, tsc_corr_cache *cache,
                     uint64_t *overhead_ns, tsc_xrec *out);

#endif
