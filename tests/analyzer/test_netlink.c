/* NET.SLOW_LINK and the plugin record loader on records made here: exact
 * figures for a ring of 4 ranks on 2 channels, paced as NCCL's ring is,
 * where one link is 3x slower on one channel or 4x on both, nothing on a
 * balanced ring, a slow host or a starved process, and hostile records
 * that must not crash or mislead. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "findings/netlink.h"
#include "load/nprof_join.h"
#include "load/rank_nprof.h"
#include "passes/coll_transfer.h"
#include "passes/nprof_summary.h"
#include "tsc_format.h"

#define RANKS 4
#define OPS 10   /* proxy ops per link */
#define STEPS 4

static void put(tsa_rank *r, uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
                uint64_t start, uint64_t end, uint64_t val, uint32_t tid)
{
    tsr_event e = {.kind = kind, .flags = flags, .aux = aux, .desc_id = desc, .start_ns = start,
                   .end_ns = end, .val = val, .tid = tid};
    assert_int_equal(tsa_nprof_on_event(r, &e), 0);
}

/* One proxy op of rank r: per-step time `step_ns` on the wire (send) or
 * waiting for the data (receive), and `gpu_ns` per step waiting for the
 * GPU. */
static void proxy(tsa_rank *r, int ch, int peer, int send, uint64_t step_ns, uint64_t gpu_ns,
                  uint64_t t)
{
    put(r, TSC_EV_NP_PROXY, (uint8_t)ch, 1, 7, t, t + step_ns * STEPS, 4096, 100);
    put(r, TSC_EV_NP_PROXY_WAIT, (uint8_t)send, STEPS, (uint32_t)peer,
        send ? 0 : step_ns * STEPS, send ? step_ns * STEPS : 0, gpu_ns * STEPS, 100);
}

/* What goes wrong in a ring, as the simulated network of the test NCCL
 * makes it (tests/testbed/fakenccl/fn_net.h). */
typedef struct {
    int slow_src, slow_ch;  /* link slow_src -> slow_src + 1 (slow_ch -1: every channel) */
    uint64_t factor;
    int slow_host;          /* every link to or from it `factor` times slower */
    int starved;            /* its proxy late by 200 us at every state */
} ring_fault;

/* A ring of RANKS on 2 channels as NCCL's ring all-reduce runs it: each
 * rank sends to the next and receives from the previous, 100 us per step
 * on the wire, 10 us waiting for the GPU.  Every receive waits at the
 * pace of the slowest link (250 us a step on a balanced ring here too:
 * the other hops' sends and GPU waits), so receives tell links apart
 * nowhere; only the senders' time on the wire does. */
static void ring(tsa_job *job, tsa_rank *ranks, ring_fault f)
{
    memset(ranks, 0, sizeof(tsa_rank) * RANKS);
    *job = (tsa_job){.ranks = ranks, .n_ranks = RANKS};
    for (int r = 0; r < RANKS; r++) {
        ranks[r].rank = r;
        put(&ranks[r], TSC_EV_NP_COMM, 5, 1, (uint32_t)r, 1000, 1000, 0, 100);
        int next = (r + 1) % RANKS, prev = (r + RANKS - 1) % RANKS;
        uint64_t lag = r == f.starved ? 200000 : 0;
        for (int op = 0; op < OPS; op++)
            for (int ch = 0; ch < 2; ch++) {
                uint64_t wire = 100000;
                if (r == f.slow_src && (f.slow_ch < 0 || ch == f.slow_ch))
                    wire *= f.factor;
                if (r == f.slow_host || next == f.slow_host)
                    wire *= f.factor;
                uint64_t t = 1000000 + (uint64_t)op * 10000000;
                proxy(&ranks[r], ch, next, 1, wire + lag, 10000 + lag, t);
                proxy(&ranks[r], ch, prev, 0, 250000 + lag, 10000 + lag, t);
            }
    }
}

static const ring_fault NO_FAULT = {.slow_src = -1, .slow_ch = -1, .factor = 1,
                                    .slow_host = -1, .starved = -1};

static void free_ring(tsa_rank *ranks)
{
    for (int r = 0; r < RANKS; r++)
        tsa_nprof_free(&ranks[r]);
}

static double number(const tsa_finding *f, const char *name)
{
    for (size_t i = 0; i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].name, name))
            return f->numbers[i].value;
    fail_msg("no number %s", name);
    return 0;
}

/* Runs the rule over a ring with fault rf and returns its one finding. */
static const tsa_finding *the_one_finding(tsa_job *job, tsa_rank *ranks, ring_fault rf,
                                          tsa_findings *out)
{
    ring(job, ranks, rf);
    tsa_analysis a = {.job = job};
    assert_int_equal(tsa_netlink_findings(&a, out), 0);
    assert_int_equal(out->n, 1);
    return &out->items[0];
}

static void test_one_slow_link_exact(void **state)
{
    (void)state;
    tsa_rank ranks[RANKS];
    tsa_job job;
    ring_fault rf = NO_FAULT;
    rf.slow_src = 1, rf.slow_ch = 1, rf.factor = 3;
    tsa_findings out = {0};
    const tsa_finding *f = the_one_finding(&job, ranks, rf, &out);
    assert_string_equal(f->id, "NET.SLOW_LINK");
    assert_int_equal(f->rank, 1);
    assert_int_equal((int)number(f, "src_rank"), 1);
    assert_int_equal((int)number(f, "dst_rank"), 2);
    /* Channel 1's other hops at 100 us a step, this one at 300: ratio 3. */
    assert_float_equal(number(f, "ratio"), 3.0, 1e-9);
    assert_float_equal(number(f, "step_us"), 300.0, 1e-9);
    assert_float_equal(number(f, "median_link_step_us"), 100.0, 1e-9);
    assert_float_equal(number(f, "channel_mask"), 2, 0);
    /* 4096 bytes per op over 4 steps: GB/s = bytes / ns. */
    assert_float_equal(number(f, "gbps"), 4096.0 / (300000.0 * 4), 1e-12);
    assert_float_equal(number(f, "others_gbps"), 4096.0 / (100000.0 * 4), 1e-12);
    assert_non_null(strstr(f->title, "link rank 1 -> rank 2 (channel 1)"));
    assert_non_null(strstr(f->title, "3.0x"));
    tsa_findings_free(&out);
    free_ring(ranks);
}

/* The other links' bandwidth that NET.SLOW_LINK quotes: their bytes over
 * their time on the wire (the ring's 4096 bytes per op over 4 steps of
 * 100 us); with no wire time recorded on any of them it is unknown (NAN,
 * null in JSON), not 0 GB/s. */
static void test_other_links_gbps_unknown_without_wire(void **state)
{
    (void)state;
    tsa_rank ranks[RANKS];
    tsa_job job;
    ring_fault rf = NO_FAULT;
    rf.slow_src = 1, rf.slow_ch = 1, rf.factor = 3;
    ring(&job, ranks, rf);
    tsa_link_stat *l;
    size_t n;
    double med;
    assert_int_equal(tsa_link_stats(&job, &l, &n, &med), 0);
    assert_int_equal(n, RANKS * 2); /* one link per rank and channel */
    assert_float_equal(tsa_other_links_gbps(l, n), 4096.0 / (100000.0 * 4), 1e-12);
    size_t slow = 0;
    for (size_t i = 0; i < n; i++)
        if (l[i].src == 1 && l[i].channel == 1)
            slow++;
        else
            l[i].wire_ns = 0; /* not recorded */
    assert_int_equal(slow, 1);
    assert_true(isnan(tsa_other_links_gbps(l, n)));
    free(l);
    free_ring(ranks);
}

/* Slow on both channels: no channel of the pair is a peer of the other. */
static void test_slow_link_on_both_channels(void **state)
{
    (void)state;
    tsa_rank ranks[RANKS];
    tsa_job job;
    ring_fault rf = NO_FAULT;
    rf.slow_src = 3, rf.factor = 4;
    tsa_findings out = {0};
    const tsa_finding *f = the_one_finding(&job, ranks, rf, &out);
    assert_int_equal((int)number(f, "src_rank"), 3);
    assert_int_equal((int)number(f, "dst_rank"), 0);
    assert_float_equal(number(f, "ratio"), 4.0, 1e-9);
    assert_float_equal(number(f, "channel_mask"), 3, 0);
    assert_non_null(strstr(f->title, "link rank 3 -> rank 0 (channels 0,1)"));
    tsa_findings_free(&out);
    free_ring(ranks);
}

/* The job's links (the caller frees them), n of them. */
static tsa_link_stat *links_of(tsa_job *job, size_t *n)
{
    tsa_link_stat *l;
    double med;
    assert_int_equal(tsa_link_stats(job, &l, n, &med), 0);
    return l;
}

static void assert_no_finding(tsa_job *job)
{
    tsa_analysis a = {.job = job};
    tsa_findings out = {0};
    assert_int_equal(tsa_netlink_findings(&a, &out), 0);
    assert_int_equal(out.n, 0);
    tsa_findings_free(&out);
}

static void test_balanced_ring_names_nothing(void **state)
{
    (void)state;
    tsa_rank ranks[RANKS];
    tsa_job job;
    ring(&job, ranks, NO_FAULT);
    assert_no_finding(&job);
    free_ring(ranks);
}

/* A ring with fault rf names no link; check() sees its links first. */
static void expect_no_link(ring_fault rf, void (*check)(const tsa_link_stat *l, size_t n))
{
    tsa_rank ranks[RANKS];
    tsa_job job;
    ring(&job, ranks, rf);
    size_t n;
    tsa_link_stat *l = links_of(&job, &n);
    assert_int_equal(n, 8);
    check(l, n);
    free(l);
    assert_no_finding(&job);
    free_ring(ranks);
}

/* 2 -> 3: its sender's other link, 1 -> 2, is as slow, and so on. */
static void ends_as_slow(const tsa_link_stat *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (l[i].src == 2)
            assert_float_equal(l[i].src_other_rel, 4.0, 1e-9);
        if (l[i].dst == 2)
            assert_float_equal(l[i].dst_other_rel, 4.0, 1e-9);
    }
}

/* A slow host (its NIC): both its links, in and out, on every channel,
 * are 4x slower; each is slow against its hops, but each has an end whose
 * other link is as slow. */
static void test_slow_host_is_not_a_link(void **state)
{
    (void)state;
    ring_fault rf = NO_FAULT;
    rf.slow_host = 2, rf.factor = 4;
    expect_no_link(rf, ends_as_slow);
}

static void starved_sends(const tsa_link_stat *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].src == 2) {
            assert_float_equal(l[i].peer_rel, 3.0, 1e-9);
            assert_float_equal(l[i].src_gpu_rel, 21.0, 1e-9);
        }
}

/* A process whose proxy is starved of CPU: late by 200 us at every state,
 * so its sends read 3x on the wire, but so does its wait for the GPU
 * (21x the other ranks'). */
static void test_starved_process_is_not_a_link(void **state)
{
    (void)state;
    ring_fault rf = NO_FAULT;
    rf.starved = 2;
    expect_no_link(rf, starved_sends);
}

/* Hostile records: any field any value, WAITs without a proxy op, times
 * reversed or beyond 2^62, every plugin kind (0x50-0x5f).  Nothing
 * crashes, nothing implausible is kept, and the plugin's views (joins,
 * summary, transfer tables) read them without harm. */
static void test_hostile_records(void **state)
{
    (void)state;
    tsa_rank ranks[RANKS];
    memset(ranks, 0, sizeof ranks);
    tsa_job job = {.ranks = ranks, .n_ranks = RANKS};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t y = x * 0x2545f4914f6cdd1dull;
        tsa_rank *r = &ranks[x % RANKS];
        r->rank = (int)(x % RANKS);
        uint8_t kind = (uint8_t)(TSC_EV_NP_COMM + (y >> 60) % 16);
        uint64_t start = (y & 1) ? y >> 3 : y >> 30;
        uint64_t end = (y & 2) ? start + (x >> 44) : x;
        put(r, kind, (uint8_t)(y >> 8), (uint16_t)(y >> 16), (uint32_t)(x >> 32), start, end,
            y, (uint32_t)(x >> 50));
    }
    size_t kept = 0, orphans = 0;
    for (int r = 0; r < RANKS; r++) {
        const struct tsa_nprof *np = ranks[r].nprof;
        assert_non_null(np);
        for (size_t k = 0; k < np->n_proxies; k++) {
            assert_true(np->proxies[k].end_ns >= np->proxies[k].start_ns);
            assert_true((uint64_t)np->proxies[k].end_ns < (1ull << 62));
        }
        kept += np->n_proxies;
        orphans += np->orphan_waits;
    }
    assert_true(kept > 0);
    assert_true(orphans > 0);
    tsa_link_stat *l;
    size_t n;
    double med;
    assert_int_equal(tsa_link_stats(&job, &l, &n, &med), 0);
    free(l);
    tsa_analysis a = {.job = &job};
    tsa_findings out = {0};
    assert_int_equal(tsa_netlink_findings(&a, &out), 0);
    tsa_findings_free(&out);
    /* the plugin's views read the same records: joins, summary, tables */
    for (int r = 0; r < RANKS; r++) {
        tsa_np_join j;
        assert_int_equal(tsa_nprof_join(&ranks[r], &j), 0);
        assert_true(j.joined <= j.colls);
        tsa_np_join_free(&j);
    }
    tsa_np_summary s;
    assert_int_equal(tsa_np_summarize(&job, &s), 0);
    assert_true(s.no_call <= s.colls);
    tsa_np_summary_free(&s);
    tsa_coll_xfer *xf;
    size_t nx;
    assert_int_equal(tsa_coll_xfers(&job, &xf, &nx), 0);
    tsa_coll_xfers_free(xf, nx);
    free_ring(ranks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_slow_link_exact),
        cmocka_unit_test(test_other_links_gbps_unknown_without_wire),
        cmocka_unit_test(test_slow_link_on_both_channels),
        cmocka_unit_test(test_balanced_ring_names_nothing),
        cmocka_unit_test(test_slow_host_is_not_a_link),
        cmocka_unit_test(test_starved_process_is_not_a_link),
        cmocka_unit_test(test_hostile_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
