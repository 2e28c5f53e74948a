/* A rank's sequenced calls (collectives and point-to-point: the calls NCCL
 * numbers per communicator), summed up per communicator: what the passes
 * over every rank ask of them before anything else (the cross-rank
 * matching's communicators and seq ranges, the desync walk's order, the
 * early-exit test's last call and top seq).  A lean rank keeps it with its
 * compact calls (lean_calls.h), so those questions need no decoding;
 * tsa_rank_seqs (rank_view.h) gives it for any rank. */
#ifndef TSA_SEQ_SUMMARY_H
#define TSA_SEQ_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "util/key_table.h"

typedef struct tsa_comm_seqs {
    uint64_t comm_id;
    uint64_t first_seq;         /* its first call's */
    uint64_t last_seq;          /* its last call's */
    int64_t top;                /* the highest seq read as int64, -1 at least */
    uint64_t calls;
    int ordered;                /* seqs never go back from call to call */
} tsa_comm_seqs;

typedef struct tsa_seq_summary {
    tsa_comm_seqs *comms;       /* in the order of their first call */
    size_t n_comms, cap;
    int has_last;
    tsa_nccl_op last;           /* the last sequenced call */
    tsa_key_table index;        /* comm_id -> number, while adding */
} tsa_seq_summary;

void tsa_seq_summary_init(tsa_seq_summary *s);
/* Counts call o (in the rank's order); 0, or -1 when out of memory. */
int tsa_seq_summary_add(tsa_seq_summary *s, const tsa_nccl_op *o);
/* Done adding: the index is dropped. */
void tsa_seq_summary_done(tsa_seq_summary *s);
void tsa_seq_summary_free(tsa_seq_summary *s);
/* The entry of comm_id, NULL when the rank made no sequenced call on it. */
const tsa_comm_seqs *tsa_seq_summary_comm(const tsa_seq_summary *s, uint64_t comm_id);

#endif
