/* Per-operation wait and transfer of synchronous collectives, across ranks:
 * the ranks' calls with the same (communicator, sequence number, op) are
 * one instance; on the aligned clock, wait = latest GPU start - own GPU
 * start, transfer = own GPU end - latest GPU start (design brief section 6). */
#ifndef TSA_COLL_INSTANCES_H
#define TSA_COLL_INSTANCES_H

#include <stdint.h>

#include "model/model.h"

typedef struct tsa_coll_slot {
    uint64_t comm_id, seq;
    uint8_t op;
    uint8_t used;
    uint32_t ranks;             /* calls seen */
    int64_t latest_start;       /* aligned clock */
} tsa_coll_slot;

typedef struct tsa_coll_instances {
    tsa_coll_slot *slots;
    size_t n_slots;             /* power of two */
} tsa_coll_instances;

/* Index all collectives of the job.  Returns 0, or -1 out of memory. */
int tsa_coll_instances_build(tsa_coll_instances *ci, const tsa_job *job);

/* Wait and transfer of one rank's op; 0 and its whole GPU time when the
 * op has no peers in the job (point-to-point, or one rank loaded). */
void tsa_coll_instances_split(const tsa_coll_instances *ci, const tsa_rank *r,
                              const tsa_nccl_op *op, int64_t *wait_ns, int64_t *transfer_ns);

void tsa_coll_instances_free(tsa_coll_instances *ci);

#endif
