/* Correlation id -> (host thread, API cbid) of recent API records.
 *
 * A CUpti_ActivitySynchronization2 record has no thread id, and CUPTI
 * calls a cudaDeviceSynchronize a context synchronisation.  Its API record
 * (same correlation id) has both, and usually sits just before it in the
 * same buffer, so a small direct-mapped cache of recent API records fills
 * them in.  A miss (the API record in another buffer, or evicted) leaves
 * tid 0: the analyzer can still join by correlation id.  Pure, not
 * thread-safe (the caller locks).
 */
#ifndef TSC_CORR_CACHE_H
#define TSC_CORR_CACHE_H

#include <stdint.h>

#define TSC_CORR_CACHE_SLOTS 4096u

typedef struct tsc_corr_entry {
    uint32_t corr;   /* 0 = empty (CUPTI never uses correlation id 0 for API calls) */
    uint32_t tid;
    uint32_t cbid;
    uint8_t domain;
} tsc_corr_entry;

typedef struct tsc_corr_cache {
    tsc_corr_entry slot[TSC_CORR_CACHE_SLOTS];
} tsc_corr_cache;

void tsc_corr_clear(tsc_corr_cache *c);
void tsc_corr_put(tsc_corr_cache *c, uint32_t corr, uint32_t tid, uint8_t domain, uint32_t cbid);
/* The entry for corr, or NULL on a miss. */
const tsc_corr_entry *tsc_corr_get(const tsc_corr_cache *c, uint32_t corr);

#endif
