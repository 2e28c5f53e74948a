/* One process's share of a job (its loaded ranks and the problems met
 * loading them) as a flat byte buffer, so that tscope-report-mpi can ship
 * it to process 0.  The buffer holds raw structs: writer and reader must be
 * the same build (one binary on a homogeneous cluster).  The reader still
 * bounds-checks every length, and fails cleanly on a short or bad buffer. */
#ifndef TSA_SHARE_PACK_H
#define TSA_SHARE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* A record array left out of the buffer (deferred mode). */
typedef struct tsa_pack_bulk {
    const void *data;
    size_t bytes;
} tsa_pack_bulk;

typedef struct tsa_pack_buf {
    unsigned char *data;
    size_t len, cap;
    /* Deferred mode (set defer before packing): the record arrays, the bulk
     * of a share, are not copied into data but listed here in order, so a
     * sender can ship them straight from the ranks' memory (no second copy
     * of the share, whose page faults cost as much as the load here). */
    int defer;
    tsa_pack_bulk *bulk;
    size_t n_bulk, cap_bulk;
} tsa_pack_buf;

/* Appends job's ranks and its problems from index first_problem on.
 * -1 on OOM. */
int tsa_share_pack(const tsa_job *job, size_t first_problem, tsa_pack_buf *out);

/* Fills dst with the next deferred array of `bytes` bytes (a receive);
 * 0, or -1 on failure. */
typedef int (*tsa_pack_fetch)(void *dst, size_t bytes, void *ctx);

/* Moves the ranks and problems of a packed share into job (appended).
 * fetch NULL: the arrays are in the buffer; else the buffer was packed in
 * deferred mode and fetch supplies each array in order.  Returns 0, or -1
 * when the buffer is malformed, a fetch fails or memory runs out (job then
 * holds what was appended before the failure, all of it valid). */
int tsa_share_unpack(const unsigned char *data, size_t len, tsa_job *job,
                     tsa_pack_fetch fetch, void *ctx);

void tsa_pack_buf_free(tsa_pack_buf *b);

#endif
