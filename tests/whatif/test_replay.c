/* The what-if replay on small hand-made graphs whose answers are known by
 * hand: the record replays to itself, fixes save exactly what the
 * arithmetic says, overlapping fixes do not add up, a worker that only
 * waits for its upstream is never given a saving, and the critical path
 * is the chain worked out on paper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "whatif/wi_graph.h"

static uint32_t node(wi_graph *g, int rank, int kind, int64_t s, int64_t e, int64_t dur,
                     int64_t ideal)
{
    wi_node n = {.rec_start = s, .rec_end = e, .dur = dur, .ideal = ideal, .rank = rank,
                 .kind = (uint8_t)kind, .src = -1};
    assert_int_equal(wi_graph_add_node(g, &n), 0);
    return (uint32_t)g->n_nodes - 1;
}

static void hub(wi_graph *g, const uint32_t *m, size_t n, const int *gated)
{
    assert_int_equal(wi_graph_add_hub(g, 0, m, n), 0);
    for (size_t i = 0; i < n; i++)
        if (gated[i])
            assert_int_equal(wi_graph_add_gate(g, m[i], (uint32_t)g->n_hubs - 1), 0);
}

static void done(wi_graph *g)
{
    assert_int_equal(wi_graph_finish(g), 0);
    assert_int_equal(wi_graph_order(g), 0);
}

static int64_t replay(wi_graph *g, wi_fix_by by, int32_t value, wi_times *t)
{
    static const int32_t stage_of[] = {0, 0, 1};
    wi_fix f = {.by = by, .value = value, .stage_of = stage_of, .dp_of = stage_of};
    return wi_replay_step(g, 0, &f, t);
}

/* Two workers meet in a collective; worker 1 computes 25 (ideal 10),
 * worker 0 10 (ideal 4); the transfer is 5. */
static void collective_waits_for_last(void **state)
{
    (void)state;
    wi_graph g = {0};
    uint32_t c0 = node(&g, 0, WI_COMPUTE, 0, 10, 10, 4);
    uint32_t a0 = node(&g, 0, WI_COMM, 10, 30, 5, 5);
    uint32_t c1 = node(&g, 1, WI_COMPUTE, 0, 25, 25, 10);
    uint32_t a1 = node(&g, 1, WI_COMM, 25, 30, 5, 5);
    assert_int_equal(wi_graph_add_dep(&g, a0, c0), 0);
    assert_int_equal(wi_graph_add_dep(&g, a1, c1), 0);
    uint32_t m[] = {a0, a1};
    int gated[] = {1, 1};
    hub(&g, m, 2, gated);
    done(&g);
    wi_times t;
    assert_int_equal(wi_times_alloc(&t, &g), 0);
    assert_int_equal(replay(&g, WI_FIX_NONE, 0, &t), 30);
    assert_int_equal(wi_step_recorded(&g, 0), 30);
    assert_int_equal(t.end[a0], 30);
    assert_int_equal(replay(&g, WI_FIX_WORKER, 1, &t), 15);   /* the late one: saves 15 */
    assert_int_equal(replay(&g, WI_FIX_WORKER, 0, &t), 30);   /* the early one: saves 0 */
    assert_int_equal(replay(&g, WI_FIX_ALL, 0, &t), 15);
    /* critical path of the record: worker 1's compute, its arrival, worker 0's end */
    assert_int_equal(replay(&g, WI_FIX_NONE, 0, &t), 30);
    uint32_t path[8];
    uint8_t via[8];
    size_t n = wi_critical_path(&g, 0, &t, path, via, 8);
    assert_int_equal(n, 3);
    assert_int_equal(path[0], c1);
    assert_int_equal(path[1], a1);
    assert_int_equal(path[2], a0);
    assert_int_equal(via[0], 0);   /* a1 waited for c1's end */
    assert_int_equal(via[1], 1);   /* a0 waited for a1's start */
    wi_times_free(&t);
    wi_graph_free(&g);
}

/* Three workers, one collective.  Worker 0 computes 20 (ideal 10), worker
 * 1 18 (ideal 10), worker 2 5.  Fixing worker 0 saves 2 (worker 1 is then
 * last), worker 1 nothing, stage 0 (workers 0 and 1) 10: the two fixes
 * that contain worker 0 overlap, and 2 + 10 is more than the 10 the whole
 * ideal gives back. */
static void overlapping_fixes(void **state)
{
    (void)state;
    wi_graph g = {0};
    int64_t work[3] = {20, 18, 5}, ideal[3] = {10, 10, 5};
    uint32_t a[3];
    for (int w = 0; w < 3; w++) {
        uint32_t c = node(&g, w, WI_COMPUTE, 0, work[w], work[w], ideal[w]);
        a[w] = node(&g, w, WI_COMM, work[w], 22, 2, 2);
        assert_int_equal(wi_graph_add_dep(&g, a[w], c), 0);
    }
    int gated[] = {1, 1, 1};
    hub(&g, a, 3, gated);
    done(&g);
    wi_times t;
    assert_int_equal(wi_times_alloc(&t, &g), 0);
    int64_t actual = replay(&g, WI_FIX_NONE, 0, &t);
    assert_int_equal(actual, 22);
    int64_t all = actual - replay(&g, WI_FIX_ALL, 0, &t);
    int64_t w0 = actual - replay(&g, WI_FIX_WORKER, 0, &t);
    int64_t w1 = actual - replay(&g, WI_FIX_WORKER, 1, &t);
    int64_t st0 = actual - replay(&g, WI_FIX_STAGE, 0, &t);
    assert_int_equal(all, 10);
    assert_int_equal(w0, 2);
    assert_int_equal(w1, 0);
    assert_int_equal(st0, 10);
    assert_true(w0 + st0 > all);   /* overlapping: never to be added */
    assert_true(w0 <= all && st0 <= all);
    wi_times_free(&t);
    wi_graph_free(&g);
}

/* One worker, two operations whose peers both take 10: the first was
 * luckily fast (6), the second slow (14).  Fixing every slow operation gives
 * 6 + 10 = 16 (a fix keeps the luck); the job as its peers run it takes
 * 10 + 10 = 20, as long as the record: S is 1, with 4 recoverable. */
static void typical_keeps_no_luck(void **state)
{
    (void)state;
    wi_graph g = {0};
    uint32_t a = node(&g, 0, WI_COMPUTE, 0, 6, 6, 6);
    uint32_t b = node(&g, 0, WI_COMPUTE, 6, 20, 14, 10);
    g.nodes[a].typical = g.nodes[b].typical = 10;
    assert_int_equal(wi_graph_add_dep(&g, b, a), 0);
    done(&g);
    wi_times t;
    assert_int_equal(wi_times_alloc(&t, &g), 0);
    assert_int_equal(replay(&g, WI_FIX_NONE, 0, &t), 20);
    assert_int_equal(replay(&g, WI_FIX_ALL, 0, &t), 16);
    assert_int_equal(replay(&g, WI_FIX_TYPICAL, 0, &t), 20);
    assert_int_equal(t.end[a], 10);
    wi_times_free(&t);
    wi_graph_free(&g);
}

/* A two-stage pipeline step: stage 0 computes (10, ideal 5) and sends;
 * stage 1 posted its receive at 2, gets the data, computes 8.  The send
 * meets its receive (rendezvous), the receive waits for the send.  Stage 1
 * is late only because it waits upstream: fixing it saves nothing. */
static void upstream_wait_is_not_blamed(void **state)
{
    (void)state;
    wi_graph g = {0};
    uint32_t f0 = node(&g, 0, WI_COMPUTE, 0, 10, 10, 5);
    uint32_t snd = node(&g, 0, WI_COMM, 10, 12, 2, 2);
    uint32_t rcv = node(&g, 1, WI_COMM, 2, 12, 2, 2);
    uint32_t f1 = node(&g, 1, WI_COMPUTE, 12, 20, 8, 8);
    assert_int_equal(wi_graph_add_dep(&g, snd, f0), 0);
    assert_int_equal(wi_graph_add_dep(&g, f1, rcv), 0);
    uint32_t m[] = {snd, rcv};
    int gated[] = {1, 1};
    hub(&g, m, 2, gated);
    done(&g);
    wi_times t;
    assert_int_equal(wi_times_alloc(&t, &g), 0);
    assert_int_equal(replay(&g, WI_FIX_NONE, 0, &t), 20);
    assert_int_equal(t.end[rcv], 12);
    assert_int_equal(replay(&g, WI_FIX_WORKER, 0, &t), 15);
    assert_int_equal(t.end[rcv], 7);
    assert_int_equal(replay(&g, WI_FIX_WORKER, 1, &t), 20);
    wi_times_free(&t);
    wi_graph_free(&g);
}

/* An eager send (done before its receive was posted) is not gated: a
 * faster receiver does not move it, and its transfer is its own. */
static void eager_send_is_not_gated(void **state)
{
    (void)state;
    wi_graph g = {0};
    uint32_t snd = node(&g, 0, WI_COMM, 0, 1, 1, 1);
    uint32_t c1 = node(&g, 1, WI_COMPUTE, 0, 6, 6, 3);
    uint32_t rcv = node(&g, 1, WI_COMM, 6, 7, 1, 1);
    assert_int_equal(wi_graph_add_dep(&g, rcv, c1), 0);
    uint32_t m[] = {snd, rcv};
    int gated[] = {0, 1};
    hub(&g, m, 2, gated);
    done(&g);
    wi_times t;
    assert_int_equal(wi_times_alloc(&t, &g), 0);
    assert_int_equal(replay(&g, WI_FIX_NONE, 0, &t), 7);
    assert_int_equal(t.end[snd], 1);
    assert_int_equal(replay(&g, WI_FIX_WORKER, 1, &t), 4);
    assert_int_equal(t.end[snd], 1);
    wi_times_free(&t);
    wi_graph_free(&g);
}

/* Gaps: a node keeps its recorded gap in the record's replay and takes
 * its ideal gap otherwise; an equal-time cycle is broken, not looped. */
static void gaps_and_cycles(void **state)
{
    (void)state;
    wi_graph g = {0};
    uint32_t c0 = node(&g, 0, WI_COMPUTE, 0, 4, 4, 4);
    wi_node n = {.rec_start = 10, .rec_end = 14, .dur = 4, .ideal = 4, .gap = 6, .ideal_gap = 1,
                 .rank = 0, .kind = WI_COMPUTE, .src = -1};
    assert_int_equal(wi_graph_add_node(&g, &n), 0);
    uint32_t c1 = (uint32_t)g.n_nodes - 1;
    assert_int_equal(wi_graph_add_dep(&g, c1, c0), 0);
    /* two zero-length calls that each wait for the other's start */
    uint32_t x = node(&g, 1, WI_COMM, 5, 5, 0, 0), y = node(&g, 2, WI_COMM, 5, 5, 0, 0);
    assert_int_equal(wi_graph_add_dep(&g, y, x), 0);
    uint32_t m[] = {x, y};
    int gated[] = {1, 1};
    hub(&g, m, 2, gated);
    done(&g);
    wi_times t;
    assert_int_equal(wi_times_alloc(&t, &g), 0);
    wi_fix rec = {.by = WI_FIX_NONE, .raw_gaps = 1};
    assert_int_equal(wi_replay_step(&g, 0, &rec, &t), 14);
    assert_int_equal(replay(&g, WI_FIX_NONE, 0, &t), 9);
    wi_times_free(&t);
    wi_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collective_waits_for_last),
        cmocka_unit_test(overlapping_fixes),
        cmocka_unit_test(typical_keeps_no_luck),
        cmocka_unit_test(upstream_wait_is_not_blamed),
        cmocka_unit_test(eager_send_is_not_gated),
        cmocka_unit_test(gaps_and_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
