/* A rank's NCCL profiler plugin records (format: TSC_EV_NP_*), as loaded:
 * the communicators NCCL initialised the plugin for, the collectives and
 * send/recv it enqueued (by kernel or, v6, by the copy engines), their
 * kernels' channels, the proxy operations (one per channel and peer) with
 * where their network steps spent their time, the calls NCCL reported as
 * captured into a CUDA graph, and what the plugin could not record. */
#ifndef TSA_LOAD_RANK_NPROF_H
#define TSA_LOAD_RANK_NPROF_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "reader/dump_reader.h"

typedef struct tsa_np_comm {
    uint16_t index;     /* the records' aux */
    uint8_t version;    /* plugin ABI NCCL chose */
    int32_t rank;       /* in the communicator, -1 unknown */
    uint64_t comm_id;   /* tscope communicator id, 0 unknown */
} tsa_np_comm;

typedef struct tsa_np_coll {
    uint16_t comm;
    uint8_t op, channels;  /* channels: a CE collective's flags (its record's) */
    uint8_t ce;            /* 1: run by the copy engines (NP_CE_COLL), seq is NCCL's CE number */
    uint32_t op_id;
    uint64_t seq;       /* TSC_NP_COLL_SEQ of the record */
    int64_t start_ns, end_ns;
    uint32_t tid;       /* the thread NCCL reported it on */
} tsa_np_coll;

typedef struct tsa_np_proxy {
    uint16_t comm;
    uint8_t channel, is_send;
    uint8_t pxn;        /* run here for another process: comm and op_id unknown */
    uint32_t op_id;     /* its collective's, 0 unknown */
    int32_t peer;       /* rank in the communicator */
    uint32_t steps;
    int64_t start_ns, end_ns;
    uint64_t bytes;
    uint64_t wait_peer_ns, wire_ns, wait_gpu_ns;
    uint8_t have_wait;  /* its TSC_EV_NP_PROXY_WAIT was read */
} tsa_np_proxy;

/* One channel of a collective's kernel: when NCCL reported its start and
 * stop (host times), and its GPU time by the GPU's own timer. */
typedef struct tsa_np_kch {
    uint16_t comm;
    uint8_t channel, host_times;  /* host_times: no GPU timer (v3): gpu_ns 0 */
    uint32_t op_id;
    int64_t start_ns, end_ns;
    uint64_t gpu_ns;
} tsa_np_kch;

/* A kernel channel's time: by the GPU's timer, else as NCCL saw it. */
uint64_t tsa_np_kch_ns(const tsa_np_kch *k);

/* A CE collective's sync (batch 0) or batch of copies (batch 1). */
typedef struct tsa_np_ce_part {
    uint16_t comm;
    uint8_t batch, flags;
    uint32_t op_id;
    int64_t start_ns, end_ns;
    uint64_t bytes;         /* a batch's */
    uint32_t count;         /* a batch's copies, a sync's ranks */
} tsa_np_ce_part;

/* An API call NCCL reported as captured into a CUDA graph. */
typedef struct tsa_np_captured {
    uint16_t comm;
    uint8_t op, p2p;
    uint64_t count;
    int64_t ns;
    uint32_t tid;
} tsa_np_captured;

/* A proxy op the writer found with no progress for a while
 * (TSC_EV_NP_PROXY_STALL): its latest such record. */
typedef struct tsa_np_stall {
    uint16_t comm;
    uint8_t channel, send;
    uint8_t state;      /* NCCL's state of its latest step; TSC_NP_STALL_STEP_ENDED none open */
    int32_t peer;       /* rank in the communicator */
    uint32_t op_id;     /* its collective's */
    uint32_t steps;     /* steps ended */
    int64_t start_ns, last_ns;
} tsa_np_stall;

#define TSA_NP_PENDING 16

struct tsa_nprof {
    tsa_np_comm *comms;   size_t n_comms, cap_comms;
    tsa_np_coll *colls;   size_t n_colls, cap_colls;
    tsa_np_proxy *proxies; size_t n_proxies, cap_proxies;
    tsa_np_kch *kch;      size_t n_kch, cap_kch;
    tsa_np_ce_part *ce_parts; size_t n_ce_parts, cap_ce_parts;
    tsa_np_captured *captured; size_t n_captured, cap_captured;
    tsa_np_stall *stalls; size_t n_stalls, cap_stalls;
    /* The proxy record each thread wrote last, waiting for its WAIT. */
    uint32_t pend_tid[TSA_NP_PENDING];
    size_t pend_idx[TSA_NP_PENDING];
    uint64_t orphan_waits; /* WAIT records with no proxy record before them */
    uint64_t lost;         /* META nccl_profiler_lost: events the plugin could not record */
    uint64_t pxn_ops;      /* META nccl_profiler_pxn_ops: ops run here for another process */
    /* A lean rank's: what the job-level passes read of the records
     * (nprof_lean.h), whose arrays it does not keep (comms aside). */
    struct tsa_np_lean *lean;
};

/* One TSC_EV_NP_* record; 0, or -1 when out of memory. */
int tsa_nprof_on_event(tsa_rank *r, const tsr_event *e);
/* The plugin's META keys (nccl_profiler_lost, _pxn_ops); 0, or -1 when
 * out of memory; keys of others are ignored. */
int tsa_nprof_on_meta(tsa_rank *r, const char *key, const char *value);
void tsa_nprof_free(tsa_rank *r);

/* 1 when the stalled op s later ended (its NP_PROXY is in np). */
int tsa_np_stall_ended(const struct tsa_nprof *np, const tsa_np_stall *s);

/* The communicator entry of index idx, NULL unknown. */
const tsa_np_comm *tsa_nprof_comm(const struct tsa_nprof *np, uint16_t idx);

#endif
