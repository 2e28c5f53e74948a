/* tscope as NCCL's profiler plugin, end to end, in every ABI version: 4
 * ranks of the test bed under the preload, whose test NCCL loads the
 * plugin as NCCL does (by the name tscope put in NCCL_PROFILER_PLUGIN, the
 * versioned table, init, events, finalize) and speaks v6 (NCCL 2.29) or,
 * capped by FAKENCCL_PROFILER_MAX_VERSION, what NCCL 2.28 ... 2.23 speaks
 * (v5 ... v1, each from its own declarations of those layouts).  The dumps
 * are loaded and the plugin records checked against the NCCL calls tscope
 * interposed in the same run, exactly.  Skips (exit 77) when the test bed
 * or the preload is not built. */
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

/* The plugin collective of op id `id`, NULL none. */
static const tsa_np_coll *coll_of(const struct tsa_nprof *np, uint32_t id)
{
    for (size_t k = 0; k < np->n_colls; k++)
        if (np->colls[k].op_id == id)
            return &np->colls[k];
    return NULL;
}

/* Kernel channels: `channels` per collective on more than one rank, one
 * per send/recv (v3+), each naming its collective, at host times after
 * its collective's start; their GPU time from the GPU timer (v4+) or none
 * (v3). */
static void check_kernel_channels(const tsa_rank *r, int version)
{
    const struct tsa_nprof *np = r->nprof;
    size_t want = 0;
    for (size_t k = 0; version >= 3 && k < np->n_colls; k++) {
        const tsa_np_coll *c = &np->colls[k];
        if (np_is_p2p(c->op))
            want += 1;
        else if (np_comm_size(r, tsa_nprof_comm(np, c->comm)->comm_id) > 1)
            want += NP_CHANNELS;
    }
    assert_int_equal(np->n_kch, want);
    for (size_t k = 0; k < np->n_kch; k++) {
        const tsa_np_kch *x = &np->kch[k];
        const tsa_np_coll *c = coll_of(np, x->op_id);
        assert_non_null(c);
        assert_int_equal(x->comm, c->comm);
        assert_true(x->channel < (np_is_p2p(c->op) ? 1 : NP_CHANNELS));
        assert_int_equal(x->host_times, version == 3);
        assert_true(x->end_ns >= x->start_ns && x->start_ns >= c->start_ns);
        /* v4+: the GPU timer's reading (its epoch is its own: only its
         * difference counts).  Like NCCL's proxy thread, the test NCCL
         * reads the GPU timer first and reports the channel after, so the
         * channel's host start may lag its GPU start by however long the
         * thread waited for a core: the GPU interval is bounded by the
         * host times around it, from the collective's start (before the
         * first reading) to the channel's end (after the second), with a
         * millisecond for the two clocks' rates. */
        if (version >= 4)
            assert_true(x->gpu_ns > 0 &&
                        x->gpu_ns <= (uint64_t)(x->end_ns - c->start_ns) + 1000000);
        else
            assert_int_equal(x->gpu_ns, 0);
    }
}

/* A ring collective: a send and a receive per channel; a send/recv: one
 * proxy op.  Each with its steps, its collective and, for a collective,
 * exactly the bytes the test NCCL moved on that channel (v1-v3: from the
 * op's own states; v4+: from its steps'). */
static void check_proxy_ops(const tsa_rank *r, const tsa_np_join *j)
{
    const struct tsa_nprof *np = r->nprof;
    size_t want = 0;
    for (size_t k = 0; k < np->n_colls; k++) {
        const tsa_np_coll *c = &np->colls[k];
        if (np_is_p2p(c->op))
            want += 1;
        else if (np_comm_size(r, tsa_nprof_comm(np, c->comm)->comm_id) > 1)
            want += 2 * NP_CHANNELS;
    }
    assert_int_equal(np->n_proxies, want);
    assert_int_equal(np->orphan_waits, 0);
    for (size_t k = 0; k < np->n_proxies; k++) {
        const tsa_np_proxy *p = &np->proxies[k];
        assert_true(p->have_wait);
        assert_false(p->pxn);
        assert_int_equal(p->steps, NP_STEPS);
        const tsa_np_coll *c = coll_of(np, p->op_id);
        assert_non_null(c);
        assert_true(p->start_ns >= c->start_ns);
        if (np_is_p2p(c->op))
            continue;
        int64_t call = j->call_of[c - np->colls];
        assert_true(call >= 0);
        uint64_t step = r->nccl[call].bytes / NP_CHANNELS / NP_STEPS;
        assert_int_equal(p->bytes, step * NP_STEPS);
    }
}

/* Every check that holds for any version in full capture. */
static void check_full(const tsa_job *job, int version)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        const struct tsa_nprof *np = r->nprof;
        assert_non_null(np);
        assert_true(np->n_comms >= 2); /* the world and the split halves */
        for (size_t k = 0; k < np->n_comms; k++) {
            assert_int_equal(np->comms[k].version, version);
            assert_true(np->comms[k].comm_id != 0);
        }
        /* One plugin record per interposed collective and send/recv. */
        size_t calls = 0;
        for (size_t k = 0; k < r->n_nccl; k++)
            calls += np_is_coll(r->nccl[k].op) || np_is_p2p(r->nccl[k].op);
        assert_int_equal(np->n_colls, calls);
        /* Collectives join their NCCL call, every one. */
        tsa_np_join j;
        assert_int_equal(tsa_nprof_join(r, &j), 0);
        assert_true(j.colls > 0);
        assert_int_equal(j.joined, j.colls);
        check_proxy_ops(r, &j);
        check_kernel_channels(r, version);
        assert_int_equal(np->lost, 0);
        tsa_np_join_free(&j);
    }
}

static void full_capture(int version)
{
    char dir[512], tag[16], env[256], what[16];
    snprintf(tag, sizeof tag, "v%d", version);
    snprintf(env, sizeof env, "TSCOPE_NCCL_PROFILER=full FAKENCCL_PROFILER_MAX_VERSION=%d",
             version);
    assert_int_equal(np_run(tag, env, dir, sizeof dir), 0);
    tsa_job *job = np_load(dir);
    check_full(job, version);
    tsa_job_free(job);
    snprintf(what, sizeof what, "v%d full", version);
    assert_true(np_meta_has(dir, "nccl_profiler", what));
}

/* NCCL 2.29 (v6) down to 2.23 (v1), each asking for its newest first. */
static void test_full_capture_v6(void **state) { (void)state; full_capture(6); }
static void test_full_capture_v5(void **state) { (void)state; full_capture(5); }
static void test_full_capture_v4(void **state) { (void)state; full_capture(4); }
static void test_full_capture_v3(void **state) { (void)state; full_capture(3); }
static void test_full_capture_v2(void **state) { (void)state; full_capture(2); }
static void test_full_capture_v1(void **state) { (void)state; full_capture(1); }

/* The default, light: collectives only; no kernel channels and no proxy
 * operations (each would add work to NCCL's proxy thread). */
static void test_light_capture(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(np_run("light", "", dir, sizeof dir), 0);
    tsa_job *job = np_load(dir);
    for (size_t i = 0; i < job->n_ranks; i++) {
        const struct tsa_nprof *np = job->ranks[i].nprof;
        assert_non_null(np);
        assert_true(np->n_colls > 0);
        assert_int_equal(np->n_proxies, 0);
        assert_int_equal(np->n_kch, 0);
    }
    tsa_job_free(job);
    assert_true(np_meta_has(dir, "nccl_profiler", "v6 light"));
}

/* Cases where the plugin is not used: the job runs, records of NCCL calls
 * are there, no plugin record, and tscope says why: on stderr (`why`) or
 * in the dump (`meta`). */
static void no_plugin(const char *tag, const char *env, const char *why, const char *meta)
{
    char dir[512];
    assert_int_equal(np_run(tag, env, dir, sizeof dir), 0);
    tsa_job *job = np_load(dir);
    for (size_t i = 0; i < job->n_ranks; i++) {
        assert_true(job->ranks[i].n_nccl > 0);
        assert_null(job->ranks[i].nprof);
    }
    tsa_job_free(job);
    if (why)
        assert_true(np_log_has(dir, why));
    if (meta)
        assert_true(np_meta_has(dir, "nccl_profiler", meta));
}

static void test_user_plugin_respected(void **state)
{
    (void)state;
    no_plugin("user", "NCCL_PROFILER_PLUGIN=/nonexistent/libnccl-profiler-user.so",
              "stepped aside", "stepped aside");
}

/* An NCCL that knows no version tscope serves (here: none at all). */
static void test_version_missing(void **state)
{
    (void)state;
    no_plugin("old", "FAKENCCL_PROFILER_MAX_VERSION=0", NULL, "not loaded by NCCL");
}

static void test_plugin_off(void **state)
{
    (void)state;
    no_plugin("off", "TSCOPE_NCCL_PROFILER=off", NULL, NULL);
}

/* The plugin named by the user while tscope records nothing: its init
 * fails, NCCL runs on without it, and tscope says so. */
static void test_init_failure(void **state)
{
    (void)state;
    char dir[512], env[1024];
    snprintf(env, sizeof env, "TSCOPE_DISABLE=1 NCCL_PROFILER_PLUGIN='%s'", getenv("TB_PRELOAD"));
    assert_int_equal(np_run("fail", env, dir, sizeof dir), 0);
    assert_true(np_log_has(dir, "declined a communicator: TSCOPE_DISABLE is set"));
}

int main(void)
{
    if (np_ready())
        return 77;
    if (np_begin("nprof_e2e"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_capture_v6),     cmocka_unit_test(test_full_capture_v5),
        cmocka_unit_test(test_full_capture_v4),     cmocka_unit_test(test_full_capture_v3),
        cmocka_unit_test(test_full_capture_v2),     cmocka_unit_test(test_full_capture_v1),
        cmocka_unit_test(test_light_capture),       cmocka_unit_test(test_user_plugin_respected),
        cmocka_unit_test(test_version_missing),     cmocka_unit_test(test_plugin_off),
        cmocka_unit_test(test_init_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (np_done())
        rc = rc ? rc : 1;
    return rc;
}
