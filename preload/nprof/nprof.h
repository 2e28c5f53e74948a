/* tscope as NCCL's profiler plugin: the version-independent core.
 *
 * NCCL calls the plugin from the thread that enqueues a collective, from
 * CUDA's host-callback thread (collectives replayed from a CUDA graph)
 * and from its proxy threads, which drive the network: nothing here may
 * block or allocate on those paths.  Event handles come from fixed pools
 * shared by all communicators (nprof_pool.h: an open handle is never
 * reused, a stale one is never mixed in; both are dropped and counted).
 * Records go to the calling thread's ring like every other record
 * (recorder.h).  The per-version tables NCCL looks up (nprof_versions.c)
 * translate their descriptors and call these.
 *
 * With PXN, a proxy thread runs operations of another process: NCCL then
 * passes that process's context and parent handle, which are not
 * addresses here.  So nothing on the proxy path reads the context unless
 * the operation is this process's own (its pid). */
#ifndef TSC_NPROF_H
#define TSC_NPROF_H

#include <stddef.h>
#include <stdint.h>

#include "nprof_abi.h"
#include "nprof_env.h"
#include "tsc_format.h"

/* The activation mask for a mode and the ABI version NCCL chose (a
 * version is asked only for the events it has). */
int tsc_np_mask(enum tsc_np_mode m, int version);

typedef struct tsc_np_ctx tsc_np_ctx;

/* A context for one communicator (NULL when tscope is not recording or out
 * of memory: init then fails and NCCL runs without the plugin). */
tsc_np_ctx *tsc_np_ctx_new(int version, int rank);
void tsc_np_ctx_free(tsc_np_ctx *ctx);

/* A collective (seq = NCCL's per-function number), a send/recv (peer),
 * a copy-engine collective (seq = NCCL's CE sequence number, flags as its
 * record's). */
void *tsc_np_start_coll(tsc_np_ctx *ctx, uint8_t op, uint64_t seq, uint8_t channels);
void *tsc_np_start_p2p(tsc_np_ctx *ctx, uint8_t op, int peer, uint8_t channels);
void *tsc_np_start_ce_coll(tsc_np_ctx *ctx, uint8_t op, uint64_t seq, uint8_t flags);
/* parent: the collective's handle.  ctx is read only for this process's
 * own operations (d->pid). */
void *tsc_np_start_proxy_op(tsc_np_ctx *ctx, void *parent, const tsc_np_proxy_op *d);
void *tsc_np_start_step(void *parent_op);
/* One channel of a collective's kernel; gpu_start is the GPU timer, or
 * have_gpu 0 when NCCL gives none (v3: host times are kept instead). */
void *tsc_np_start_kernel_ch(void *parent, uint8_t channel, uint64_t gpu_start, int have_gpu);
/* A CE collective's sync or batch (kind TSC_EV_NP_CE_SYNC or _BATCH). */
void *tsc_np_start_ce_part(void *parent, uint8_t kind, uint8_t flags, uint64_t val);
/* An API call (v5+): a record only when NCCL says it was captured into a
 * CUDA graph; no handle either way. */
void tsc_np_api_call(tsc_np_ctx *ctx, int p2p, uint8_t op, uint64_t count, int captured);

void tsc_np_stop(void *handle);
void tsc_np_record(void *handle, int state, const tsc_np_state_args *args);

/* tsc_nccl_op code of NCCL's function name ("AllReduce", ...); 0 unknown. */
uint8_t tsc_np_op_of_name(const char *func);

/* The plugin's table for the core (nprof_part.c, core/parts.h). */
struct tsc_part;
extern const struct tsc_part tsc_nprof_part;

/* After a rank-init call that created a communicator: when NCCL should
 * have loaded the plugin (tscope pointed it here) and never called its
 * init, the dump says so (an NCCL before 2.23, or one that wants a plugin
 * version tscope lacks). */
void tsc_np_after_init(void);

/* Counts init calls (the check above). */
void tsc_np_count_init(void);

/* Called with every META chunk the writer writes:
 * the plugin's loss and PXN counters as metadata keys, once non-zero. */
void tsc_np_publish_meta(void);

/* The plugin's proxy ops still open whose steps made no progress for
 * TSC_NP_STALL_NS or more, each once per stall: up to cap
 * TSC_EV_NP_PROXY_STALL records into out[], with the thread whose stream
 * each joins in tids[].  For the writer's drains: a hung collective's ops
 * never stop, and an op's records are written at its stop.  Reads atomics
 * only (safe in a signal handler). */
size_t tsc_np_stalled_ops(uint64_t now, tsc_event *out, uint32_t *tids, size_t cap);

#endif
