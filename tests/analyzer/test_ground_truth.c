/* Ground truth: synthetic jobs written through the real dump writer with
 * known answers (gen_job.h); the analyzer must recover them: budget lines
 * summing exactly to wall, overlap and stall within 0.1% of wall, FLOPs and
 * steps exactly, the kernel mix exactly. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/analysis.h"
#include "gen_job.h"
#include "dump_file.h"
#include "load/job_load.h"
#include "tsc_format.h"

#include "gen_run.h"
#include "report/report.h"

/* Budget lines sum exactly to wall, per rank and for the job. */
static void assert_budget_exact(const tsa_analysis *a)
{
    for (size_t i = 0; i < a->n_ranks; i++) {
        int64_t sum = 0;
        for (int l = 0; l < TSA_BL_COUNT; l++) {
            assert_true(a->ranks[i].budget.line_ns[l] >= 0);
            sum += a->ranks[i].budget.line_ns[l];
        }
        assert_int_equal(sum, a->ranks[i].budget.wall_ns);
    }
    int64_t sum = 0;
    for (int l = 0; l < TSA_BL_COUNT; l++)
        sum += a->budget.line_ns[l];
    assert_int_equal(sum, a->budget.wall_ns);
}

static void assert_close(int64_t got, int64_t want, int64_t wall)
{
    double tol = 0.001 * (double)wall;
    if (fabs((double)(got - want)) > tol)
        fail_msg("got %lld, want %lld (tolerance %.0f ns = 0.1%% of wall)", (long long)got,
                 (long long)want, tol);
}

static void assert_matches_truth(const run *r)
{
    const tsa_analysis *a = r->a;
    const gen_truth *t = &r->t;
    assert_int_equal(a->steps_total, (size_t)t->steps_total);
    assert_int_equal(a->steps, (size_t)t->steps_analysed);
    assert_int_equal(a->method, TSA_STEPS_COLLECTIVES);
    assert_budget_exact(a);
    int64_t w = t->wall_ns;
    assert_close(a->budget.wall_ns, t->wall_ns, w);
    assert_close(a->overlap.comm_ns, t->comm_ns, w);
    assert_close(a->overlap.overlapped_ns, t->overlapped_ns, w);
    assert_close(a->overlap.exposed_ns, t->exposed_ns, w);
    assert_close(a->overlap.exposed_wait_ns, t->wait_ns, w);
    assert_close(a->overlap.exposed_transfer_ns, t->transfer_ns, w);
    assert_close(a->budget.line_ns[TSA_BL_DATA_STALL], t->stall_ns, w);
    assert_close(a->budget.line_ns[TSA_BL_USEFUL] + a->budget.line_ns[TSA_BL_OVERHEAD],
                 t->compute_ns, w);
    assert_true(a->flops == t->flops); /* exactly */
}

static void test_overlap_stall_flops(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 4;
    o.steps = 12;
    o.stall = 0.07;
    o.overlap = 0.6;
    o.comm = 0.25;
    o.flops = 3.0e13;
    o.seed = 7;
    o.events_per_step = 1000; /* many kernels: durations must stay positive */
    run r;
    generate_and_analyze(&o, "overlap", &r);
    assert_matches_truth(&r);
    /* The kernel mix, exactly (every kernel lies inside or outside the window). */
    for (int c = 0; c < TSA_KCAT_COUNT; c++)
        assert_int_equal(r.a->kcat_ns[c], r.t.kcat_ns[c]);
    /* MFU = FLOPs / peak / wall with the H100 SXM bf16 peak. */
    assert_string_equal(r.a->peak_source, "H100 SXM");
    assert_int_equal(r.a->dtype, TSA_DTYPE_BF16);
    double useful = r.t.flops / 989.5e12 * 1e9;
    assert_true(fabs((double)r.a->budget.line_ns[TSA_BL_USEFUL] - useful) <= o.ranks);
    assert_true(fabs(r.a->budget.mfu - useful / (double)r.t.wall_ns) < 1e-6);
    /* Findings: stall 7% and exposed 10% are both warnings. */
    int stall = 0, exposed = 0;
    for (size_t i = 0; i < r.a->findings.n; i++) {
        stall |= !strcmp(r.a->findings.items[i].id, "DATA.STALL");
        exposed |= !strcmp(r.a->findings.items[i].id, "COMM.EXPOSED");
    }
    assert_true(stall);
    assert_true(exposed);
    assert_int_equal(r.a->verdict, TSA_VERDICT_GPU_BOUND);
    /* Without a straggler the exposed time is all in the AllReduces (one
     * row), none of it waiting. */
    assert_int_equal(r.a->n_colls, 1); /* the start-up Broadcast is before the window */
    const tsa_coll_row *ar = &r.a->colls[0];
    assert_int_equal(ar->op, TSC_NCCL_ALLREDUCE);
    assert_int_equal(ar->count, (uint64_t)(o.ranks * o.buckets * r.t.steps_analysed));
    assert_int_equal(ar->exposed_ns, r.a->overlap.exposed_ns); /* a partition */
    assert_close(ar->exposed_ns, r.t.exposed_ns, r.t.wall_ns);
    assert_int_equal(ar->exposed_wait_ns, 0);
    done(&r);
}

static void test_straggler_wait(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 6;
    o.steps = 10;
    o.straggler = 4;
    o.slowdown = 0.25;
    run r;
    generate_and_analyze(&o, "straggler", &r);
    assert_true(r.t.wait_ns > 0);
    assert_matches_truth(&r);
    /* Per-function exposed time partitions the exposed total. */
    assert_int_equal(r.a->colls[0].exposed_ns, r.a->overlap.exposed_ns);
    assert_int_equal(r.a->colls[0].exposed_wait_ns, r.a->overlap.exposed_wait_ns);
    /* The straggler itself never waits at the exposed AllReduce. */
    assert_int_equal(r.a->ranks[4].overlap.exposed_wait_ns, 0);
    assert_true(r.a->ranks[0].overlap.exposed_wait_ns > 0);
    done(&r);
}

static void test_clock_offset(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 4;
    o.steps = 10;
    o.straggler = 1;
    o.slowdown = 0.1;
    o.ranks_per_host = 2;  /* ranks of one host share a clock */
    o.offset_rank = 2;
    o.offset_ns = 7000000; /* 7 ms ahead */
    run r;
    generate_and_analyze(&o, "offset", &r);
    assert_matches_truth(&r);
    done(&r);
}

static void test_host_only(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 3;
    o.steps = 9;
    o.host_only = 1;
    o.straggler = 0;
    o.slowdown = 0.3;
    run r;
    generate_and_analyze(&o, "hostonly", &r);
    assert_int_equal(r.a->gpu, 0);
    assert_matches_truth(&r);
    assert_true(isnan(r.a->budget.mfu)); /* no FLOPs: unknown */
    assert_int_equal(r.a->budget.line_ns[TSA_BL_OVERHEAD], 0);
    done(&r);
}

static void test_healthy_run_has_no_warnings(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 8;
    o.steps = 10;
    o.comm = 0.3;
    o.overlap = 0.9; /* 3% exposed */
    run r;
    generate_and_analyze(&o, "healthy", &r);
    assert_matches_truth(&r);
    for (size_t i = 0; i < r.a->findings.n; i++)
        if (r.a->findings.items[i].severity >= TSA_SEV_WARNING)
            fail_msg("healthy run got %s: %s", r.a->findings.items[i].id,
                     r.a->findings.items[i].title);
    assert_int_equal(r.a->summary.straggler_rank, -1);
    done(&r);
}

static void test_warmup_and_short_runs(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.steps = 3;
    o.warmup = 1; /* tsa_default_warmup(3) == 1 */
    run r;
    generate_and_analyze(&o, "short", &r);
    assert_int_equal(r.a->warmup, 1);
    assert_matches_truth(&r);
    done(&r);
}

static void test_json_has_the_schema(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.flops = 1e12;
    run r;
    generate_and_analyze(&o, "json", &r);
    char *s = tsa_report_json(r.a);
    assert_non_null(s);
    const char *keys[] = {"\"wall_ns\"", "\"ranks\"", "\"steps\"", "\"budget\"", "\"mfu\"",
                          "\"lines\"", "\"recoverable\"", "\"overlap\"", "\"exposed_wait_ns\"",
                          "\"exposed_transfer_ns\"", "\"overlapped_ns\"", "\"verdict\"",
                          "\"findings\"", "\"collectives\"", "\"top_kernels\"",
                          "\"kernel_categories\"", "\"per_rank\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(s, keys[i]))
            fail_msg("JSON lacks %s", keys[i]);
    free(s);
    done(&r);
}

/* Random event slots with valid chunks (so the reader delivers them):
 * the loader and every pass must survive garbage fields. */
static void test_garbage_events_do_not_crash(void **state)
{
    (void)state;
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/garbage", tmpdir);
    assert_int_equal(mkdir(dir, 0777), 0);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    static const uint8_t kinds[] = {TSC_EV_NCCL, TSC_EV_KERNEL, TSC_EV_MEMCPY, TSC_EV_MEMSET,
                                    TSC_EV_SYNC, TSC_EV_API, TSC_EV_GEMM, TSC_EV_NVTX,
                                    TSC_EV_EXTCORR, TSC_EV_CLOCK};
    for (int f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s/tscope_r%d_h_%d.tsd", dir, f, f);
        tsc_dump d;
        assert_int_equal(tsc_dump_open_path(&d, path, 1, 1), 0);
        const char *k[] = {TSC_META_RUN_ID, TSC_META_RANK};
        const char *v[] = {"g", f == 0 ? "0" : f == 1 ? "1" : "-7"};
        char meta[256];
        size_t ml = tsc_meta_encode(meta, sizeof meta, k, v, 2);
        assert_true(ml > 0);
        assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_META, 0, meta, (uint32_t)ml), 0);
        tsc_event slots[512];
        size_t n = 0;
        /* A few real descriptors so that some events resolve. */
        tsc_desc_nccl_call nc;
        memset(&nc, 0, sizeof nc);
        nc.op = TSC_NCCL_ALLREDUCE;
        nc.comm_id = 5;
        nc.comm_size = 3;
        nc.bytes = 1 << 20;
        n += tsc_encode_desc(slots + n, 512 - n, TSC_DESC_NCCL_CALL, 1, &nc, sizeof nc);
        n += tsc_encode_desc(slots + n, 512 - n, TSC_DESC_STRING, 2, "ncclDevKernel_x", 15);
        tsc_desc_kernel kd;
        memset(&kd, 0, sizeof kd);
        kd.name = 2;
        n += tsc_encode_desc(slots + n, 512 - n, TSC_DESC_KERNEL, 3, &kd, sizeof kd);
        for (int rep = 0; rep < 20; rep++) {
            while (n < 512) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                uint64_t a = x, b = x * 31 + 7;
                uint64_t start = (a & 1) ? a : (a % 100000000) + 1763700000000000000ull;
                uint64_t end = (b & 3) == 0 ? b : start + (b % 10000000);
                n += tsc_encode_event(slots + n, 512 - n, kinds[x % sizeof kinds], (uint8_t)a,
                                      (uint16_t)b, (uint32_t)(x % 5), start, end, a % 7);
            }
            assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_EVENTS, 42, slots,
                                                  (uint32_t)(n * sizeof slots[0])), 0);
            n = 0;
        }
        tsc_dump_close(&d);
    }
    tsa_job *job = NULL;
    tsa_load_options lo = {.quiet = 1, .lean = 1};
    assert_int_equal(tsa_job_load(dir, &lo, &job), 0);
    assert_true(job->n_problems > 0);
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    /* Exact per rank (job sums of absurd times saturate instead). */
    for (size_t i = 0; i < a->n_ranks; i++) {
        int64_t sum = 0;
        for (int l = 0; l < TSA_BL_COUNT; l++)
            sum += a->ranks[i].budget.line_ns[l];
        assert_int_equal(sum, a->ranks[i].budget.wall_ns);
    }
    char *json = tsa_report_json(a);
    assert_non_null(json);
    free(json);
    FILE *devnull = fopen("/dev/null", "w");
    tsa_report_print_text(devnull, a, 1);
    fclose(devnull);
    tsa_analysis_free(a);
    tsa_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_stall_flops),
        cmocka_unit_test(test_straggler_wait),
        cmocka_unit_test(test_clock_offset),
        cmocka_unit_test(test_host_only),
        cmocka_unit_test(test_healthy_run_has_no_warnings),
        cmocka_unit_test(test_warmup_and_short_runs),
        cmocka_unit_test(test_json_has_the_schema),
        cmocka_unit_test(test_garbage_events_do_not_crash),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
