/* The test NCCL's profiler plugin host: loads the plugin the way NCCL does
 * (NCCL_PROFILER_PLUGIN: "none", a file dlopen can open, or NAME for
 * libnccl-profiler-NAME.so; unset: libnccl-profiler.so), looks up
 * ncclProfiler_v6 down to v1 (FAKENCCL_PROFILER_MAX_VERSION stands in for
 * an older NCCL), calls init per communicator and finalize at its end, and
 * reports what NCCL of that version reports: each collective and
 * send/recv, the kernel's channels, and the proxy operations a ring over
 * FAKENCCL_CHANNELS channels would run, one network step at a time.
 *
 * A simulated network (FAKENCCL_NET_STEP_US > 0, fn_net.h) makes every
 * step take that long on the wire and runs a collective's proxy ops as a
 * ring whose steps wait on each other across processes, so a slow link is
 * a real delay every rank of the job waits for; fn_net.h has its faults.
 * What else NCCL does, on demand:
 *   FAKENCCL_GRAPH=N:K      the N-th collective call of each communicator
 *                           is captured into a CUDA graph (v5+: reported
 *                           as such at the call) and replayed K times
 *                           from another thread: collectives without a
 *                           call, with NCCL's unchanged sequence number
 *   FAKENCCL_CE=N           (v6) every N-th AllGather, AlltoAll, Gather or
 *                           Scatter of a communicator (the first, N+1-th,
 *                           ...) runs on the copy engines: CE events, no
 *                           kernel, NCCL's per-function number unmoved
 *   FAKENCCL_PROXY_OPEN=1   a collective's proxy ops are all open at once
 *                           (as when the proxy thread has many in flight)
 *   FAKENCCL_PXN=1          one more proxy op per collective, run here for
 *                           another process: its pid, context and parent */
#ifndef FN_PROF_H
#define FN_PROF_H

#include "fn_ops.h"

void fn_prof_comm_init(ncclComm_t c);
void fn_prof_comm_fini(ncclComm_t c);
/* At the API call (v5+: the API event); 1 when the call is the one
 * captured into a graph (FAKENCCL_GRAPH). */
int fn_prof_api(const fn_op *op);
/* Before the data moves: the events and the simulated network time; and
 * after it moved: the kernel channels' end, a captured call's replays. */
void fn_prof_coll(const fn_op *op);
void fn_prof_coll_end(const fn_op *op);
void fn_prof_p2p(const fn_op *ops, size_t n);
void fn_prof_p2p_end(const fn_op *ops, size_t n);

#endif
