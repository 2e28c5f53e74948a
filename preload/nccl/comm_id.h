/* Communicator identity: a 64-bit id that every rank of a communicator
 * computes on its own, from what all of them pass to NCCL, so the analyzer
 * can match the same collective across rank dumps without any exchange. */
#ifndef TSC_COMM_ID_H
#define TSC_COMM_ID_H

#include <stddef.h>
#include <stdint.h>

/* InitRank / InitRankConfig (n = 1) and InitRankScalable (n ids). */
uint64_t tsc_comm_id_from_unique_ids(const void *ids, size_t n, size_t id_bytes);
/* Split: the parent's id, how many splits of that parent came before this
 * one (all ranks split collectively, in the same order), and the color. */
uint64_t tsc_comm_id_split(uint64_t parent, uint64_t split_index, int color);
/* Shrink: the parent's id and how many shrinks of that parent came before. */
uint64_t tsc_comm_id_shrink(uint64_t parent, uint64_t shrink_index);
/* InitAll: every communicator lives in this process. */
uint64_t tsc_comm_id_local(const char *host, uint32_t pid, uint64_t counter);

#endif
