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

typedef struct tsa_pack_buf {
    unsigned char *data;
    size_t len, cap;
} tsa_pack_buf;

/* Appends job's ranks and its problems from index first_problem on.
 * -1 on OOM. */
int tsa_share_pack(const tsa_job *job, size_t first_problem, tsa_pack_buf *out);

/* Moves the ranks and problems of a packed share into job (appended).
 * Returns 0, or -1 when the buffer is malformed or memory runs out (job
 * then holds what was appended before the failure, all of it valid). */
int tsa_share_unpack(const unsigned char *data, size_t len, tsa_job *job);

void tsa_pack_buf_free(tsa_pack_buf *b);

#endif
