/* File rendezvous for NCCL unique ids, standing in for torchrun's TCP
 * store: rank 0 writes the ids into a file in the launcher's rendezvous
 * directory (atomically, via rename); the other ranks wait for it. */
#ifndef TB_RANK_RDZV_H
#define TB_RANK_RDZV_H

#include <stddef.h>

/* rank 0: write `n` ids of `size` bytes each; others: read them.  Waits at
 * most timeout_s seconds.  Returns 0 or -1 (message on stderr). */
int tb_rdzv_exchange(const char *dir, int rank, void *ids, size_t size, size_t n,
                     int timeout_s);

#endif
