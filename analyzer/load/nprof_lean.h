/* A rank's NCCL profiler plugin records reduced to what the job-level
 * passes read of them, made while the rank is whole (its calls in hand):
 * a lean rank (the streaming report's, tscope-report-mpi's process 0's)
 * keeps this instead of the records, which would otherwise grow with its
 * collectives (48 bytes each in light capture, the default: 2 GB for
 * 10,240 ranks x 4,000 calls).
 *
 *  - the summary's (passes/nprof_summary.h): counts, the join's counts,
 *    the collectives without a call grouped with their steps (replays),
 *    and, per collective with kernel channels (full capture), its longest
 *    channel's time: the quantiles are taken over the job's;
 *  - the transfer tables' (passes/coll_transfer.h): sender-side proxy ops
 *    summed per (collective, peer, channel), kernel channels per
 *    (collective, channel), distinct collectives per (communicator, op);
 *  - the links' (findings/netlink.h): proxy ops per (communicator, peer,
 *    channel, direction), each op's (network steps, time) kept, since the
 *    rule takes medians and shares above a job-wide threshold of them,
 *    and their steps' wait for the GPU summed (a starved proxy's sign);
 *  - the link cause's (findings/cause_link.h): the rank's send/recv proxy
 *    ops, each with its start (the rank's analysis window is known later).
 *
 * Light capture keeps no proxy ops or kernel channels: a few counts per
 * rank.  Every pass reads a rank's part through tsa_rank_np_lean
 * (nprof_reduce.h), which gives the kept one or makes it from a whole
 * rank's records, so the answer is the same either way.  Peers stay
 * communicator ranks (the map to global ranks is the job's,
 * comm_ranks.h).  This file: the parts, their bytes and their packing. */
#ifndef TSA_LOAD_NPROF_LEAN_H
#define TSA_LOAD_NPROF_LEAN_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "pack_buf.h"
#include "util/varint.h"

/* Which parts: the summary's, the transfer tables', the links', the link
 * cause's. */
enum {
    TSA_NPL_SUMMARY = 1,
    TSA_NPL_XFER = 2,
    TSA_NPL_LINKS = 4,
    TSA_NPL_P2P = 8,
    TSA_NPL_ALL = 15
};

/* One rank's collectives without a call of one communicator, function
 * and NCCL sequence number: the replays of one captured collective. */
typedef struct tsa_np_replay {
    int32_t rank;
    uint64_t comm_id;
    uint8_t op;
    uint64_t seq;
    size_t colls;
    size_t proxy_ops, steps;
    uint64_t bytes, wire_ns;
    double kernel_ns;       /* GPU time of a collective (longest channel), median; -1 none */
} tsa_np_replay;

/* Sender-side proxy ops of one (collective, peer, channel), summed; or
 * (kernel) the GPU-timed kernel channels of one (collective, channel):
 * ops records, wire_ns their GPU time. */
typedef struct tsa_np_xfer_part {
    uint64_t comm_id;
    uint8_t op, kernel, channel;
    int32_t peer;           /* in the communicator; -1 in a kernel part */
    uint64_t ops, steps, bytes, wire_ns, wait_peer_ns;
} tsa_np_xfer_part;

/* Distinct collectives (op ids) with sender-side proxy ops, per
 * (communicator, op). */
typedef struct tsa_np_xfer_colls {
    uint64_t comm_id;
    uint8_t op;
    uint64_t colls;
} tsa_np_xfer_colls;

/* Proxy ops with steps of one (communicator, peer, channel, direction):
 * their bytes and wire time summed, and each op's (steps, time) as
 * varints at [at, at + len) of the rank's link_ops (tsa_np_link_ops). */
typedef struct tsa_np_link_part {
    uint64_t comm_id;
    int32_t peer;
    uint8_t channel, send;
    uint64_t n_ops, bytes, wire_ns;
    uint64_t steps, gpu_ns;  /* summed: the time its steps waited for the GPU */
    size_t at, len;
} tsa_np_link_part;

/* One proxy op of the rank's send/recv: t is its time on the wire (send)
 * or waiting for the data (receive). */
typedef struct tsa_np_p2p_op {
    uint64_t comm_id;
    int32_t peer;
    uint8_t channel, send;
    uint32_t steps;
    int64_t start_ns;
    uint64_t t_ns;
} tsa_np_p2p_op;

typedef struct tsa_np_lean {
    unsigned parts;                 /* TSA_NPL_* made */
    /* summary */
    size_t ce_colls, p2p, proxies, kch;
    int kch_gpu;
    size_t colls, joined, no_call, captured_calls;
    size_t n_kernel;                /* collectives with kernel channels ... */
    tsa_bytes kernel;               /* ... their longest channel's ns, ascending, as differences */
    size_t n_replays;
    tsa_bytes replays;              /* tsa_np_replay but the rank, as varints (tsa_np_lean_replays) */
    /* transfer tables */
    tsa_np_xfer_part *xfer; size_t n_xfer;
    tsa_np_xfer_colls *xfer_colls; size_t n_xfer_colls;
    /* links */
    tsa_np_link_part *links; size_t n_links;
    tsa_bytes link_ops;
    /* link cause */
    tsa_np_p2p_op *p2p_ops; size_t n_p2p_ops;
} tsa_np_lean;

void tsa_np_lean_free(tsa_np_lean *l);

/* The reducer's writers (nprof_reduce.c): each 0, or -1 when out of
 * memory.  ns[0..n) ascending as the collectives' kernel times; the
 * replay groups g[0..n); a link part's ops (steps[i], t[i]) for i < n,
 * appended to link_ops, p->at, len and n_ops set. */
int tsa_np_lean_set_kernel_times(tsa_np_lean *l, const uint64_t *ns, size_t n);
int tsa_np_lean_set_replays(tsa_np_lean *l, const tsa_np_replay *g, size_t n);
int tsa_np_lean_add_link_ops(tsa_np_lean *l, tsa_np_link_part *p, const uint32_t *steps,
                             const uint64_t *t, size_t n);

/* The kept bytes, read back.  Each 0, or -1 on damaged bytes (a kept lean
 * is checked whole when received: tsa_np_lean_get). */
/* the collectives' kernel times into out[0..l->n_kernel) */
int tsa_np_lean_kernel_times(const tsa_np_lean *l, uint64_t *out);
/* the replay groups into out[0..l->n_replays), rank left 0 */
int tsa_np_lean_replays(const tsa_np_lean *l, tsa_np_replay *out);
/* a link part's ops: steps[i], t[i] for i < p->n_ops */
int tsa_np_link_ops(const tsa_np_lean *l, const tsa_np_link_part *p, uint32_t *steps,
                    uint64_t *t);

/* As bytes, for share_pack.c: put appends; get fills l (zeroed first) and
 * checks every part, 0, or -1 (c->bad set) on a short or damaged buffer. */
int tsa_np_lean_put(tsa_pack_buf *b, const tsa_np_lean *l);
int tsa_np_lean_get(tsa_cursor *c, tsa_np_lean *l);

#endif
