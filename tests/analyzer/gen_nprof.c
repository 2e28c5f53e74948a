/* The generator's plugin records (gen_nprof.h). */
#include "gen_nprof.h"

#include "tsc_format.h"
#include "tsc_nccl_ops.h"

#define COMM_INDEX 1           /* the plugin's communicator index (aux) */
#define COMM_ID 0x5eed0001ull  /* the calls' communicator (gen_job.c) */
#define NET_STEPS 4
#define STEP_NS 50000

const char *gen_np_meta(const gen_options *o)
{
    return o->nprof == 1 ? "v5 light" : o->nprof == 2 ? "v5 full" : NULL;
}

gen_np_rec gen_np_comm(int r, int64_t t_ns, gen_np_rank *st)
{
    *st = (gen_np_rank){.rank = r, .next_op_id = 1, .rng = 0x9E3779B97F4A7C15ull * (uint64_t)(r + 1)};
    return (gen_np_rec){.kind = TSC_EV_NP_COMM, .flags = 5, .aux = COMM_INDEX,
                        .desc = (uint32_t)r, .start = t_ns, .end = t_ns, .val = COMM_ID};
}

/* A step time within +-10% of STEP_NS, times factor. */
static uint64_t step_ns(gen_np_rank *st, double factor)
{
    st->rng = st->rng * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t jitter = (st->rng >> 33) % (STEP_NS / 5);
    return (uint64_t)((double)(STEP_NS - STEP_NS / 10 + jitter) * factor);
}

/* One proxy op and its WAIT: to (send) or from peer on channel ch. */
static size_t proxy(gen_np_rec *out, uint32_t op_id, int ch, int send, int peer, uint64_t bytes,
                    int64_t ks, int64_t ke, uint64_t per_step)
{
    uint64_t t = per_step * NET_STEPS;
    out[0] = (gen_np_rec){.kind = TSC_EV_NP_PROXY, .flags = (uint8_t)ch, .aux = COMM_INDEX,
                          .desc = op_id, .start = ks, .end = ke, .val = bytes};
    /* send: wait for credit, then on the wire; receive: wait for the data,
     * then the flush */
    out[1] = (gen_np_rec){.kind = TSC_EV_NP_PROXY_WAIT, .flags = (uint8_t)send,
                          .aux = NET_STEPS, .desc = (uint32_t)peer,
                          .start = send ? 2000 : (int64_t)t, .end = send ? (int64_t)t : 1000,
                          .val = 500};
    return 2;
}

size_t gen_np_coll(const gen_options *o, gen_np_rank *st, uint8_t op, uint64_t bytes,
                   int64_t call_start, int64_t call_end, int64_t ks, int64_t ke,
                   gen_np_rec out[GEN_NP_MAX_RECS])
{
    uint32_t op_id = st->next_op_id++;
    uint64_t seq = op == TSC_NCCL_BROADCAST ? st->seq_broadcast++ : st->seq_allreduce++;
    /* enqueued inside the call */
    int64_t span = call_end - call_start;
    size_t n = 0;
    out[n++] = (gen_np_rec){.kind = TSC_EV_NP_COLL, .flags = GEN_NP_CHANNELS,
                            .aux = COMM_INDEX, .desc = op_id, .start = call_start + span / 4,
                            .end = call_start + span / 2, .val = TSC_NP_COLL_VAL(op, seq)};
    if (o->nprof < 2 || o->ranks < 2)
        return n;
    int next = (st->rank + 1) % o->ranks, prev = (st->rank + o->ranks - 1) % o->ranks;
    for (int ch = 0; ch < GEN_NP_CHANNELS; ch++) {
        out[n++] = (gen_np_rec){.kind = TSC_EV_NP_KERNEL_CH, .flags = (uint8_t)ch,
                                .aux = COMM_INDEX, .desc = op_id, .start = ks + 2000,
                                .end = ke + 5000, .val = (uint64_t)(ke - ks)};
        double to_next = st->rank == o->nprof_slow_src ? o->nprof_slow_factor : 1;
        double from_prev = prev == o->nprof_slow_src ? o->nprof_slow_factor : 1;
        uint64_t share = bytes / GEN_NP_CHANNELS;
        n += proxy(out + n, op_id, ch, 1, next, share, ks, ke, step_ns(st, to_next));
        n += proxy(out + n, op_id, ch, 0, prev, share, ks, ke, step_ns(st, from_prev));
    }
    return n;
}
