/* What else NCCL reports to its profiler plugin, end to end on the test
 * bed (4 ranks under the preload, the test NCCL speaking v6): collectives
 * run by the copy engines (no kernel, NCCL's count unmoved), a call
 * captured into a CUDA graph and its replays (collectives without a call),
 * more proxy operations open at once than tscope's pool holds (dropped and
 * counted, never mixed), and proxy operations run for another process
 * (PXN: its context is not an address here).  Exact counts against the
 * interposed calls of the same run; the report's lines where one is due.
 * Skips (exit 77) when the test bed or the preload is not built. */
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
#include "nprof_run.h"
#include "tsc_nccl_ops.h"

/* Collective calls (not send/recv) on communicators of more than one rank,
 * and send/recv calls. */
static void count_calls(const tsa_rank *r, size_t *multi, size_t *p2p)
{
    *multi = *p2p = 0;
    for (size_t k = 0; k < r->n_nccl; k++) {
        const tsa_nccl_op *o = &r->nccl[k];
        *p2p += np_is_p2p(o->op);
        *multi += np_is_coll(o->op) && o->comm_size > 1;
    }
}

/* Every third AllGather, AlltoAll, Gather or Scatter... here every second
 * one: both kinds of the same function, so the calls' places shift by the
 * CE collectives before and the join must follow. */
static void test_copy_engine_collectives(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(np_run("ce", "TSCOPE_NCCL_PROFILER=full FAKENCCL_CE=2", dir, sizeof dir), 0);
    tsa_job *job = np_load(dir);
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        const struct tsa_nprof *np = r->nprof;
        assert_non_null(np);
        tsa_np_join j;
        assert_int_equal(tsa_nprof_join(r, &j), 0);
        assert_int_equal(j.joined, j.colls);
        size_t ce = 0, kernel_ag = 0;
        for (size_t k = 0; k < np->n_colls; k++) {
            const tsa_np_coll *c = &np->colls[k];
            kernel_ag += !c->ce && c->op == TSC_NCCL_ALLGATHER;
            if (!c->ce)
                continue;
            ce++;
            const tsa_nccl_op *call = &r->nccl[j.call_of[k]];
            assert_int_equal(call->op, c->op);
            /* two syncs of all ranks and one batch of copies to the others */
            size_t syncs = 0, batches = 0;
            for (size_t p = 0; p < np->n_ce_parts; p++) {
                const tsa_np_ce_part *x = &np->ce_parts[p];
                if (x->op_id != c->op_id)
                    continue;
                assert_true(x->start_ns >= c->start_ns && x->end_ns <= c->end_ns);
                if (x->batch) {
                    batches++;
                    assert_int_equal(x->count, call->comm_size - 1);
                    assert_int_equal(x->bytes, call->bytes * (call->comm_size - 1));
                } else {
                    syncs++;
                    assert_int_equal(x->count, call->comm_size);
                }
            }
            assert_int_equal(syncs, 2);
            assert_int_equal(batches, 1);
            /* no kernel, no proxy */
            for (size_t p = 0; p < np->n_proxies; p++)
                assert_int_not_equal(np->proxies[p].op_id, c->op_id);
            for (size_t p = 0; p < np->n_kch; p++)
                assert_int_not_equal(np->kch[p].op_id, c->op_id);
        }
        assert_true(ce > 0);
        assert_true(kernel_ag > 0);
        assert_int_equal(np->n_ce_parts, 3 * ce);
        tsa_np_join_free(&j);
    }
    tsa_job_free(job);
    assert_true(np_report_has(dir, "", "copy engines"));
}

/* The third collective of each communicator is captured into a graph and
 * replayed three times: the call is marked captured, the replays have no
 * call but their steps and channels, everything else joins. */
static void test_graph_replays(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(np_run("graph", "TSCOPE_NCCL_PROFILER=full FAKENCCL_GRAPH=2:3", dir,
                            sizeof dir), 0);
    tsa_job *job = np_load(dir);
    size_t replays_all = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        const struct tsa_nprof *np = r->nprof;
        assert_non_null(np);
        /* communicators of more than one rank with at least 3 collectives */
        size_t want_captured = 0;
        for (size_t k = 0; k < np->n_comms; k++) {
            size_t n = 0;
            for (size_t c = 0; c < r->n_nccl; c++)
                n += r->nccl[c].comm_id == np->comms[k].comm_id && np_is_coll(r->nccl[c].op) &&
                     r->nccl[c].comm_size > 1;
            want_captured += n >= 3;
        }
        assert_true(want_captured > 0);
        tsa_np_join j;
        assert_int_equal(tsa_nprof_join(r, &j), 0);
        assert_int_equal(j.captured_calls, want_captured);
        size_t no_call = 0;
        for (size_t k = 0; k < np->n_colls; k++) {
            if (!j.no_call[k])
                continue;
            no_call++;
            const tsa_np_coll *c = &np->colls[k];
            /* a replay, from CUDA's callback thread: no call was made there */
            for (size_t n = 0; n < r->n_nccl; n++)
                assert_int_not_equal(r->nccl[n].tid, c->tid);
            size_t ops = 0, kch = 0;
            for (size_t p = 0; p < np->n_proxies; p++)
                if (np->proxies[p].op_id == c->op_id) {
                    ops++;
                    assert_int_equal(np->proxies[p].steps, NP_STEPS);
                }
            for (size_t p = 0; p < np->n_kch; p++)
                kch += np->kch[p].op_id == c->op_id;
            assert_int_equal(ops, 2 * NP_CHANNELS);
            assert_int_equal(kch, NP_CHANNELS);
        }
        assert_int_equal(no_call, 3 * want_captured);
        assert_int_equal(j.joined, j.colls - no_call);
        replays_all += no_call;
        tsa_np_join_free(&j);
    }
    tsa_job_free(job);
    char want[64];
    snprintf(want, sizeof want, "%zu collectives without an NCCL call", replays_all);
    assert_true(np_report_has(dir, "", want));
}

/* Six proxy ops open at once per collective (3 channels) against a pool of
 * four: two dropped per collective, counted exactly, none mixed. */
static void test_pool_exhausted(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(np_run("pool",
                            "TSCOPE_NCCL_PROFILER=full FAKENCCL_PROXY_OPEN=1 "
                            "TSCOPE_NP_POOLS=4096,4,64,4096",
                            dir, sizeof dir), 0);
    tsa_job *job = np_load(dir);
    uint64_t lost_all = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        const struct tsa_nprof *np = r->nprof;
        size_t multi, p2p;
        count_calls(r, &multi, &p2p);
        assert_int_equal(np->lost, (2 * NP_CHANNELS - 4) * multi);
        assert_int_equal(np->n_proxies, 4 * multi + p2p);
        for (size_t k = 0; k < np->n_proxies; k++) {
            const tsa_np_proxy *p = &np->proxies[k];
            assert_int_equal(p->steps, NP_STEPS);
            size_t c = 0;
            while (c < np->n_colls && np->colls[c].op_id != p->op_id)
                c++;
            assert_true(c < np->n_colls);
            assert_true(p->start_ns >= np->colls[c].start_ns);
            assert_int_equal(p->comm, np->colls[c].comm);
        }
        lost_all += np->lost;
    }
    tsa_job_free(job);
    char want[64];
    snprintf(want, sizeof want, "plugin events lost: %llu", (unsigned long long)lost_all);
    assert_true(np_report_has(dir, "", want));
    assert_true(np_report_has(dir, "", "LOAD.PLUGIN_LOST"));
    snprintf(want, sizeof want, "\"events_lost\":\t%llu", (unsigned long long)lost_all);
    assert_true(np_report_has(dir, "--json", want));
}

/* One op per collective run here for another process: NCCL passes that
 * process's context and parent handle (a dereference would crash the
 * job): counted, recorded apart, kept out of the links. */
static void test_pxn_ops(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(np_run("pxn", "TSCOPE_NCCL_PROFILER=full FAKENCCL_PXN=1", dir, sizeof dir),
                     0);
    tsa_job *job = np_load(dir);
    uint64_t pxn_all = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        const struct tsa_nprof *np = r->nprof;
        size_t multi, p2p, flagged = 0;
        count_calls(r, &multi, &p2p);
        assert_int_equal(np->pxn_ops, multi);
        for (size_t k = 0; k < np->n_proxies; k++) {
            const tsa_np_proxy *p = &np->proxies[k];
            if (!p->pxn)
                continue;
            flagged++;
            assert_int_equal(p->comm, 0);
            assert_int_equal(p->op_id, 0);
            assert_int_equal(p->steps, NP_STEPS);
        }
        assert_int_equal(flagged, multi);
        assert_int_equal(np->lost, 0);
        pxn_all += np->pxn_ops;
    }
    tsa_job_free(job);
    char want[96];
    snprintf(want, sizeof want, "%llu proxy operations ran here for another process (PXN)",
             (unsigned long long)pxn_all);
    assert_true(np_report_has(dir, "", want));
}

/* A job without send/recv streams its ranks (the report's default): the
 * plugin's records must travel with the lean ranks, or the slow link and
 * the tables vanish from the report. */
/* A job of collectives only whose link 1 -> 2 is 5x slower, the plugin
 * in `mode` capture. */
static void slow_link_job(const char *tag, const char *mode, char *dir, size_t cap)
{
    char env[256];
    snprintf(env, sizeof env,
             "TSCOPE_NCCL_PROFILER=%s FAKENCCL_NET_STEP_US=300 FAKENCCL_SLOW_LINK=1:2:5", mode);
    assert_int_equal(np_run_with(tag, env, "--ring-bytes 0 --no-extras", dir, cap), 0);
}

static void test_streamed_report_keeps_plugin(void **state)
{
    (void)state;
    char dir[512];
    slow_link_job("stream", "full", dir, sizeof dir);
    assert_true(np_report_has(dir, "", "TRANSFERS BY COLLECTIVE"));
    assert_true(np_report_has(dir, "", "link rank 1 -> rank 2"));
    assert_true(np_report_has(dir, "--json", "\"collective_transfers\""));
    /* the collectives wait for that link: the verdict names it */
    assert_true(np_report_has(dir, "", "paced by one slow link: rank 1 -> rank 2 on channels"));
}

/* The same job in light capture (the default) times no link: its
 * communication-bound verdict says how to find the slow one, and what
 * it costs. */
static void test_light_capture_says_how_to_time_links(void **state)
{
    (void)state;
    char dir[512];
    slow_link_job("light-link", "light", dir, sizeof dir);
    assert_true(np_report_has(dir, "", "communication-bound"));
    assert_true(np_report_has(dir, "", "light capture times no network link: "
                                       "TSCOPE_NCCL_PROFILER=full names a slow one (cost: "));
    assert_false(np_report_has(dir, "", "NET.SLOW_LINK"));
}

/* Rank 3 receives from rank 2 before its compute in every step (a
 * pipeline's activations) over a link 4x slower than the others: its
 * cause block names the link with its numbers, and so does the block of
 * rank 2, whose sends cross it; without the slow link, no link cause. */
static void test_link_cause(void **state)
{
    (void)state;
    char dir[512];
    const char *env = "TSCOPE_NCCL_PROFILER=full FAKENCCL_CHANNELS=2 FAKENCCL_NET_STEP_US=300";
    char slow[256];
    snprintf(slow, sizeof slow, "%s FAKENCCL_SLOW_LINK=2:3:4", env);
    const char *job = "--compute-us 5000 --cpu-work --upstream 3:2 --buckets 64K "
                      "--ring-bytes 0 --no-extras";
    char args[256];
    snprintf(args, sizeof args, "--steps 20 %s", job);
    assert_int_equal(np_run_with("cause", slow, args, dir, sizeof dir), 0);
    assert_true(np_report_has(dir, "", "  rank 3 ("));
    assert_true(np_report_has(dir, "", "its receives from rank 2 wait for their data"));
    assert_true(np_report_has(dir, "", "its sends to rank 3 are on the wire"));
    assert_true(np_report_has(dir, "--json", "\"kind\":\t\"link\""));
    snprintf(args, sizeof args, "--steps 20 %s", job);
    assert_int_equal(np_run_with("cause-balanced", env, args, dir, sizeof dir), 0);
    assert_true(np_report_has(dir, "", "  rank 3 ("));
    /* no link cause without a slow link (the rule's own false alarms under
     * a heavily loaded machine are link-trials' to count, not this test's) */
    if (!np_report_has(dir, "", "NET.SLOW_LINK"))
        assert_false(np_report_has(dir, "--json", "\"kind\":\t\"link\""));
}

int main(void)
{
    if (np_ready())
        return 77;
    if (np_begin("nprof_events"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_engine_collectives),
        cmocka_unit_test(test_graph_replays),
        cmocka_unit_test(test_pool_exhausted),
        cmocka_unit_test(test_pxn_ops),
        cmocka_unit_test(test_streamed_report_keeps_plugin),
        cmocka_unit_test(test_light_capture_says_how_to_time_links),
        cmocka_unit_test(test_link_cause),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (np_done())
        rc = rc ? rc : 1;
    return rc;
}
