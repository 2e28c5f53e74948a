/* Direct-mapped correlation cache; see corr_cache.h. */
#include "corr_cache.h"

#include <string.h>

void tsc_corr_clear(tsc_corr_cache *c)
{
    memset(c, 0, sizeof *c);
}

void tsc_corr_put(tsc_corr_cache *c, uint32_t corr, uint32_t tid, uint8_t domain, uint32_t cbid)
{
    if (corr == 0)
        return;
    tsc_corr_entry *e = &c->slot[corr % TSC_CORR_CACHE_SLOTS];
    e->corr = corr;
    e->tid = tid;
    e->cbid = cbid;
    e->domain = domain;
}

const tsc_corr_entry *tsc_corr_get(const tsc_corr_cache *c, uint32_t corr)
{
    if (corr == 0)
        return NULL;
    const tsc_corr_entry *e = &c->slot[corr % TSC_CORR_CACHE_SLOTS];
    return e->corr == corr ? e : NULL;
}
