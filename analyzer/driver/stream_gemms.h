/* What stage 2 reads of a rank's GEMMs, kept compact between the load and
 * stage 2 (stream.h): a GEMM's time (its kernel's start when linked, else
 * the call's), FLOPs and dtype.  A job of 10,000 ranks x 1,000 steps x 5
 * GEMMs holds 50 million of them, 1.2 GB at 24 bytes each; a rank's GEMMs
 * repeat a few shapes, so each is its time against the previous one and
 * the number of its (FLOPs, dtype): ~5 bytes. */
#ifndef TSA_STREAM_GEMMS_H
#define TSA_STREAM_GEMMS_H

#include <stddef.h>

#include "model/model.h"
#include "util/varint.h"

typedef struct stream_gemms {
    size_t n;
    struct stream_gemm_kind *kinds;
    size_t n_kinds;
    tsa_bytes data;
} stream_gemms;

/* r's GEMMs into g; 0, or -1 when out of memory. */
int stream_gemms_keep(const tsa_rank *r, stream_gemms *g);
/* As tsa_gemm records (start_ns = the time above, flops, dtype; kernel
 * -1), malloc'd; NULL when out of memory (or none). */
tsa_gemm *stream_gemms_take(const stream_gemms *g);
void stream_gemms_free(stream_gemms *g);

#endif
