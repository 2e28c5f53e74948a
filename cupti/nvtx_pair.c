/* NVTX range pairing; see nvtx_pair.h. */
#include "nvtx_pair.h"

#include <string.h>

void tsc_nvtx_init(tsc_nvtx_pairer *p)
{
    memset(p, 0, sizeof *p);
}

static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t len = src ? strnlen(src, cap - 1) : 0;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

int tsc_nvtx_start(tsc_nvtx_pairer *p, uint32_t id, uint64_t ts, uint32_t tid, const char *name,
                   const char *domain)
{
    if (p->n_open == TSC_NVTX_OPEN_MAX) {
        p->overflow++;
        return -1;
    }
    tsc_nvtx_range *r = &p->open[p->n_open++];
    r->id = id;
    r->tid = tid;
    r->start_ns = ts;
    r->end_ns = 0;
    copy_cut(r->name, sizeof r->name, name);
    copy_cut(r->domain, sizeof r->domain, domain);
    return 0;
}

int tsc_nvtx_end(tsc_nvtx_pairer *p, uint32_t id, uint64_t ts, tsc_nvtx_range *out)
{
    /* Newest first: nested push/pop ranges close in reverse order. */
    for (uint32_t i = p->n_open; i-- > 0;) {
        if (p->open[i].id != id)
            continue;
        *out = p->open[i];
        out->end_ns = ts < out->start_ns ? out->start_ns : ts;
        p->open[i] = p->open[--p->n_open];
        return 1;
    }
    p->unmatched_ends++;
    return 0;
}
