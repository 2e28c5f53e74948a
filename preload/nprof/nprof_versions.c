/* The versioned tables NCCL looks up in the plugin library, newest first:
 * ncclProfiler_v6 (NCCL 2.29), v5 (2.28), v4 (2.27), v3 (2.25-2.26), v2
 * (2.24) and v1 (2.23).  Each translates its version's descriptor into the
 * core's calls (nprof.h); stop, record and finalize have one shape in all
 * of them. */
#include <stddef.h>

#include "nprof.h"
#include "tsc_format.h"
#include "tsc_nccl_ops.h"

#define EXPORT __attribute__((visibility("default")))

static tsc_np_result np_stop(void *handle)
{
    tsc_np_stop(handle);
    return 0;
}

static tsc_np_result np_record(void *handle, int state, tsc_np_state_args *args)
{
    tsc_np_record(handle, state, args);
    return 0;
}

static tsc_np_result np_finalize(void *ctx)
{
    tsc_np_ctx_free(ctx);
    return 0;
}

/* 1 = NCCL disables the plugin for this communicator (tscope is not
 * recording, or out of memory); NCCL runs on. */
static tsc_np_result np_init(void **ctx, int *mask, int version, int rank)
{
    enum tsc_np_mode m = tsc_np_mode();
    tsc_np_count_init();
    *ctx = m == TSC_NP_OFF ? NULL : tsc_np_ctx_new(version, rank);
    *mask = *ctx ? tsc_np_mask(m, version) : 0;
    return *ctx || m == TSC_NP_OFF ? 0 : 1;
}

/* What every version's descriptor reduces to. */
typedef struct {
    uint64_t type;
    void *parent;
    uint8_t op;
    uint64_t seq;
    int peer;
    uint8_t channels;
    const tsc_np_proxy_op *proxy_op;
    uint8_t kernel_channel;
    uint64_t ptimer;        /* kernel channel's GPU start, when have_ptimer */
    int have_ptimer;
} np_event;

static tsc_np_result np_start(void *ctx, void **handle, const np_event *e)
{
    switch (e->type) {
    case TSC_NP_COLL: *handle = tsc_np_start_coll(ctx, e->op, e->seq, e->channels); break;
    case TSC_NP_P2P: *handle = tsc_np_start_p2p(ctx, e->op, e->peer, e->channels); break;
    case TSC_NP_PROXY_OP: *handle = tsc_np_start_proxy_op(ctx, e->parent, e->proxy_op); break;
    case TSC_NP_PROXY_STEP: *handle = tsc_np_start_step(e->parent); break;
    case TSC_NP_KERNEL_CH:
        *handle = tsc_np_start_kernel_ch(e->parent, e->kernel_channel, e->ptimer, e->have_ptimer);
        break;
    default: *handle = NULL; break; /* groups, API events without a capture, ... */
    }
    return 0;
}

/* v1's numeric function codes (ncclFunc_t: 0-7 in NCCL 2.23; 8-10 as NCCL
 * numbers them since). */
static uint8_t op_of_code(uint8_t f)
{
    static const uint8_t ops[] = {TSC_NCCL_BROADCAST, TSC_NCCL_REDUCE, TSC_NCCL_ALLGATHER,
                                  TSC_NCCL_REDUCESCATTER, TSC_NCCL_ALLREDUCE, 0,
                                  TSC_NCCL_SEND, TSC_NCCL_RECV, TSC_NCCL_ALLTOALL,
                                  TSC_NCCL_SCATTER, TSC_NCCL_GATHER};
    return f < sizeof ops ? ops[f] : 0;
}

/* Fields common to every version's descriptor, by name. */
#define NP_EVENT_OF(d, OPF)                                                           \
    (np_event)                                                                        \
    {                                                                                 \
        .type = (d)->type, .parent = (d)->parent,                                     \
        .op = (d)->type == TSC_NP_COLL  ? OPF((d)->coll.func)                         \
              : (d)->type == TSC_NP_P2P ? OPF((d)->p2p.func)                          \
                                        : 0,                                          \
        .seq = (d)->type == TSC_NP_COLL ? (d)->coll.seq : 0,                          \
        .peer = (d)->type == TSC_NP_P2P ? (d)->p2p.peer : -1,                         \
        .channels = (d)->type == TSC_NP_COLL ? (d)->coll.channels : 0,                \
        .proxy_op = &(d)->proxy_op                                                    \
    }

/* v4, v5 and v6 also know the p2p channel count and the kernel channel's
 * GPU start time. */
#define NP_EVENT_V4(d)                                                                \
    (np_event)                                                                        \
    {                                                                                 \
        .type = (d)->type, .parent = (d)->parent,                                     \
        .op = (d)->type == TSC_NP_COLL  ? tsc_np_op_of_name((d)->coll.func)           \
              : (d)->type == TSC_NP_P2P ? tsc_np_op_of_name((d)->p2p.func)            \
                                        : 0,                                          \
        .seq = (d)->type == TSC_NP_COLL ? (d)->coll.seq : 0,                          \
        .peer = (d)->type == TSC_NP_P2P ? (d)->p2p.peer : -1,                         \
        .channels = (d)->type == TSC_NP_COLL  ? (d)->coll.channels                    \
                    : (d)->type == TSC_NP_P2P ? (d)->p2p.channels                     \
                                              : 0,                                    \
        .proxy_op = &(d)->proxy_op,                                                   \
        .kernel_channel = (d)->type == TSC_NP_KERNEL_CH ? (d)->kernel_ch.channel : 0, \
        .ptimer = (d)->type == TSC_NP_KERNEL_CH ? (d)->kernel_ch.ptimer : 0,          \
        .have_ptimer = 1                                                              \
    }

/* v5 and v6: a collective or send/recv call as the user made it.  Only a
 * call captured into a CUDA graph is recorded (its work comes later, at
 * each replay, without a call); no handle, so NCCL's numbering of replayed
 * collectives stays as without the plugin. */
#define NP_API_EVENT(ctx, d)                                                          \
    tsc_np_api_call(ctx, (d)->type == TSC_NP_P2P_API,                                 \
                    tsc_np_op_of_name((d)->type == TSC_NP_P2P_API ? (d)->p2p_api.func \
                                                                  : (d)->coll_api.func), \
                    (d)->type == TSC_NP_P2P_API ? (d)->p2p_api.count : (d)->coll_api.count, \
                    (d)->type == TSC_NP_P2P_API ? (d)->p2p_api.graph_captured        \
                                                : (d)->coll_api.graph_captured)

static tsc_np_result start_v1(void *ctx, void **h, tsc_np_descr_v1 *d)
{
    np_event e = NP_EVENT_OF(d, op_of_code);
    return np_start(ctx, h, &e);
}

static tsc_np_result start_v2(void *ctx, void **h, tsc_np_descr_v2 *d)
{
    np_event e = NP_EVENT_OF(d, tsc_np_op_of_name);
    return np_start(ctx, h, &e);
}

/* v3: kernel channels without GPU times. */
static tsc_np_result start_v3(void *ctx, void **h, tsc_np_descr_v3 *d)
{
    np_event e = NP_EVENT_OF(d, tsc_np_op_of_name);
    if (d->type == TSC_NP_KERNEL_CH)
        e.kernel_channel = d->kernel_ch.channel;
    return np_start(ctx, h, &e);
}

static tsc_np_result start_v4(void *ctx, void **h, tsc_np_descr_v4 *d)
{
    np_event e = NP_EVENT_V4(d);
    return np_start(ctx, h, &e);
}

static tsc_np_result start_v5(void *ctx, void **h, tsc_np_descr_v5 *d)
{
    if (d->type == TSC_NP_COLL_API || d->type == TSC_NP_P2P_API) {
        NP_API_EVENT(ctx, d);
        *h = NULL;
        return 0;
    }
    np_event e = NP_EVENT_V4(d);
    return np_start(ctx, h, &e);
}

/* v6's copy-engine collective: its flags as its record's. */
static uint8_t ce_flags(const tsc_np_descr_v6 *d)
{
    const char *s = d->ce_coll.sync_strategy;
    return (uint8_t)((s && s[0] == 'M' && s[1] == 'C') | (d->ce_coll.intra_batch_sync ? 2 : 0));
}

static tsc_np_result start_v6(void *ctx, void **h, tsc_np_descr_v6 *d)
{
    *h = NULL;
    switch (d->type) {
    case TSC_NP_COLL_API:
    case TSC_NP_P2P_API: NP_API_EVENT(ctx, d); return 0;
    case TSC_NP_CE_COLL:
        *h = tsc_np_start_ce_coll(ctx, tsc_np_op_of_name(d->ce_coll.func), d->ce_coll.seq,
                                  ce_flags(d));
        return 0;
    case TSC_NP_CE_SYNC:
        *h = tsc_np_start_ce_part(d->parent, TSC_EV_NP_CE_SYNC, d->ce_sync.is_complete,
                                  (uint64_t)(d->ce_sync.n_ranks > 0 ? d->ce_sync.n_ranks : 0));
        return 0;
    case TSC_NP_CE_BATCH:
        *h = tsc_np_start_ce_part(d->parent, TSC_EV_NP_CE_BATCH, d->ce_batch.use_intra_sync,
                                  TSC_NP_BATCH_VAL(d->ce_batch.total_bytes,
                                                   (uint64_t)(d->ce_batch.num_ops > 0
                                                                  ? d->ce_batch.num_ops
                                                                  : 0)));
        return 0;
    default: break;
    }
    np_event e = NP_EVENT_V4(d);
    return np_start(ctx, h, &e);
}

/* v1-v3 say the rank in each descriptor, not at init. */
static tsc_np_result init_v1(void **ctx, int *mask) { return np_init(ctx, mask, 1, -1); }
static tsc_np_result init_v2(void **ctx, int *mask) { return np_init(ctx, mask, 2, -1); }
static tsc_np_result init_v3(void **ctx, int *mask) { return np_init(ctx, mask, 3, -1); }

static tsc_np_result init_v4(void **ctx, int *mask, const char *name, uint64_t hash, int nnodes,
                             int nranks, int rank, tsc_np_logger log)
{
    (void)name, (void)hash, (void)nnodes, (void)nranks, (void)log;
    return np_init(ctx, mask, 4, rank);
}

static tsc_np_result init_v5(void **ctx, uint64_t id, int *mask, const char *name, int nnodes,
                             int nranks, int rank, tsc_np_logger log)
{
    (void)id, (void)name, (void)nnodes, (void)nranks, (void)log;
    return np_init(ctx, mask, 5, rank);
}

static tsc_np_result init_v6(void **ctx, uint64_t id, int *mask, const char *name, int nnodes,
                             int nranks, int rank, tsc_np_logger log)
{
    (void)id, (void)name, (void)nnodes, (void)nranks, (void)log;
    return np_init(ctx, mask, 6, rank);
}

#define NP_TABLE(N)                                                                  \
    EXPORT const tsc_np_table_v##N ncclProfiler_v##N = {                             \
        .name = "tscope", .init = init_v##N, .start = start_v##N, .stop = np_stop,    \
        .record = np_record, .finalize = np_finalize}

NP_TABLE(6);
NP_TABLE(5);
NP_TABLE(4);
NP_TABLE(3);
NP_TABLE(2);
NP_TABLE(1);
