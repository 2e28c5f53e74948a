/* The test NCCL's simulated network (FAKENCCL_NET_STEP_US > 0): the time a
 * proxy step spends on the wire between two processes, and, for
 * collectives, a ring whose steps really wait on each other across
 * processes, as NCCL's ring all-reduce does: on every channel rank r sends
 * only to r+1 and receives only from r-1, and a step's data arrives when
 * its sender has put it on the wire; the sender forwards step s once it
 * has received step s-1.  So one slow link paces every rank's receives,
 * and only the slow link's sender spends longer on the wire.
 *
 * Faults, by process (`RANK`, else the comm rank):
 *   FAKENCCL_SLOW_LINK=A:B:F[:CH]  steps from A to B F times longer (on
 *                                  channel CH only, if given)
 *   FAKENCCL_SLOW_HOST=H:F         every step to or from H F times longer
 *                                  (a slow NIC: all of H's links)
 *   FAKENCCL_PROXY_LAG=R:US        R's proxy thread is starved of CPU: it
 *                                  records every step state US late
 *   FAKENCCL_PROXY_STUCK=A:B:CH[:N]  from A's N-th ring collective (1 if
 *                                  not given) on, A's send to B on channel
 *                                  CH is posted and never completes: the
 *                                  collective hangs on every rank */
#ifndef FN_NET_H
#define FN_NET_H

#include "fn_comm.h"

void fn_net_configure(void);
long fn_net_step_us(void);
/* Wire time of one step from comm rank src to dst on channel ch. */
long fn_net_wire_us(ncclComm_t c, int src, int dst, int ch);
/* The starved proxy's delay before it records a state (0 elsewhere). */
void fn_net_lag(ncclComm_t c);
/* Whether this send (comm rank peer, channel ch) of the comm's current
 * ring collective is the one that never completes. */
int fn_net_stuck(ncclComm_t c, int peer, int ch);
/* Blocks for good (until the job is killed): a proxy that stopped. */
void fn_net_hang(void);
/* A ring step put on the wire to comm rank dst arrived there. */
void fn_net_deliver(ncclComm_t c, int dst, int ch);
/* Waits until the next ring step on channel ch arrived here; -1 past the
 * communicator's deadline. */
int fn_net_await(ncclComm_t c, int ch);
void fn_pause_us(long us);

#endif
