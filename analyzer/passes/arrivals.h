/* The latest arrival of every collective instance of the job, which the
 * per-rank pass (waiting for peers) and the collective table (bus
 * bandwidth over the transfer, not the wait) both need. */
#ifndef TSA_ARRIVALS_H
#define TSA_ARRIVALS_H

#include "model/model.h"

/* Latest arrival of every collective instance, keyed by (comm id, seq),
 * on the job's common clock (t + clock_offset_ns). */
typedef struct tsa_arrival {
    uint64_t comm_id, seq;
    int64_t latest;
} tsa_arrival;

typedef struct tsa_arrivals {
    tsa_arrival *v;
    size_t n;
} tsa_arrivals;

/* Arrival of a call = start of its GPU interval (host interval when not
 * linked to a kernel).  Only collectives of communicators with more than
 * one rank count.  -1 on OOM. */
int tsa_arrivals_build(const tsa_job *job, tsa_arrivals *out);
/* Whether a call has an arrival to wait for: a collective of a known
 * communicator of more than one rank. */
int tsa_counts_for_arrival(const tsa_nccl_op *op);
/* Latest arrival (common clock) or INT64_MIN when unknown. */
int64_t tsa_arrivals_latest(const tsa_arrivals *a, uint64_t comm_id, uint64_t seq);
void tsa_arrivals_free(tsa_arrivals *a);

#endif
