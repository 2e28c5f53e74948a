/* Pipeline-parallel mode of tsc-testbed-rank: PP stages x DP ranks with a
 * 1F1B schedule over the test NCCL (blocking send/recv between stages, a
 * gradient AllReduce per stage's DP group and a global AllReduce per
 * step), plus the faults the pipeline what-if must tell apart.  Set by
 * environment, so the rank's option parser is unchanged:
 *   TSC_TESTBED_PP=P              stages (WORLD_SIZE / P DP ranks; rank = dp * P + stage)
 *   TSC_TESTBED_MICROBATCHES=M    micro-batches per step (default 6)
 *   TSC_TESTBED_FWD_US=US         forward compute per micro-batch (default 3000;
 *                                 backward is twice that)
 *   TSC_TESTBED_PP_ACT_BYTES=B    activation / gradient message (default 256 KiB); the
 *                                 mode sets FAKENCCL_P2P_SYNC=1 and a mailbox of B bytes
 *                                 unless already set, so a send leaves with its receive
 *   TSC_TESTBED_PP_SLOW_RANK=R:F  rank R computes F times longer (one slow worker)
 *   TSC_TESTBED_PP_SLOW_STAGE=S:F every worker of stage S computes F times longer
 *   TSC_TESTBED_PP_JITTER=J:SEED  every worker's compute in every step times a factor
 *                                 drawn uniformly from [1-J, 1+J] (seeded)
 * --steps and the rendezvous are the usual ones. */
#ifndef TB_RANK_PIPE_H
#define TB_RANK_PIPE_H

#include "nccl_abi.h"

/* 1 when TSC_TESTBED_PP asks for pipeline mode. */
int tb_pipe_enabled(void);

/* Runs `steps` training steps on the world communicator; 0, or prints why
 * and returns a non-zero exit status. */
int tb_pipe_run(ncclComm_t world, int rank, int world_size, int steps);

#endif
