/* The cross-rank pass's members, compact.  An instance's members follow
 * each other in rank order, each as varints:
 *   rank - the previous member's rank - 1   (0 for the next rank: one byte)
 *   arrive - the previous member's arrive   (ranks arrive within micro-
 *                                            to milliseconds of each other)
 *   end - arrive
 *   gap + 1, 0 when unknown
 * on each rank's own clock; xr_members adds the rank's clock offset once
 * the clocks are aligned (the bytes are never rewritten). */
#include "util/varint.h"
#include "xr_internal.h"

size_t xr_member_put(unsigned char *p, const xr_member *m, const xr_member *prev)
{
    unsigned char tmp[XR_MEMBER_MAX];
    tsa_bytes b = {p ? p : tmp, 0, XR_MEMBER_MAX};
    tsa_bytes_varint(&b, (uint64_t)((int64_t)m->rank - prev->rank - 1));
    tsa_bytes_svarint(&b, tsa_wrap_sub(m->arrive, prev->arrive));
    tsa_bytes_svarint(&b, tsa_wrap_sub(m->end, m->arrive));
    tsa_bytes_varint(&b, m->gap == XR_GAP_UNKNOWN ? 0 : (uint64_t)m->gap + 1);
    return b.len;
}

void xr_members(const xr_ctx *c, const xr_instance *in, xr_member *out)
{
    const unsigned char *p = c->mem + in->first, *end = c->mem + c->mem_len;
    xr_member prev = {.rank = -1};
    for (uint32_t j = 0; j < in->n; j++) {
        uint64_t drank, gap;
        int64_t darrive, dend;
        /* bytes this pass wrote itself: no damaged input can reach them */
        tsa_varint_get(&p, end, &drank);
        tsa_svarint_get(&p, end, &darrive);
        tsa_svarint_get(&p, end, &dend);
        tsa_varint_get(&p, end, &gap);
        xr_member *m = &out[j];
        m->rank = (int32_t)(prev.rank + 1 + (int64_t)drank);
        m->arrive = tsa_wrap_add(prev.arrive, darrive);
        m->end = tsa_wrap_add(m->arrive, dend);
        m->gap = gap ? (int64_t)(gap - 1) : XR_GAP_UNKNOWN;
        prev = *m;
        if (c->aligned) {
            m->arrive += c->offset[m->rank];
            m->end += c->offset[m->rank];
        }
    }
}
