/* A lean rank's steps, compact (lean_steps.h).  Per step, as varints
 * (signed ones zig-zagged, differences modulo 2^64):
 *   start - the previous step's end (0 before the first)
 *   end - start, compute_ns, comm_ns, phase_ns[0..TSA_PHASE_COUNT)
 *   first_nccl - (the previous step's first_nccl + n_nccl), n_nccl, warmup */
#include "lean_steps.h"

#include <stdlib.h>
#include <string.h>

tsa_lean_steps *tsa_lean_steps_encode(const tsa_step *steps, size_t n)
{
    tsa_lean_steps *ls = calloc(1, sizeof *ls);
    if (!ls)
        return NULL;
    ls->n = n;
    int64_t prev_end = 0;
    uint64_t next_call = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const tsa_step *s = &steps[i];
        tsa_bytes *b = &ls->data;
        rc = tsa_bytes_svarint(b, tsa_wrap_sub(s->start_ns, prev_end)) ||
             tsa_bytes_svarint(b, tsa_wrap_sub(s->end_ns, s->start_ns)) ||
             tsa_bytes_svarint(b, s->compute_ns) || tsa_bytes_svarint(b, s->comm_ns);
        for (int p = 0; p < TSA_PHASE_COUNT && !rc; p++)
            rc = tsa_bytes_svarint(b, s->phase_ns[p]);
        if (!rc)
            rc = tsa_bytes_svarint(b, (int64_t)((uint64_t)s->first_nccl - next_call)) ||
                 tsa_bytes_varint(b, (uint64_t)s->n_nccl) || tsa_bytes_svarint(b, s->warmup);
        prev_end = s->end_ns;
        next_call = (uint64_t)s->first_nccl + (uint64_t)s->n_nccl;
    }
    if (rc) {
        tsa_lean_steps_free(ls);
        return NULL;
    }
    tsa_bytes_shrink(&ls->data);
    return ls;
}

int tsa_lean_steps_decode(const tsa_lean_steps *ls, tsa_step *out)
{
    const unsigned char *p = ls->data.p, *end = ls->data.p + ls->data.len;
    int64_t prev_end = 0;
    uint64_t next_call = 0;
    for (size_t i = 0; i < ls->n; i++) {
        tsa_step *s = &out[i];
        int64_t d0, d1, first, warmup;
        uint64_t n_nccl;
        memset(s, 0, sizeof *s);
        if (tsa_svarint_get(&p, end, &d0) || tsa_svarint_get(&p, end, &d1) ||
            tsa_svarint_get(&p, end, &s->compute_ns) || tsa_svarint_get(&p, end, &s->comm_ns))
            return -1;
        for (int k = 0; k < TSA_PHASE_COUNT; k++)
            if (tsa_svarint_get(&p, end, &s->phase_ns[k]))
                return -1;
        if (tsa_svarint_get(&p, end, &first) || tsa_varint_get(&p, end, &n_nccl) ||
            tsa_svarint_get(&p, end, &warmup))
            return -1;
        s->start_ns = tsa_wrap_add(prev_end, d0);
        s->end_ns = tsa_wrap_add(s->start_ns, d1);
        s->first_nccl = (size_t)(next_call + (uint64_t)first);
        s->n_nccl = (size_t)n_nccl;
        s->warmup = (int)warmup;
        prev_end = s->end_ns;
        next_call = (uint64_t)s->first_nccl + (uint64_t)s->n_nccl;
    }
    return 0;
}

void tsa_lean_steps_free(tsa_lean_steps *ls)
{
    if (!ls)
        return;
    free(ls->data.p);
    free(ls);
}

size_t tsa_lean_steps_bytes(const tsa_lean_steps *ls)
{
    return ls ? sizeof *ls + ls->data.cap : 0;
}
