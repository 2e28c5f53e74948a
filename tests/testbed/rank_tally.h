/* What the rank program called, kept so a test can compare it with what
 * the preload recorded: totals per NCCL function, and per communicator the
 * ordered list of sequenced calls (collectives and send/recv). */
#ifndef TB_RANK_TALLY_H
#define TB_RANK_TALLY_H

#include <stddef.h>
#include <stdint.h>

typedef struct tb_comm_tally tb_comm_tally;

/* A communicator this rank is a member of; `key` names it the same way on
 * every rank of it (e.g. "world", "parity1", "thread3"). */
tb_comm_tally *tb_tally_comm(const char *key, int size, int rank);

/* Record one call.  comm may be NULL for calls with no communicator
 * (GroupStart/End, CommInitRank counts as a call on the comm it creates
 * but is not sequenced).  Thread-safe. */
void tb_tally_call(tb_comm_tally *comm, const char *op, uint64_t bytes, int sequenced);

/* Mix bytes into this thread's running checksum slot `slot` (0 = main
 * thread, 1.. = worker threads) so the total does not depend on timing. */
void tb_checksum_add(int slot, const void *p, size_t n);
uint64_t tb_checksum_total(void);

/* Write the JSON summary; returns 0 or -1. */
int tb_tally_write(const char *path, int rank, int world, int forked);

#endif
