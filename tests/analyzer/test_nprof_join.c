/* The plugin's collectives against the NCCL calls (load/nprof_join.c) and
 * the transfer tables (passes/coll_transfer.c) on records made here, with
 * exact answers: copy-engine collectives between kernel ones (NCCL's count
 * does not move for them), a call captured into a graph and its replays
 * (with the count as it stands, before and after the next call), and the
 * per-peer and per-channel sums of a 3-rank ring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "load/nprof_join.h"
#include "load/rank_nprof.h"
#include "passes/coll_transfer.h"
#include "passes/nprof_summary.h"
#include "tsc_format.h"
#include "tsc_nccl_ops.h"

#define COMM 0xc0ffeeull
#define TID 42u

static void put(tsa_rank *r, uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
                uint64_t start, uint64_t end, uint64_t val)
{
    tsr_event e = {.kind = kind, .flags = flags, .aux = aux, .desc_id = desc, .start_ns = start,
                   .end_ns = end, .val = val, .tid = TID};
    assert_int_equal(tsa_nprof_on_event(r, &e), 0);
}

/* A rank of `ranks` on one communicator, its plugin communicator index 1. */
static void rank_init(tsa_rank *r, int rank, uint32_t ranks, tsa_nccl_op *calls, size_t n)
{
    memset(r, 0, sizeof *r);
    r->rank = rank;
    r->nccl = calls;
    r->n_nccl = n;
    put(r, TSC_EV_NP_COMM, 6, 1, (uint32_t)rank, 1, 1, COMM);
    (void)ranks;
}

/* Call i of op at [t, t + 100) with the communicator's sequence number i. */
static tsa_nccl_op call(uint8_t op, uint64_t seq, int64_t t, uint32_t rank, uint32_t ranks)
{
    return (tsa_nccl_op){.start_ns = t, .end_ns = t + 100, .seq = seq, .comm_id = COMM,
                         .comm_rank = rank, .comm_size = ranks, .tid = TID, .op = op,
                         .bytes = 4096, .kernel = -1, .peer = -1};
}

/* AllGathers: kernel, CE, kernel, CE, kernel.  NCCL numbers the kernel
 * ones 0, 1, 2; the CE ones carry their own numbers. */
static void test_copy_engine_shift(void **state)
{
    (void)state;
    tsa_nccl_op calls[5];
    for (int i = 0; i < 5; i++)
        calls[i] = call(TSC_NCCL_ALLGATHER, (uint64_t)i, 1000 * (i + 1), 0, 2);
    tsa_rank r;
    rank_init(&r, 0, 2, calls, 5);
    uint64_t kseq = 0, ceseq = 7;
    for (int i = 0; i < 5; i++) {
        uint64_t t = 1000u * (uint64_t)(i + 1) + 50;
        if (i % 2)
            put(&r, TSC_EV_NP_CE_COLL, 0, 1, (uint32_t)(i + 1), t, t + 10,
                TSC_NP_COLL_VAL(TSC_NCCL_ALLGATHER, ceseq += 2));
        else
            put(&r, TSC_EV_NP_COLL, 2, 1, (uint32_t)(i + 1), t, t + 10,
                TSC_NP_COLL_VAL(TSC_NCCL_ALLGATHER, kseq++));
    }
    tsa_np_join j;
    assert_int_equal(tsa_nprof_join(&r, &j), 0);
    assert_int_equal(j.colls, 5);
    assert_int_equal(j.joined, 5);
    for (size_t k = 0; k < 5; k++)
        assert_int_equal(j.call_of[k], (int64_t)k); /* records in call order */
    tsa_np_join_free(&j);
    tsa_nprof_free(&r);
}

/* AllReduces 0..3, the second captured into a graph (NCCL v5+ says so at
 * the call); two replays before call 2 (seq 1, the count unmoved), one
 * before call 3 (seq 2), one after the last call (seq 3). */
static void test_graph_capture_and_replays(void **state)
{
    (void)state;
    tsa_nccl_op calls[4];
    for (int i = 0; i < 4; i++)
        calls[i] = call(TSC_NCCL_ALLREDUCE, (uint64_t)i, 1000 * (i + 1), 0, 2);
    tsa_rank r;
    rank_init(&r, 0, 2, calls, 4);
    uint32_t id = 1;
    struct { uint64_t t, seq; } colls[] = {{1050, 0}, {2500, 1}, {2600, 1}, {3050, 1},
                                           {3500, 2}, {4050, 2}, {5000, 3}};
    put(&r, TSC_EV_NP_CAPTURED, 0, 1, 0, 2050, 2050, TSC_NP_COLL_VAL(TSC_NCCL_ALLREDUCE, 256));
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
        put(&r, TSC_EV_NP_COLL, 2, 1, id++, colls[i].t, colls[i].t + 10,
            TSC_NP_COLL_VAL(TSC_NCCL_ALLREDUCE, colls[i].seq));
    tsa_np_join j;
    assert_int_equal(tsa_nprof_join(&r, &j), 0);
    assert_int_equal(j.captured_calls, 1);
    assert_true(j.captured[1]);
    assert_int_equal(j.colls, 7);
    assert_int_equal(j.joined, 3);
    const int64_t want[] = {0, -1, -1, 2, -1, 3, -1};
    for (size_t k = 0; k < 7; k++) {
        assert_int_equal(j.call_of[k], want[k]);
        assert_int_equal(j.no_call[k], want[k] < 0);
    }
    tsa_np_join_free(&j);
    /* The summary groups the replays by sequence number. */
    tsa_job job = {.ranks = &r, .n_ranks = 1};
    tsa_np_summary s;
    assert_int_equal(tsa_np_summarize(&job, &s), 0);
    assert_int_equal(s.no_call, 4);
    assert_int_equal(s.n_replays, 3);
    assert_int_equal(s.replays[0].seq, 1);
    assert_int_equal(s.replays[0].colls, 2);
    assert_int_equal(s.replays[2].seq, 3);
    tsa_np_summary_free(&s);
    tsa_nprof_free(&r);
}

/* A 3-rank ring, 2 channels, 5 AllReduces: each rank sends to the next,
 * rank 1's sends take 3x longer; every kernel channel runs 7 us. */
static void test_transfer_tables(void **state)
{
    (void)state;
    enum { RANKS = 3, COLLS = 5, CH = 2 };
    tsa_rank ranks[RANKS];
    tsa_nccl_op calls[RANKS][COLLS];
    for (int r = 0; r < RANKS; r++) {
        for (int c = 0; c < COLLS; c++)
            calls[r][c] = call(TSC_NCCL_ALLREDUCE, (uint64_t)c, 100000 * (c + 1), (uint32_t)r,
                               RANKS);
        rank_init(&ranks[r], r, RANKS, calls[r], COLLS);
        for (int c = 0; c < COLLS; c++) {
            uint64_t t = 100000u * (uint64_t)(c + 1) + 10;
            uint32_t id = (uint32_t)(c + 1);
            put(&ranks[r], TSC_EV_NP_COLL, CH, 1, id, t, t + 5,
                TSC_NP_COLL_VAL(TSC_NCCL_ALLREDUCE, (uint64_t)c));
            for (int ch = 0; ch < CH; ch++) {
                uint64_t wire = r == 1 ? 30000 : 10000;
                put(&ranks[r], TSC_EV_NP_PROXY, (uint8_t)ch, 1, id, t + 10, t + 10 + wire, 1000);
                put(&ranks[r], TSC_EV_NP_PROXY_WAIT, 1, 4, (uint32_t)((r + 1) % RANKS), 200,
                    wire, 50);
                /* the receive from the previous rank: not the sender's row */
                put(&ranks[r], TSC_EV_NP_PROXY, (uint8_t)ch, 1, id, t + 10, t + 10 + wire, 1000);
                put(&ranks[r], TSC_EV_NP_PROXY_WAIT, 0, 4, (uint32_t)((r + 2) % RANKS), wire,
                    100, 50);
                put(&ranks[r], TSC_EV_NP_KERNEL_CH, (uint8_t)ch, 1, id, t + 20, t + 9000, 7000);
            }
        }
    }
    tsa_job job = {.ranks = ranks, .n_ranks = RANKS};
    tsa_coll_xfer *x;
    size_t n;
    assert_int_equal(tsa_coll_xfers(&job, &x, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(x[0].op, TSC_NCCL_ALLREDUCE);
    assert_int_equal(x[0].comm_id, COMM);
    assert_int_equal(x[0].comm_size, RANKS);
    assert_int_equal(x[0].colls, RANKS * COLLS);
    assert_int_equal(x[0].ranks, RANKS);
    assert_int_equal(x[0].bytes, RANKS * COLLS * CH * 1000);
    assert_int_equal(x[0].n_peers, 3);
    for (size_t i = 0; i < 3; i++) {
        const tsa_xfer *p = &x[0].peers[i];
        assert_int_equal(p->dst, (p->src + 1) % RANKS);
        assert_int_equal(p->ops, COLLS * CH);
        assert_int_equal(p->steps, COLLS * CH * 4);
        assert_int_equal(p->bytes, COLLS * CH * 1000);
        assert_int_equal(p->wire_ns, COLLS * CH * (p->src == 1 ? 30000 : 10000));
        assert_int_equal(p->wait_peer_ns, COLLS * CH * 200);
    }
    assert_int_equal(x[0].n_channels, CH);
    for (size_t i = 0; i < CH; i++) {
        const tsa_xfer *c = &x[0].channels[i];
        assert_int_equal(c->channel, (int)i);
        assert_int_equal(c->ops, RANKS * COLLS);
        assert_int_equal(c->wire_ns, COLLS * (30000 + 2 * 10000));
        assert_int_equal(c->kernel_n, RANKS * COLLS);
        assert_int_equal(c->kernel_ns, RANKS * COLLS * 7000);
    }
    tsa_coll_xfers_free(x, n);
    for (int r = 0; r < RANKS; r++)
        tsa_nprof_free(&ranks[r]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_engine_shift),
        cmocka_unit_test(test_graph_capture_and_replays),
        cmocka_unit_test(test_transfer_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
