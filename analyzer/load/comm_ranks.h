/* Which global rank is rank r of communicator c: from the NCCL call
 * records, which carry each rank's communicator id and its place in it.
 * The plugin's records name peers by their rank in the communicator. */
#ifndef TSA_LOAD_COMM_RANKS_H
#define TSA_LOAD_COMM_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct tsa_comm_rank {
    uint64_t comm_id;
    uint32_t comm_rank;
    int global;
} tsa_comm_rank;

typedef struct tsa_comm_ranks {
    tsa_comm_rank *map;
    size_t n;
} tsa_comm_ranks;

/* 0, or -1 when out of memory. */
int tsa_comm_ranks_build(const tsa_job *job, tsa_comm_ranks *out);
void tsa_comm_ranks_free(tsa_comm_ranks *m);

/* The global rank of comm_rank in comm_id; the comm rank itself when the
 * communicator is not known (a world communicator numbers ranks alike). */
int tsa_comm_rank_global(const tsa_comm_ranks *m, uint64_t comm_id, int comm_rank);

#endif
