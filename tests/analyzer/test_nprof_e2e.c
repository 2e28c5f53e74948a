/* tscope as NCCL's profiler plugin, end to end: 4 ranks of the test bed
 * under the preload, whose test NCCL loads the plugin as NCCL does (by
 * the name tscope put in NCCL_PROFILER_PLUGIN, the versioned table, init,
 * events, finalize).  The dumps are loaded and the plugin records checked
 * against the NCCL calls tscope interposed in the same run, exactly.
 * Skips (exit 77) when the test bed or the preload is not built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "load/job_load.h"
#include "load/rank_nprof.h"
#include "tsc_nccl_ops.h"

static char base[256];

static int run_job(const char *tag, const char *env, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/%s", base, tag);
    char cmd[8192];
    const char *asan = getenv("TB_ASAN_RUNTIME");
    snprintf(cmd, sizeof cmd,
             "env -u TSCOPE_DISABLE -u CUDA_INJECTION64_PATH -u NCCL_PROFILER_PLUGIN %s "
             "LD_PRELOAD='%s%s%s' LD_LIBRARY_PATH='%s' TSCOPE_OUT='%s' TSCOPE_RUN_ID=np "
             "FAKENCCL_TIMEOUT_S=20 FAKENCCL_CHANNELS=3 '%s' -n 4 -- '%s' --steps 4 "
             "--compute-us 500 >'%s.log' 2>&1",
             env, asan && *asan ? asan : "", asan && *asan ? " " : "", getenv("TB_PRELOAD"),
             getenv("TB_FAKENCCL_DIR"), dir, getenv("TB_LAUNCH"), getenv("TB_RANK"), dir);
    return system(cmd);
}

static tsa_job *load(const char *dir)
{
    tsa_job *job = NULL;
    tsa_load_options lo = {.quiet = 1};
    assert_int_equal(tsa_job_load(dir, &lo, &job), 0);
    assert_int_equal(job->n_ranks, 4);
    return job;
}

static int log_has(const char *dir, const char *needle)
{
    char path[512], buf[65536];
    snprintf(path, sizeof path, "%s.log", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

/* 1 when a dump in dir holds the META pair key=value (raw key\0value\0). */
static int meta_has(const char *dir, const char *key, const char *value)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cat '%s'/*.tsd", dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    size_t cap = 1 << 24, n = 0;
    char *buf = malloc(cap);
    while (buf && n < cap && (n += fread(buf + n, 1, cap - n, p)) && !feof(p))
        ;
    pclose(p);
    char want[256];
    int wl = snprintf(want, sizeof want, "%s%c%s", key, 0, value);
    int hit = buf && memmem(buf, n, want, (size_t)wl) != NULL;
    free(buf);
    return hit;
}

static int is_coll(uint8_t op) { return op >= TSC_NCCL_ALLREDUCE && op <= TSC_NCCL_SCATTER; }
static int is_p2p(uint8_t op) { return op == TSC_NCCL_SEND || op == TSC_NCCL_RECV; }

/* The communicator size of a plugin collective, from the NCCL calls. */
static uint32_t comm_size(const tsa_rank *r, uint64_t comm_id)
{
    for (size_t i = 0; i < r->n_nccl; i++)
        if (r->nccl[i].comm_id == comm_id)
            return r->nccl[i].comm_size;
    return 0;
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
        size_t calls = 0, colls = 0;
        for (size_t k = 0; k < r->n_nccl; k++)
            calls += is_coll(r->nccl[k].op) || is_p2p(r->nccl[k].op);
        assert_int_equal(np->n_colls, calls);
        /* Collectives join their NCCL call, every one. */
        size_t joined = tsa_nprof_joined(r, &colls);
        assert_true(colls > 0);
        assert_int_equal(joined, colls);
        /* A ring collective: a send and a receive per channel; a send/recv:
         * one proxy op.  Each with its steps and its collective. */
        size_t want = 0;
        for (size_t k = 0; k < np->n_colls; k++) {
            const tsa_np_coll *c = &np->colls[k];
            const tsa_np_comm *cm = tsa_nprof_comm(np, c->comm);
            assert_non_null(cm);
            if (is_p2p(c->op))
                want += 1;
            else if (comm_size(r, cm->comm_id) > 1)
                want += 2 * 3;
        }
        assert_int_equal(np->n_proxies, want);
        assert_int_equal(np->orphan_waits, 0);
        for (size_t k = 0; k < np->n_proxies; k++) {
            const tsa_np_proxy *p = &np->proxies[k];
            assert_true(p->have_wait);
            assert_int_equal(p->steps, 4);
            size_t c = 0;
            while (c < np->n_colls && np->colls[c].op_id != p->op_id)
                c++;
            assert_true(c < np->n_colls);
            assert_true(p->start_ns >= np->colls[c].start_ns);
        }
    }
}

static void full_capture(const char *tag, const char *env, int version)
{
    char dir[512];
    assert_int_equal(run_job(tag, env, dir, sizeof dir), 0);
    tsa_job *job = load(dir);
    check_full(job, version);
    tsa_job_free(job);
    char what[16];
    snprintf(what, sizeof what, "v%d full", version);
    assert_true(meta_has(dir, "nccl_profiler", what));
}

static void test_full_capture_v5(void **state)
{
    (void)state;
    full_capture("v5", "TSCOPE_NCCL_PROFILER=full", 5);
}

/* An NCCL 2.27 asks for v4 first: the same records. */
static void test_full_capture_v4(void **state)
{
    (void)state;
    full_capture("v4", "TSCOPE_NCCL_PROFILER=full FAKENCCL_PROFILER_MAX_VERSION=4", 4);
}

/* The default, light: collectives without proxy operations. */
static void test_light_capture(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(run_job("light", "", dir, sizeof dir), 0);
    tsa_job *job = load(dir);
    for (size_t i = 0; i < job->n_ranks; i++) {
        const struct tsa_nprof *np = job->ranks[i].nprof;
        assert_non_null(np);
        assert_true(np->n_colls > 0);
        assert_int_equal(np->n_proxies, 0);
    }
    tsa_job_free(job);
}

/* Cases where the plugin is not used: the job runs, records of NCCL calls
 * are there, no plugin record, and tscope says why: on stderr (`why`) or
 * in the dump (`meta`). */
static void no_plugin(const char *tag, const char *env, const char *why, const char *meta)
{
    char dir[512];
    assert_int_equal(run_job(tag, env, dir, sizeof dir), 0);
    tsa_job *job = load(dir);
    for (size_t i = 0; i < job->n_ranks; i++) {
        assert_true(job->ranks[i].n_nccl > 0);
        assert_null(job->ranks[i].nprof);
    }
    tsa_job_free(job);
    if (why)
        assert_true(log_has(dir, why));
    if (meta)
        assert_true(meta_has(dir, "nccl_profiler", meta));
}

static void test_user_plugin_respected(void **state)
{
    (void)state;
    no_plugin("user", "NCCL_PROFILER_PLUGIN=/nonexistent/libnccl-profiler-user.so",
              "stepped aside", "stepped aside");
}

static void test_version_missing(void **state)
{
    (void)state;
    no_plugin("old", "FAKENCCL_PROFILER_MAX_VERSION=3", NULL, "not loaded by NCCL");
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
    assert_int_equal(run_job("fail", env, dir, sizeof dir), 0);
    assert_true(log_has(dir, "declined a communicator: TSCOPE_DISABLE is set"));
}

int main(void)
{
    const char *need[] = {"TB_PRELOAD", "TB_FAKENCCL_DIR", "TB_LAUNCH", "TB_RANK"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const char *p = getenv(need[i]);
        if (!p || !*p || access(p, F_OK) != 0)
            return 77;
    }
    snprintf(base, sizeof base, "/tmp/tsc_nprof_e2e.%d", (int)getpid());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", base);
    if (system(cmd) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_capture_v5),     cmocka_unit_test(test_full_capture_v4),
        cmocka_unit_test(test_light_capture),       cmocka_unit_test(test_user_plugin_respected),
        cmocka_unit_test(test_version_missing),     cmocka_unit_test(test_plugin_off),
        cmocka_unit_test(test_init_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
