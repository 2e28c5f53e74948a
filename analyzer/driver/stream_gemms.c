/* A rank's GEMMs for stage 2, compact (stream_gemms.h).  Per GEMM, as
 * varints: its time - the previous GEMM's (zig-zagged, modulo 2^64), and
 * the number of its (FLOPs, dtype) kind. */
#include "stream_gemms.h"

#include <stdlib.h>
#include <string.h>

#include "util/key_table.h"

typedef struct stream_gemm_kind {
    double flops;
    uint64_t dtype;             /* 8 bytes: no padding in a key */
} stream_gemm_kind;

int stream_gemms_keep(const tsa_rank *r, stream_gemms *g)
{
    memset(g, 0, sizeof *g);
    tsa_key_table kinds;
    tsa_key_table_init(&kinds, sizeof(stream_gemm_kind));
    int64_t prev = 0;
    int rc = 0;
    for (size_t i = 0; i < r->n_gemms && !rc; i++) {
        const tsa_gemm *x = &r->gemms[i];
        int linked = x->kernel >= 0 && (size_t)x->kernel < r->n_kernels;
        int64_t t = linked ? r->kernels[x->kernel].start_ns : x->start_ns;
        stream_gemm_kind k = {x->flops, x->dtype};
        int64_t ki = tsa_key_table_put(&kinds, &k);
        rc = ki < 0 || tsa_bytes_svarint(&g->data, tsa_wrap_sub(t, prev)) ||
             tsa_bytes_varint(&g->data, (uint64_t)ki);
        prev = t;
    }
    g->n = r->n_gemms;
    g->n_kinds = kinds.n;
    g->kinds = (stream_gemm_kind *)kinds.keys;
    tsa_key_table_drop_index(&kinds);
    tsa_bytes_shrink(&g->data);
    if (rc) {
        stream_gemms_free(g);
        return -1;
    }
    return 0;
}

tsa_gemm *stream_gemms_take(const stream_gemms *g)
{
    tsa_gemm *v = g->n ? calloc(g->n, sizeof *v) : NULL;
    if (!v)
        return NULL;
    const unsigned char *p = g->data.p, *end = g->data.p + g->data.len;
    int64_t t = 0;
    for (size_t i = 0; i < g->n; i++) {
        int64_t d;
        uint64_t ki;
        /* bytes written by stream_gemms_keep in this process */
        tsa_svarint_get(&p, end, &d);
        tsa_varint_get(&p, end, &ki);
        t = tsa_wrap_add(t, d);
        const stream_gemm_kind *k = &g->kinds[ki < g->n_kinds ? ki : 0];
        v[i].start_ns = t;
        v[i].flops = k->flops;
        v[i].dtype = (uint8_t)k->dtype;
        v[i].kernel = -1;
    }
    return v;
}

void stream_gemms_free(stream_gemms *g)
{
    free(g->kinds);
    free(g->data.p);
    memset(g, 0, sizeof *g);
}
