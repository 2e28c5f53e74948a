/* Inside the test NCCL's profiler plugin host: the loader and version
 * adapters (fn_prof_load.c) the event emitters (fn_prof.c) call.  Events
 * are built as v6 descriptors, as NCCL builds its own, and handed to the
 * plugin in the layout of the version it found, the way NCCL's adapters
 * do; states go as v4+ arguments (fn_prof_state) or, for v1-v3, as those
 * versions' own (fn_prof_state_v1: what NCCL 2.23-2.26 passed). */
#ifndef FN_PROF_HOST_H
#define FN_PROF_HOST_H

#include "fn_comm.h"
#include "fn_prof_abi.h"

/* The version found (0: none), loading the plugin on first use. */
int fn_prof_version(void);
/* The plugin's init and finalize for a communicator (init failing: no
 * context, NCCL runs on without the plugin). */
void fn_prof_load_init(ncclComm_t c);
void fn_prof_load_fini(ncclComm_t c);

/* startEvent when the plugin asked for `type` and its version knows it;
 * sets d->type and d->rank.  The handle, or NULL.  _ctx: with a context
 * other than the communicator's (another process's, under PXN). */
void *fn_prof_start(ncclComm_t c, int type, fn_descr_v6 *d);
void *fn_prof_start_ctx(ncclComm_t c, void *ctx, int type, fn_descr_v6 *d);
void fn_prof_stop(void *h);
void fn_prof_state(void *h, int state, fn_state_args *a);
void fn_prof_state_v1(void *h, int state, fn_state_args_v1 *a);

/* An integer from the environment, clamped to [lo, hi]. */
long fn_env_long(const char *name, long dflt, long lo, long hi);

#endif
