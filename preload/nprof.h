/* tscope as NCCL's profiler plugin: the version-independent core.
 *
 * NCCL calls the plugin from the thread that enqueues a collective and
 * from its proxy threads, which drive the network: nothing here may block
 * or allocate on those paths.  Each communicator's context holds fixed
 * pools of event handles, taken round-robin with one atomic add; a handle
 * is reused only after the pool has gone round, by which time NCCL is done
 * with it (a collective's handle is read by its proxy ops after its stop,
 * so handles are never freed one by one).  Records go to the calling
 * thread's ring like every other record (recorder.h).  The per-version
 * tables NCCL looks up (nprof_versions.c) translate their descriptors and
 * call these. */
#ifndef TSC_NPROF_H
#define TSC_NPROF_H

#include <stdint.h>

#include "nprof_abi.h"

enum tsc_np_mode { TSC_NP_OFF = 0, TSC_NP_LIGHT = 1, TSC_NP_FULL = 2 };

/* TSCOPE_NCCL_PROFILER: off, light (collectives and p2p; the default) or
 * full (also proxy operations and their network steps). */
enum tsc_np_mode tsc_np_mode(void);

/* The activation mask for a mode. */
int tsc_np_mask(enum tsc_np_mode m);

typedef struct tsc_np_ctx tsc_np_ctx;

/* A context for one communicator (NULL when tscope is not recording or out
 * of memory: init then fails and NCCL runs without the plugin). */
tsc_np_ctx *tsc_np_ctx_new(int version, int rank);
void tsc_np_ctx_free(tsc_np_ctx *ctx);

/* A collective (seq = NCCL's per-function number) or a send/recv (peer). */
void *tsc_np_start_coll(tsc_np_ctx *ctx, uint8_t op, uint64_t seq, uint8_t channels);
void *tsc_np_start_p2p(tsc_np_ctx *ctx, uint8_t op, int peer, uint8_t channels);
/* parent: the collective's handle, NULL when NCCL gave none or it belongs
 * to another process (PXN). */
void *tsc_np_start_proxy_op(tsc_np_ctx *ctx, void *parent, const tsc_np_proxy_op *d);
void *tsc_np_start_step(tsc_np_ctx *ctx, void *parent_op);

void tsc_np_stop(void *handle);
void tsc_np_record(void *handle, int state, const tsc_np_state_args *args);

/* tsc_nccl_op code of NCCL's function name ("AllReduce", ...); 0 unknown. */
uint8_t tsc_np_op_of_name(const char *func);

/* Where NCCL's plugin loader is pointed (nprof_env.c). */
void tsc_np_env_setup(void);

/* The tscope communicator id of the ncclCommInitRank* call this thread is
 * inside (nccl_wrap.c sets it around the real call), 0 outside one. */
void tsc_np_set_init_comm(uint64_t comm_id);

/* After a rank-init call that created a communicator: when NCCL should
 * have loaded the plugin (tscope pointed it here) and never called its
 * init, one line says so (an NCCL before 2.23, or one that wants a plugin
 * version tscope lacks). */
void tsc_np_after_init(void);

/* Counts init calls (the check above); 1 when tscope pointed NCCL here. */
void tsc_np_count_init(void);
void tsc_np_set_pointed(void);

#endif
