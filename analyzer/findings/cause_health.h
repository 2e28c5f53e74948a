/* Causes from the health of the blamed rank's GPU, its links and its
 * host's network ports (a slow NCCL link the profiler plugin saw is
 * cause_link.c's): evidence that something is broken (PCIe/NVLink link
 * errors or a down-trained link, the host's InfiniBand/RoCE port errors or
 * waits, XIDs, ECC errors, retired pages, remapped rows) names a cause only
 * where the rank's own transfers or kernels are also slower than its
 * peers', by as much as the cause explains; evidence alone names nothing.  docs/findings.md ("CAUSE
 * gpu-link", "CAUSE network", "CAUSE gpu-health") gives the rules. */
#ifndef TSA_CAUSE_HEALTH_H
#define TSA_CAUSE_HEALTH_H

#include "cause_peers.h"

/* Copies or sends/receives count as slower when they move a byte at least
 * this much slower than the peers' median rate. */
#define TSA_TH_CAUSE_RATE 0.10

/* Fills cand[TSA_CAUSE_GPU_LINK], cand[TSA_CAUSE_NETWORK] and
 * cand[TSA_CAUSE_GPU_HEALTH] from m against its peers; cand[TSA_CAUSE_DEVICE]
 * must be filled already.  GPU health takes over a device cause whose GPU
 * ran at its peers' clocks (its errors, not its clocks, explain the slower
 * kernels), and a link or network cause takes over an arrival cause whose
 * receive time it explains (the data came late over that link). */
void cause_health(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                  const tsa_cause_block *b, candidate *cand);

/* What the link, network and GPU health sources held, for a block's list
 * of what was checked. */
void cause_health_checked(const cm_rank *m, char *buf, size_t cap, int *at);

#endif
