/* NCCL profiler plugin records of the ground-truth generator (gen_job.h),
 * as tscope's plugin writes them (docs/format.md, "NCCL profiler plugin
 * records"), on the one communicator every collective of the job uses:
 *
 *   light (nprof 1, the preload's default): at start-up the
 *     communicator's record (ABI v5), then one plugin collective per NCCL
 *     collective, enqueued inside its call, numbered per function as NCCL
 *     does (the Broadcast 0, the AllReduces 0, 1, 2, ...): each joins its
 *     call;
 *   full (nprof 2): also, per collective on a communicator of more than one
 *     rank, per channel (2) its kernel channel (GPU-timed) and a ring's two
 *     proxy ops, a send to the next rank and a receive from the one before,
 *     4 network steps each of ~50 us (+-10%) on the wire; the link
 *     slow_src -> slow_src + 1 is slow_factor times slower (the receiver
 *     waits for the data as long).
 *
 * The records of a collective come out in the order a thread writes them
 * (a proxy op's WAIT right after it); times are the rank's own clock. */
#ifndef TSC_GEN_NPROF_H
#define TSC_GEN_NPROF_H

#include <stddef.h>
#include <stdint.h>

#include "gen_job.h"

typedef struct gen_np_rec {
    uint8_t kind, flags;
    uint16_t aux;
    uint32_t desc;
    int64_t start, end;
    uint64_t val;
} gen_np_rec;

#define GEN_NP_CHANNELS 2
#define GEN_NP_MAX_RECS (1 + GEN_NP_CHANNELS * 5)

/* A rank's plugin state: op ids and per-function numbers so far. */
typedef struct gen_np_rank {
    int rank;
    uint32_t next_op_id;
    uint64_t seq_broadcast, seq_allreduce;
    uint64_t rng;
} gen_np_rank;

/* The META value of "nccl_profiler" ("v5 light", "v5 full"), NULL none. */
const char *gen_np_meta(const gen_options *o);
/* The communicator's record of rank r, at t_ns; starts *st. */
gen_np_rec gen_np_comm(int r, int64_t t_ns, gen_np_rank *st);
/* The records of one collective (op: TSC_NCCL_BROADCAST or _ALLREDUCE,
 * bytes its size) called at [call_start, call_end) whose kernel ran
 * [ks, ke) (rank clock); returns their count (<= GEN_NP_MAX_RECS). */
size_t gen_np_coll(const gen_options *o, gen_np_rank *st, uint8_t op, uint64_t bytes,
                   int64_t call_start, int64_t call_end, int64_t ks, int64_t ke,
                   gen_np_rec out[GEN_NP_MAX_RECS]);

#endif
