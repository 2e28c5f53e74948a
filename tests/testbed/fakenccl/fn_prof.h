/* The test NCCL's profiler plugin host: loads the plugin the way NCCL does
 * (NCCL_PROFILER_PLUGIN: "none", a file dlopen can open, or NAME for
 * libnccl-profiler-NAME.so; unset: libnccl-profiler.so), looks up
 * ncclProfiler_v5 then v4, calls init per communicator and finalize at its
 * end, and reports each collective and send/recv with the proxy operations
 * a ring over FAKENCCL_CHANNELS channels would run, one network step at a
 * time.  A simulated network (FAKENCCL_NET_STEP_US > 0) makes every step
 * take that long on the wire, FAKENCCL_SLOW_LINK=A:B:F[:CH] F times longer
 * from rank A to rank B (on channel CH only, if given), so a slow link is a
 * real delay every rank of the job waits for. */
#ifndef FN_PROF_H
#define FN_PROF_H

#include "fn_ops.h"

void fn_prof_comm_init(ncclComm_t c);
void fn_prof_comm_fini(ncclComm_t c);
/* Before the data moves: the events and the simulated network time. */
void fn_prof_coll(const fn_op *op);
void fn_prof_p2p(const fn_op *ops, size_t n);

#endif
