/* NCCL interposition.  Every exported entry point has the same shape:
 *
 *   resolve the real function (lazily) -> guard (recorder active, not
 *   re-entered) -> describe the call -> time -> real call -> time ->
 *   record -> restore errno -> return the real result unchanged.
 *
 * Descriptors are interned before the real call so the CUPTI external
 * correlation id (derived from the descriptor id and the sequence number)
 * is known when the call launches its kernels. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm_id.h"
#include "call_cache.h"
#include "comm_registry.h"
#include "fast_clock.h"
#include "nccl_abi.h"
#include "nccl_wrap.h"
#include "parts.h"
#include "real_sym.h"
#include "rec_meta.h"
#include "rec_thread.h"
#include "recorder.h"
#include "recorder_internal.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------- real symbol lookup */

/* One real symbol per operation of the table (format/tsc_nccl_ops.h), then
 * the queries the wrappers call but do not interpose. */
enum real_sym {
#define SYM_ENUM(id, code, name, kind, busbw, args) S_##id,
    TSC_NCCL_OPS(SYM_ENUM)
#undef SYM_ENUM
    S_USER_RANK, S_COUNT, S_GET_VERSION,
    S_NSYMS
};

static tsc_real_fn real_fns[S_NSYMS] = {
#define SYM_FN(id, code, nm, kind, busbw, args) {.name = "nccl" #nm},
    TSC_NCCL_OPS(SYM_FN)
#undef SYM_FN
    TSC_REAL_FN_OPTIONAL(ncclCommUserRank), TSC_REAL_FN_OPTIONAL(ncclCommCount),
    TSC_REAL_FN(ncclGetVersion),
};

/* Inline: after the first call this is one load per call. */
static inline void *real_sym(enum real_sym s) { return tsc_real_get(&real_fns[s]); }

static tsc_nccl_result_t no_nccl(enum real_sym s)
{
    tsc_warn_once("nccl-missing", "%s called but no NCCL library is loaded; returning "
                  "ncclSystemError", real_fns[s].name);
    return tsc_ncclSystemError;
}

/* The part's metadata: the real ncclGetVersion's code, when NCCL is
 * loaded. */
static void nccl_meta(void)
{
    tsc_fn_get_version f = (tsc_fn_get_version)real_sym(S_GET_VERSION);
    int v = 0;
    if (f && f(&v) == tsc_ncclSuccess && v > 0)
        tsc_meta_set_int(TSC_META_NCCL_VERSION, v);
}

const tsc_part tsc_nccl_part = {.name = "nccl", .meta = nccl_meta};

/* ---------------------------------------------------- per-call record */

/* initial-exec TLS: one instruction per access in a preloaded library. */
#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS int tls_group_depth;    /* ncclGroupStart nesting */
static TLS uint8_t tls_depth8;     /* the same, 0..255, as records carry it */
static TLS uint64_t tls_group_ends;
static TLS tsc_call_entry tls_calls[TSC_CALL_CACHE_WAYS];

static void set_group_depth(int depth)
{
    tls_group_depth = depth;
    tls_depth8 = (uint8_t)(depth > 255 ? 255 : depth < 0 ? 0 : depth);
}

typedef struct call {
    tsc_thread *t;       /* the recorder's slot of this thread */
    int *errno_at;       /* this thread's errno, looked up once */
    int app_errno;
    int real_errno;
    uint8_t op;
    uint16_t depth;      /* group depth at entry */
    int extcorr;         /* pushed an external correlation id */
    uint32_t desc;
    uint64_t t0, t1;
    tsc_clock_pair clk;  /* both timestamps on one line of the clock */
    tsc_desc_nccl_call d; /* filled only when the descriptor is built */
} call;

/* The descriptor's fields that say "none", before a wrapper fills in what
 * its call has. */
static void blank_desc(call *c)
{
    memset(&c->d, 0, sizeof c->d);
    c->d.op = c->op;
    c->d.dtype = TSC_DT_NONE;
    c->d.redop = TSC_REDOP_NONE;
    c->d.peer = TSC_NO_PEER;
}

/* Whether to record this call; the descriptor is left for the caller. */
static inline int call_begin_lean(call *c, uint8_t op)
{
    if (tsc_call_in_nccl)
        return 0;
    c->errno_at = &errno;
    c->app_errno = *c->errno_at;
    c->t = tsc_rec_thread();
    if (__builtin_expect(!c->t, 0)) {
        *c->errno_at = c->app_errno;
        return 0;
    }
    tsc_call_in_nccl = 1;
    c->op = op;
    c->depth = tls_depth8;
    c->extcorr = 0;
    c->desc = 0;
    c->t1 = 0;
    return 1;
}

static int call_begin(call *c, uint8_t op)
{
    if (!call_begin_lean(c, op))
        return 0;
    blank_desc(c);
    return 1;
}

/* Right before the real call: the application's errno back in place. */
static inline void call_start(call *c)
{
    *c->errno_at = c->app_errno;
    /* The recorder's clock (fast_clock.h), inlined: the two timestamps of
     * every call are the largest part of its cost. */
    c->t0 = tsc_clock_first(&c->clk);
}

/* The exported name of a call that can block (for the hang watchdog's
 * message): collectives, send/recv, GroupEnd, communicator creation. */
static const char *blocking_call_name(uint8_t op)
{
    if (tsc_nccl_op_is_sequenced(op) || op == TSC_NCCL_GROUP_END ||
        tsc_nccl_op_kind(op) == TSC_NCCL_KIND_INIT)
        return tsc_nccl_op_symbol(op);
    return "nccl call";
}

/* The entry marker, after the clock started: the descriptor interned for
 * the exit record and the entry time serve both (no lookup, no clock
 * read); the exit record (call_end) completes it. */
static inline __attribute__((always_inline)) void call_enter(call *c, uint64_t seq,
                                                             uint64_t comm_id, const char *name)
{
    uint32_t flags = c->depth > 0 ? TSC_NCCL_F_IN_GROUP : 0;
    tsc_rec_thread_enter(c->t, c->desc, flags | (uint32_t)c->depth << 16, c->t0, seq, comm_id,
                         name);
}

/* Right after the real call, before anything else can touch errno. */
static inline __attribute__((always_inline)) void call_returned(call *c)
{
    c->real_errno = *c->errno_at;
    c->t1 = tsc_clock_second(&c->clk);
}

static void fill_comm(call *c, tsc_comm_info *info)
{
    if (!info)
        return;
    c->d.comm_id = info->comm_id;
    c->d.comm_rank = (uint32_t)atomic_load_explicit(&info->rank, memory_order_relaxed);
    c->d.comm_size = (uint32_t)atomic_load_explicit(&info->size, memory_order_relaxed);
}

static void query_rank_size(tsc_nccl_comm_t comm, int32_t *rank, int32_t *size)
{
    tsc_fn_comm_query ur = (tsc_fn_comm_query)real_sym(S_USER_RANK);
    tsc_fn_comm_query cnt = (tsc_fn_comm_query)real_sym(S_COUNT);
    int v;
    if (ur && ur(comm, &v) == tsc_ncclSuccess)
        *rank = v;
    if (cnt && cnt(comm, &v) == tsc_ncclSuccess)
        *size = v;
}

static tsc_comm_info *comm_info(tsc_nccl_comm_t comm)
{
    tsc_comm_info *info = tsc_comm_lookup(comm);
    if (info && __builtin_expect(atomic_load_explicit(&info->size, memory_order_relaxed) == 0, 0)) {
        /* A non-blocking split may not have known its size at creation. */
        int32_t r = -1, s = 0;
        query_rank_size(comm, &r, &s);
        if (s > 0) {
            atomic_store(&info->rank, r);
            atomic_store(&info->size, s);
        }
    }
    return info;
}

/* After call_returned: the exit record, errno back as the real call left
 * it. */
static inline __attribute__((always_inline)) void call_finish(call *c, tsc_nccl_result_t rc,
                                                              uint64_t val)
{
    if (c->extcorr)
        tsc_parts_pop_corr();
    if (!c->desc)
        c->desc = tsc_rec_intern(TSC_DESC_NCCL_CALL, &c->d, sizeof c->d);
    uint8_t flags = (c->depth > 0 ? TSC_NCCL_F_IN_GROUP : 0) |
                    (rc == tsc_ncclInProgress ? TSC_NCCL_F_ASYNC_ERR : 0);
    uint16_t aux = (uint16_t)(((unsigned)rc & 0xff) << 8 | c->depth);
    tsc_rec_thread_call_done(c->t, flags, aux, c->desc, c->t0, c->t1, val);
    tsc_call_in_nccl = 0;
    *c->errno_at = c->real_errno;
}

static void call_end(call *c, tsc_nccl_result_t rc, uint64_t val)
{
    if (!c->t1)
        call_returned(c);
    call_finish(c, rc, val);
}

size_t tsc_nccl_dtype_size(int dtype)
{
    static const unsigned char sz[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return dtype >= 0 && (size_t)dtype < sizeof sz ? sz[dtype] : 0;
}

/* The next sequence number on a communicator.  A plain increment, not an
 * atomic one: NCCL forbids using one communicator from two threads at
 * once, so there is no race in a correct program, and a locked add would
 * cost a tenth of the call. */
static inline uint64_t next_seq(tsc_comm_info *info)
{
    if (!info)
        return 0;
    uint64_t seq = atomic_load_explicit(&info->seq, memory_order_relaxed);
    atomic_store_explicit(&info->seq, seq + 1, memory_order_relaxed);
    return seq;
}

/* A call not in the thread's cache: its descriptor from the arguments,
 * interned, and remembered when complete.  Out of line: the common case is
 * the hit. */
static __attribute__((noinline)) tsc_comm_info *
coll_describe(call *c, const tsc_call_key *k, int dtype, tsc_nccl_comm_t comm, uint64_t stamp,
              tsc_call_entry *e, uint64_t *comm_id)
{
    blank_desc(c);
    c->d.dtype = (uint8_t)(k->shape >> 8);
    c->d.redop = (uint8_t)(k->shape >> 16);
    c->d.peer = (int32_t)(k->shape >> 32);
    c->d.count = k->count;
    c->d.bytes = (uint64_t)k->count * tsc_nccl_dtype_size(dtype);
    c->d.stream = (uint64_t)k->stream;
    tsc_comm_info *info = comm_info(comm);
    fill_comm(c, info);
    *comm_id = c->d.comm_id;
    c->desc = tsc_rec_intern(TSC_DESC_NCCL_CALL, &c->d, sizeof c->d);
    /* Only complete descriptors are kept: an unknown communicator may be
     * registered later, a size may still be learnt. */
    if (c->desc && info && c->d.comm_size)
        *e = (tsc_call_entry){.key = *k, .stamp = stamp, .info = info, .comm_id = *comm_id,
                              .desc = c->desc};
    return info;
}

/* Collectives and point-to-point: the descriptor and communicator (from
 * the thread's cache when these arguments came before), the sequence
 * number, the external correlation id, the clock.  Inline in every
 * wrapper, so the common case makes no call but the clock's. */
static inline __attribute__((always_inline)) uint64_t
coll_prepare(call *c, size_t count, int dtype, int redop, int peer, tsc_nccl_comm_t comm,
             tsc_cuda_stream_t stream)
{
    uint8_t dt = dtype >= 0 && dtype < 255 ? (uint8_t)dtype : TSC_DT_NONE;
    uint8_t ro = redop < 0 ? TSC_REDOP_NONE : redop > 254 ? 254 : (uint8_t)redop;
    tsc_call_key k = {.count = count, .comm = (uintptr_t)comm, .stream = (uintptr_t)stream,
                      .shape = tsc_call_shape(c->op, dt, ro, (uint8_t)c->depth, peer)};
    uint64_t stamp = tsc_rec_thread_stamp(c->t);
    tsc_call_entry *e = tsc_call_slot(tls_calls, &k);
    tsc_comm_info *info;
    uint64_t comm_id;
    if (__builtin_expect(tsc_call_hit(e, &k, stamp), 1)) {
        c->desc = e->desc;
        info = e->info;
        comm_id = e->comm_id;
    } else {
        info = coll_describe(c, &k, dtype, comm, stamp, e, &comm_id);
    }
    uint64_t seq = next_seq(info);
    if (c->desc)
        c->extcorr = tsc_parts_push_corr(TSC_EXTCORR_ID(c->desc, seq));
    call_start(c);
    call_enter(c, seq, comm_id, tsc_nccl_op_symbol(c->op)); /* every one of these can block */
    return seq;
}

/* ---------------------------------------------------------- collectives */

/* The one shape of every collective and point-to-point wrapper: resolve
 * the real function, pass straight through when not recording, else time
 * the real call and record it under the sequence number PREPARE took. */
#define COLLECTIVE_CALL(FN_TYPE, SYM, OP, PREPARE, ARGS)                       \
    do {                                                                       \
        FN_TYPE real = (FN_TYPE)real_sym(SYM);                                 \
        if (!real)                                                             \
            return no_nccl(SYM);                                               \
        call c;                                                                \
        if (!call_begin_lean(&c, OP))                                          \
            return real ARGS;                                                  \
        uint64_t seq = PREPARE;                                                \
        tsc_nccl_result_t rc = real ARGS;                                      \
        call_returned(&c);                                                     \
        call_finish(&c, rc, seq);                                              \
        return rc;                                                             \
    } while (0)

/* The wrapper of an operation whose arguments have one of the table's
 * shapes (format/tsc_nccl_ops.h): nccl<NAME> with the shape's parameters
 * (PARAMS), recording the call as op ID with its reduction op and its root
 * or peer, and calling the real function with ARGS. */
#define WRAP_SHAPED(id, name, fn_type, PARAMS, REDOP, PEER, ARGS)                     \
    EXPORT tsc_nccl_result_t nccl##name PARAMS                                        \
    {                                                                                 \
        COLLECTIVE_CALL(fn_type, S_##id, TSC_NCCL_##id,                               \
                        coll_prepare(&c, count, datatype, REDOP, PEER, comm, stream), ARGS); \
    }
#define COLL_PARAMS(...)                                                              \
    (const void *sendbuff, void *recvbuff, size_t count, tsc_nccl_dtype_t datatype,    \
     __VA_ARGS__, tsc_nccl_comm_t comm, tsc_cuda_stream_t stream)
#define WRAP_REDOP(id, name)                                                          \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_REDOP, COLL_PARAMS(tsc_nccl_redop_t op), op,     \
                TSC_NO_PEER, (sendbuff, recvbuff, count, datatype, op, comm, stream))
#define WRAP_PLAIN(id, name)                                                          \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_PLAIN,                                           \
                (const void *sendbuff, void *recvbuff, size_t count,                  \
                 tsc_nccl_dtype_t datatype, tsc_nccl_comm_t comm, tsc_cuda_stream_t stream), \
                -1, TSC_NO_PEER, (sendbuff, recvbuff, count, datatype, comm, stream))
#define WRAP_ROOT(id, name)                                                           \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_ROOT, COLL_PARAMS(int root), -1, root,          \
                (sendbuff, recvbuff, count, datatype, root, comm, stream))
#define WRAP_REDOP_ROOT(id, name)                                                     \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_REDOP_ROOT, COLL_PARAMS(tsc_nccl_redop_t op, int root), op, \
                root, (sendbuff, recvbuff, count, datatype, op, root, comm, stream))
#define WRAP_INPLACE_ROOT(id, name)                                                   \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_INPLACE_ROOT,                                               \
                (void *buff, size_t count, tsc_nccl_dtype_t datatype, int root,       \
                 tsc_nccl_comm_t comm, tsc_cuda_stream_t stream),                     \
                -1, root, (buff, count, datatype, root, comm, stream))
#define WRAP_SEND(id, name)                                                           \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_SEND,                                                \
                (const void *sendbuff, size_t count, tsc_nccl_dtype_t datatype, int peer, \
                 tsc_nccl_comm_t comm, tsc_cuda_stream_t stream),                     \
                -1, peer, (sendbuff, count, datatype, peer, comm, stream))
#define WRAP_RECV(id, name)                                                           \
    WRAP_SHAPED(id, name, TSC_NCCL_SHAPE_RECV,                                                \
                (void *recvbuff, size_t count, tsc_nccl_dtype_t datatype, int peer,   \
                 tsc_nccl_comm_t comm, tsc_cuda_stream_t stream),                     \
                -1, peer, (recvbuff, count, datatype, peer, comm, stream))
#define WRAP_OWN(id, name) /* written by hand below */

#define WRAP(id, code, name, kind, busbw, args) WRAP_##args(id, name)
TSC_NCCL_OPS(WRAP)
#undef WRAP

/* --------------------------------------------------------------- groups */

EXPORT tsc_nccl_result_t ncclGroupStart(void)
{
    tsc_fn_group real = (tsc_fn_group)real_sym(S_GROUP_START);
    if (!real)
        return no_nccl(S_GROUP_START);
    call c;
    int rec = call_begin(&c, TSC_NCCL_GROUP_START);
    if (rec)
        call_start(&c);
    tsc_nccl_result_t rc = real();
    /* Depth is tracked even when not recording, so IN_GROUP stays right
     * if recording starts inside a group. */
    if (rc == tsc_ncclSuccess)
        set_group_depth(tls_group_depth + 1);
    if (rec)
        call_end(&c, rc, 0);
    return rc;
}

EXPORT tsc_nccl_result_t ncclGroupEnd(void)
{
    tsc_fn_group real = (tsc_fn_group)real_sym(S_GROUP_END);
    if (!real)
        return no_nccl(S_GROUP_END);
    call c;
    int rec = call_begin(&c, TSC_NCCL_GROUP_END);
    uint64_t val = tls_group_ends++;
    if (rec) {
        /* The grouped operations launch here, so the correlation id goes
         * around this call. */
        c.desc = tsc_rec_intern(TSC_DESC_NCCL_CALL, &c.d, sizeof c.d);
        if (c.desc)
            c.extcorr = tsc_parts_push_corr(TSC_EXTCORR_ID(c.desc, val));
        call_start(&c);
        call_enter(&c, val, 0, blocking_call_name(c.op));
    }
    tsc_nccl_result_t rc = real();
    if (tls_group_depth > 0 && (rc == tsc_ncclSuccess || rc == tsc_ncclInProgress))
        set_group_depth(tls_group_depth - 1);
    if (rec)
        call_end(&c, rc, val);
    return rc;
}

/* ------------------------------------------------------- communicators */

static int created(tsc_nccl_result_t rc)
{
    return rc == tsc_ncclSuccess || rc == tsc_ncclInProgress;
}

/* Before a rank-init call: the new communicator's identity comes from the
 * unique id(s) every rank passes, so it is known before the call, and the
 * entry marker can name it.  Init blocks until every rank has joined: a
 * rank whose peer never comes stays "in flight" in ncclCommInitRank*, and
 * the hang analysis names who never arrived. */
static void init_rank_enter(call *c, uint64_t comm_id, int rank, int nranks)
{
    c->d.comm_id = comm_id;
    c->d.comm_rank = (uint32_t)rank;
    c->d.comm_size = (uint32_t)nranks;
    c->desc = tsc_rec_intern(TSC_DESC_NCCL_CALL, &c->d, sizeof c->d);
    tsc_call_init_comm = comm_id; /* NCCL initialises its profiler plugin inside */
    call_start(c);
    call_enter(c, 0, comm_id, blocking_call_name(c->op));
}

/* After a rank-init call returned: the communicator's identity, derived
 * from the unique id(s) every rank passed, goes into the record and, when
 * the communicator was created, into the registry. */
static tsc_nccl_result_t init_rank_end(call *c, tsc_nccl_result_t rc, tsc_nccl_comm_t *comm,
                                       uint64_t comm_id, int rank, int nranks)
{
    tsc_call_init_comm = 0;
    if (created(rc))
        tsc_parts_comm_created();
    c->d.comm_id = comm_id;
    c->d.comm_rank = (uint32_t)rank;
    c->d.comm_size = (uint32_t)nranks;
    if (created(rc) && comm && *comm && comm_id)
        tsc_comm_add(*comm, comm_id, rank, nranks);
    call_end(c, rc, 0);
    return rc;
}

EXPORT tsc_nccl_result_t ncclCommInitRank(tsc_nccl_comm_t *comm, int nranks,
                                          tsc_nccl_unique_id commId, int rank)
{
    tsc_fn_comm_init_rank real = (tsc_fn_comm_init_rank)real_sym(S_COMM_INIT_RANK);
    if (!real)
        return no_nccl(S_COMM_INIT_RANK);
    call c;
    if (!call_begin(&c, TSC_NCCL_COMM_INIT_RANK))
        return real(comm, nranks, commId, rank);
    init_rank_enter(&c, tsc_comm_id_from_unique_ids(&commId, 1, sizeof commId), rank, nranks);
    tsc_nccl_result_t rc = real(comm, nranks, commId, rank);
    call_returned(&c);
    return init_rank_end(&c, rc, comm, c.d.comm_id, rank, nranks);
}

EXPORT tsc_nccl_result_t ncclCommInitRankConfig(tsc_nccl_comm_t *comm, int nranks,
                                                tsc_nccl_unique_id commId, int rank,
                                                tsc_nccl_config_t *config)
{
    tsc_fn_comm_init_rank_config real =
        (tsc_fn_comm_init_rank_config)real_sym(S_COMM_INIT_RANK_CONFIG);
    if (!real)
        return no_nccl(S_COMM_INIT_RANK_CONFIG);
    call c;
    if (!call_begin(&c, TSC_NCCL_COMM_INIT_RANK_CONFIG))
        return real(comm, nranks, commId, rank, config);
    init_rank_enter(&c, tsc_comm_id_from_unique_ids(&commId, 1, sizeof commId), rank, nranks);
    tsc_nccl_result_t rc = real(comm, nranks, commId, rank, config);
    call_returned(&c);
    return init_rank_end(&c, rc, comm, c.d.comm_id, rank, nranks);
}

EXPORT tsc_nccl_result_t ncclCommInitRankScalable(tsc_nccl_comm_t *newcomm, int nranks,
                                                  int myrank, int nId,
                                                  tsc_nccl_unique_id *commIds,
                                                  tsc_nccl_config_t *config)
{
    tsc_fn_comm_init_rank_scalable real =
        (tsc_fn_comm_init_rank_scalable)real_sym(S_COMM_INIT_RANK_SCALABLE);
    if (!real)
        return no_nccl(S_COMM_INIT_RANK_SCALABLE);
    call c;
    if (!call_begin(&c, TSC_NCCL_COMM_INIT_RANK_SCALABLE))
        return real(newcomm, nranks, myrank, nId, commIds, config);
    c.d.count = nId > 0 ? (uint64_t)nId : 0;
    init_rank_enter(&c,
                    commIds && nId > 0
                        ? tsc_comm_id_from_unique_ids(commIds, (size_t)nId, sizeof *commIds)
                        : 0,
                    myrank, nranks);
    tsc_nccl_result_t rc = real(newcomm, nranks, myrank, nId, commIds, config);
    call_returned(&c);
    return init_rank_end(&c, rc, newcomm, c.d.comm_id, myrank, nranks);
}

EXPORT tsc_nccl_result_t ncclCommInitAll(tsc_nccl_comm_t *comm, int ndev, const int *devlist)
{
    tsc_fn_comm_init_all real = (tsc_fn_comm_init_all)real_sym(S_COMM_INIT_ALL);
    if (!real)
        return no_nccl(S_COMM_INIT_ALL);
    call c;
    if (!call_begin(&c, TSC_NCCL_COMM_INIT_ALL))
        return real(comm, ndev, devlist);
    call_start(&c);
    tsc_nccl_result_t rc = real(comm, ndev, devlist);
    call_returned(&c);
    static _Atomic uint64_t init_all_calls;
    /* All ndev communicators live in this process: the id needs only to
     * be unique, not computable elsewhere. */
    c.d.comm_id = tsc_comm_id_local(tsc_rec_host(), (uint32_t)getpid(),
                                    atomic_fetch_add(&init_all_calls, 1));
    c.d.comm_size = ndev > 0 ? (uint32_t)ndev : 0;
    c.d.count = c.d.comm_size;
    if (created(rc) && comm)
        for (int i = 0; i < ndev; i++)
            if (comm[i])
                tsc_comm_add(comm[i], c.d.comm_id, i, ndev);
    call_end(&c, rc, 0);
    return rc;
}

EXPORT tsc_nccl_result_t ncclCommSplit(tsc_nccl_comm_t comm, int color, int key,
                                       tsc_nccl_comm_t *newcomm, tsc_nccl_config_t *config)
{
    tsc_fn_comm_split real = (tsc_fn_comm_split)real_sym(S_COMM_SPLIT);
    if (!real)
        return no_nccl(S_COMM_SPLIT);
    call c;
    if (!call_begin(&c, TSC_NCCL_COMM_SPLIT))
        return real(comm, color, key, newcomm, config);
    /* Every rank of the parent splits, in the same order: the index of
     * this split is the same on all of them. */
    tsc_comm_info *parent = tsc_comm_lookup(comm);
    uint64_t idx = parent ? atomic_fetch_add(&parent->splits, 1) : 0;
    c.d.parent_comm_id = parent ? parent->comm_id : 0;
    c.d.color = color;
    if (color != TSC_NCCL_SPLIT_NOCOLOR)
        tsc_call_init_comm = tsc_comm_id_split(c.d.parent_comm_id, idx, color);
    call_start(&c);
    tsc_nccl_result_t rc = real(comm, color, key, newcomm, config);
    call_returned(&c);
    tsc_call_init_comm = 0;
    if (created(rc) && color != TSC_NCCL_SPLIT_NOCOLOR && newcomm && *newcomm) {
        int32_t r = -1, s = 0;
        query_rank_size(*newcomm, &r, &s);
        c.d.comm_id = tsc_comm_id_split(c.d.parent_comm_id, idx, color);
        c.d.comm_rank = (uint32_t)r;
        c.d.comm_size = (uint32_t)s;
        tsc_comm_add(*newcomm, c.d.comm_id, r, s);
    }
    call_end(&c, rc, 0);
    return rc;
}

EXPORT tsc_nccl_result_t ncclCommShrink(tsc_nccl_comm_t comm, int *excludeRanksList,
                                        int excludeRanksCount, tsc_nccl_comm_t *newcomm,
                                        tsc_nccl_config_t *config, int shrinkFlags)
{
    tsc_fn_comm_shrink real = (tsc_fn_comm_shrink)real_sym(S_COMM_SHRINK);
    if (!real)
        return no_nccl(S_COMM_SHRINK);
    call c;
    if (!call_begin(&c, TSC_NCCL_COMM_SHRINK))
        return real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    tsc_comm_info *parent = tsc_comm_lookup(comm);
    uint64_t idx = parent ? atomic_fetch_add(&parent->shrinks, 1) : 0;
    c.d.parent_comm_id = parent ? parent->comm_id : 0;
    c.d.count = excludeRanksCount > 0 ? (uint64_t)excludeRanksCount : 0;
    tsc_call_init_comm = tsc_comm_id_shrink(c.d.parent_comm_id, idx);
    call_start(&c);
    tsc_nccl_result_t rc =
        real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    call_returned(&c);
    tsc_call_init_comm = 0;
    if (created(rc) && newcomm && *newcomm) {
        int32_t r = -1, s = 0;
        query_rank_size(*newcomm, &r, &s);
        c.d.comm_id = tsc_comm_id_shrink(c.d.parent_comm_id, idx);
        c.d.comm_rank = (uint32_t)r;
        c.d.comm_size = (uint32_t)s;
        tsc_comm_add(*newcomm, c.d.comm_id, r, s);
    }
    call_end(&c, rc, 0);
    return rc;
}

/* Finalize, Destroy, Abort: one shape; the last two end the handle. */
static tsc_nccl_result_t comm_end_call(enum real_sym s, uint8_t op, tsc_nccl_comm_t comm,
                                       int forget)
{
    tsc_fn_comm real = (tsc_fn_comm)real_sym(s);
    if (!real)
        return no_nccl(s);
    call c;
    if (!call_begin(&c, op)) {
        tsc_nccl_result_t rc = real(comm);
        if (forget && (rc == tsc_ncclSuccess || s == S_COMM_ABORT)) {
            int e = errno;
            tsc_comm_remove(comm);
            errno = e;
        }
        return rc;
    }
    fill_comm(&c, tsc_comm_lookup(comm));
    call_start(&c);
    tsc_nccl_result_t rc = real(comm);
    call_returned(&c);
    /* Abort always ends the handle; a failed Destroy leaves it alive. */
    if (forget && (rc == tsc_ncclSuccess || s == S_COMM_ABORT))
        tsc_comm_remove(comm);
    call_end(&c, rc, 0);
    return rc;
}

EXPORT tsc_nccl_result_t ncclCommFinalize(tsc_nccl_comm_t comm)
{
    return comm_end_call(S_COMM_FINALIZE, TSC_NCCL_COMM_FINALIZE, comm, 0);
}

EXPORT tsc_nccl_result_t ncclCommDestroy(tsc_nccl_comm_t comm)
{
    return comm_end_call(S_COMM_DESTROY, TSC_NCCL_COMM_DESTROY, comm, 1);
}

EXPORT tsc_nccl_result_t ncclCommAbort(tsc_nccl_comm_t comm)
{
    return comm_end_call(S_COMM_ABORT, TSC_NCCL_COMM_ABORT, comm, 1);
}
