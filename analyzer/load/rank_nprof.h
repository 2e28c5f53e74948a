/* A rank's NCCL profiler plugin records (format: TSC_EV_NP_*), as loaded:
 * the communicators NCCL initialised the plugin for, the collectives and
 * send/recv it enqueued, and the proxy operations (one per channel and
 * peer) with where their network steps spent their time. */
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
    uint8_t op, channels;
    uint32_t op_id;
    uint64_t seq;       /* TSC_NP_COLL_SEQ of the record */
    int64_t start_ns, end_ns;
} tsa_np_coll;

typedef struct tsa_np_proxy {
    uint16_t comm;
    uint8_t channel, is_send;
    uint32_t op_id;     /* its collective's, 0 unknown */
    int32_t peer;       /* rank in the communicator */
    uint32_t steps;
    int64_t start_ns, end_ns;
    uint64_t bytes;
    uint64_t wait_peer_ns, wire_ns, wait_gpu_ns;
    uint8_t have_wait;  /* its TSC_EV_NP_PROXY_WAIT was read */
} tsa_np_proxy;

#define TSA_NP_PENDING 16

struct tsa_nprof {
    tsa_np_comm *comms;   size_t n_comms, cap_comms;
    tsa_np_coll *colls;   size_t n_colls, cap_colls;
    tsa_np_proxy *proxies; size_t n_proxies, cap_proxies;
    /* The proxy record each thread wrote last, waiting for its WAIT. */
    uint32_t pend_tid[TSA_NP_PENDING];
    size_t pend_idx[TSA_NP_PENDING];
    uint64_t orphan_waits; /* WAIT records with no proxy record before them */
};

/* One TSC_EV_NP_* record; 0, or -1 when out of memory. */
int tsa_nprof_on_event(tsa_rank *r, const tsr_event *e);
void tsa_nprof_free(tsa_rank *r);

/* The communicator entry of index idx, NULL unknown. */
const tsa_np_comm *tsa_nprof_comm(const struct tsa_nprof *np, uint16_t idx);

/* How many of the rank's plugin collectives (not send/recv) match one of
 * its NCCL call records: the same communicator, the same function, and
 * NCCL's per-function sequence number equal to the call's place among the
 * rank's calls of that function on that communicator. */
size_t tsa_nprof_joined(const tsa_rank *r, size_t *colls);

#endif
