/* A lean rank's NCCL calls, compact (issue 27).  A job of 10,000 ranks x
 * 1,000 steps holds some 40 million calls after its bulk records are gone:
 * at 104 bytes a tsa_nccl_op that alone is 4 GB.  Most fields repeat from
 * call to call (communicator, sizes, op, thread, stream), so each distinct
 * combination is kept once as a "shape", and a call is its shape's number,
 * its seq against the communicator's previous one and its four times and
 * kernel index as differences: about 14 bytes, every value exact.
 *
 * The job-level passes read the calls one rank at a time, decoded
 * (tsa_rank_view, rank_view.h) or walked with a cursor. */
#ifndef TSA_LEAN_CALLS_H
#define TSA_LEAN_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "seq_summary.h"
#include "util/varint.h"

typedef struct tsa_lean_calls {
    size_t n;                   /* calls */
    tsa_nccl_op *shapes;        /* times, seq and kernel zero */
    uint32_t *shape_comm;       /* per shape: its communicator's number */
    size_t n_shapes, n_comms;
    size_t n_unlinked;          /* calls with kernel < 0 */
    tsa_seq_summary seqs;       /* the sequenced calls per communicator */
    tsa_bytes data;             /* per call, the values above as varints */
} tsa_lean_calls;

/* calls[0..n) compact; NULL when out of memory. */
tsa_lean_calls *tsa_lean_calls_encode(const tsa_nccl_op *calls, size_t n);
void tsa_lean_calls_free(tsa_lean_calls *lc);

/* Reads the calls in order. */
typedef struct tsa_calls_cursor {
    const tsa_lean_calls *lc;
    const unsigned char *p, *end;
    size_t at;                  /* calls read */
    int64_t start, kernel;      /* the previous call's */
    uint64_t *last_seq;         /* per communicator */
} tsa_calls_cursor;

/* 0, or -1 when out of memory. */
int tsa_calls_cursor_open(tsa_calls_cursor *c, const tsa_lean_calls *lc);
/* The next call into *out: 1, 0 at the end, -1 on damaged bytes. */
int tsa_calls_cursor_next(tsa_calls_cursor *c, tsa_nccl_op *out);
void tsa_calls_cursor_close(tsa_calls_cursor *c);

/* Every call into out[0..lc->n); 0, or -1 on damaged bytes or OOM. */
int tsa_lean_calls_decode(const tsa_lean_calls *lc, tsa_nccl_op *out);

/* As bytes (share_pack.h) and back.  The reader checks every call and
 * counts the summary again from them, unless own: bytes this process
 * wrote a moment ago (the streaming report), taken as they are.  Returns
 * 0 / the store, or -1 / NULL (OOM, or a malformed buffer: c->bad). */
struct tsa_pack_buf;
struct tsa_cursor;
int tsa_lean_calls_put(struct tsa_pack_buf *b, const tsa_lean_calls *lc);
tsa_lean_calls *tsa_lean_calls_get(struct tsa_cursor *c, int own);

#endif
