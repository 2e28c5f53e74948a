/* What tscope-report-mpi's processes send each other, without MPI
 * (analyzer/load/share_pack.h, mpi/stage_pack.h): a job split over two hosts,
 * shipped as remote ranks to an empty "process 0" job, with the per-rank stages run
 * by the hosts on their own full ranks, analyses to the very same JSON
 * report as the whole job in one process; and every cut-short or corrupted
 * buffer is refused without a crash or a leak (buffers cross process
 * boundaries). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "load/dup_ranks.h"
#include "gen_run.h"
#include "load/job_build.h"
#include "load/rank_strings.h"
#include "load/rank_telemetry.h"
#include "tsc_format.h"
#include "load/share_pack.h"
#include "mpi/stage_pack.h"
#include "driver/analyze.h"
#include "report/report.h"

#define HOSTS 2
#define PROCS (HOSTS + 1) /* process 0 holds no rank of its own here */

/* The hosts and process 0's maps of them; the runner moves the buffers. */
typedef struct by_hand {
    tsa_stage_host host[PROCS];
    tsa_host_map maps[PROCS];
    size_t reply_bytes;         /* all answers, summed */
} by_hand;

static int stage(by_hand *w, tsa_analysis *a, tsa_stage s, const tsa_window_plan *wp,
                 const tsa_pass_plan *pp)
{
    tsa_pack_buf common = {0};
    assert_int_equal(tsa_stage_common_pack(s, wp, pp, &common), 0);
    int failed = 0;
    for (int q = 1; q < PROCS; q++) {
        tsa_pack_buf part = {0}, reply = {0};
        assert_int_equal(tsa_stage_host_pack(s, a, &w->maps[q], &part), 0);
        assert_int_equal(tsa_stage_host_run(&w->host[q], s, common.data, common.len,
                                            part.data, part.len, &reply), 0);
        w->reply_bytes += reply.len;
        /* Every cut of an answer is refused. */
        for (size_t len = 0; len < reply.len; len += 1 + len / 16)
            assert_int_equal(tsa_stage_reply_unpack(s, a, &w->maps[q], reply.data, len), -1);
        failed |= tsa_stage_reply_unpack(s, a, &w->maps[q], reply.data, reply.len);
        tsa_pack_buf_free(&part);
        tsa_pack_buf_free(&reply);
    }
    tsa_pack_buf_free(&common);
    return failed ? -1 : 0;
}

static int by_hand_steps(void *ctx, tsa_analysis *a)
{
    return stage(ctx, a, TSA_STAGE_STEPS, NULL, NULL);
}

static int by_hand_window(void *ctx, tsa_analysis *a, const tsa_window_plan *p)
{
    return stage(ctx, a, TSA_STAGE_WINDOW, p, NULL);
}

static int by_hand_pass(void *ctx, tsa_analysis *a, const tsa_pass_plan *p)
{
    return stage(ctx, a, TSA_STAGE_PASS, NULL, p);
}

static char *report_json_with(tsa_job *job, const tsa_analysis_options *opt,
                              const tsa_rank_runner *runner)
{
    tsa_analysis *a = tsa_analyze_with(job, opt, runner);
    assert_non_null(a);
    char *s = tsa_report_json(a);
    assert_non_null(s);
    tsa_analysis_free(a);
    return s;
}

/* Every prefix of a share is refused, and all-ones words (counts, string
 * lengths, array sizes among them) never crash the reader. */
static void refuses_damaged(tsa_pack_buf *b, const char *dir)
{
    for (size_t len = 0; len < b->len; len += 1 + len / 64) {
        tsa_job *j = tsa_job_new(dir);
        assert_non_null(j);
        assert_int_equal(tsa_share_unpack(b->data, len, j), -1);
        tsa_job_free(j);
    }
    for (size_t off = 8; off + 8 <= b->len && off < 4096; off += 8) {
        unsigned char save[8];
        memcpy(save, b->data + off, 8);
        memset(b->data + off, 0xff, 8);
        tsa_job *j = tsa_job_new(dir);
        assert_non_null(j);
        (void)tsa_share_unpack(b->data, b->len, j); /* any result, no crash */
        tsa_job_free(j);
        memcpy(b->data + off, save, 8);
    }
}

/* The split report is the local one, except that with every rank remote
 * the cause pass names nothing (the kernels stayed home; docs/findings.md
 * "Causes", Limits): its causes list must be empty, the rest identical. */
static void same_but_causes(const char *got, const char *want)
{
    cJSON *g = cJSON_Parse(got), *w = cJSON_Parse(want);
    assert_non_null(g);
    assert_non_null(w);
    cJSON *gc = cJSON_GetObjectItemCaseSensitive(g, "causes");
    assert_true(cJSON_IsArray(gc) && cJSON_GetArraySize(gc) == 0);
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(w, "causes")));
    cJSON_ReplaceItemInObjectCaseSensitive(w, "causes", cJSON_CreateArray());
    char *a = cJSON_Print(g), *b = cJSON_Print(w);
    assert_string_equal(a, b);
    free(a);
    free(b);
    cJSON_Delete(g);
    cJSON_Delete(w);
}

static void same_report_split(const char *name, const tsa_analysis_options *opt)
{
    gen_options o;
    gen_default_options(&o);
    o.ranks = 5;
    o.steps = 10;
    o.events_per_step = 400;
    o.straggler = 2;
    o.slowdown = 0.4;
    o.flops = 1e12;
    o.mem_base = 64u << 20;
    o.copy_share = 0.2;
    o.memset_share = 0.1;
    o.pageable = 1;
    o.syncs_per_step = 2;
    o.sync_gap_ns = 300000;
    run r = {0}; /* only loaded here: done() frees no analysis */
    generate(&o, name, &r);
    tsa_load_options lo = {.quiet = 1, .lean = 1};
    assert_int_equal(tsa_job_load(r.dir, &lo, &r.job), 0);
    char *want = report_json_with(r.job, opt, &tsa_local_runner);

    by_hand w = {0};
    tsa_job *root = tsa_job_new(r.job->dir), *hosts[PROCS] = {0};
    assert_non_null(root);
    root->run_id = strdup(r.job->run_id);
    size_t held[PROCS] = {0}, bulk = 0;
    for (int q = 1; q < PROCS; q++) {
        tsa_load_options share = lo;
        share.share_index = q - 1;
        share.share_count = HOSTS;
        assert_int_equal(tsa_job_load(r.dir, &share, &hosts[q]), 0);
        held[q] = hosts[q]->n_ranks;
        for (size_t i = 0; i < held[q]; i++)
            bulk += tsa_rank_records(&hosts[q]->ranks[i]);
        tsa_pack_buf b = {0};
        assert_int_equal(tsa_share_pack(hosts[q], 0, (uint32_t)q, &b), 0);
        assert_int_equal(tsa_share_unpack(b.data, b.len, root), 0);
        if (q == 1)
            refuses_damaged(&b, r.job->dir);
        tsa_pack_buf_free(&b);
        assert_int_equal(tsa_stage_host_init(&w.host[q], hosts[q], NULL), 0);
    }
    tsa_job_sort_ranks(root);
    assert_int_equal(root->n_ranks, r.job->n_ranks);
    /* Remote: no bulk record came over, but they are still counted. */
    for (size_t i = 0; i < root->n_ranks; i++) {
        const tsa_rank *x = &root->ranks[i];
        assert_true(x->remote);
        assert_int_equal(x->n_kernels + x->n_copies + x->n_syncs + x->n_gemms + x->n_apis +
                             x->n_ranges, 0);
        assert_int_equal(tsa_rank_records(x), tsa_rank_records(&r.job->ranks[i]));
        assert_int_equal(tsa_rank_kernel_count(x), r.job->ranks[i].n_kernels);
        /* Names keep their indices; kernel names stay home. */
        const tsa_rank *full = &r.job->ranks[i];
        assert_int_equal(x->n_strings, full->n_strings);
        size_t left_home = 0;
        for (size_t k = 0; k < x->n_strings; k++) {
            if (x->strings[k])
                assert_string_equal(x->strings[k], full->strings[k]);
            left_home += !x->strings[k];
        }
        assert_true(left_home > 0);
        assert_string_equal(tsa_rank_string(x, full->kernels[0].name), "");
    }
    assert_int_equal(tsa_host_maps_build(root, held, PROCS, w.maps), 0);
    tsa_rank_runner runner = {by_hand_steps, by_hand_window, by_hand_pass, &w, NULL, NULL, 0};
    char *got = report_json_with(root, opt, &runner);
    same_but_causes(got, want);
    /* What travels back is a small part of what stayed home. */
    print_message("%s: answers %zu bytes for %zu bulk records\n", name, w.reply_bytes, bulk);
    assert_true(w.reply_bytes < bulk * 4);
    free(want);
    free(got);
    for (int q = 1; q < PROCS; q++) {
        tsa_stage_host_free(&w.host[q]);
        tsa_job_free(hosts[q]);
        free(w.maps[q].job_index);
    }
    tsa_job_free(root);
    done(&r);
}

static void test_same_report_split_over_hosts(void **state)
{
    (void)state;
    same_report_split("split", NULL);
    tsa_analysis_options opt;
    tsa_analysis_default_options(&opt);
    opt.window = TSA_WINDOW_GPU_SPAN;
    same_report_split("split-gpu-span", &opt);
}

/* A host whose request is malformed answers "failed", and process 0
 * refuses that answer. */
/* A rank's telemetry crosses with it: the format 1.4 run-queue, throttling
 * and port samples, the port's name among the strings sent. */
static void test_telemetry_travels(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("/nowhere");
    assert_non_null(job);
    tsa_rank *r = tsa_job_add_rank(job);
    assert_non_null(r);
    r->rank = 3;
    static const char port[] = "mlx5_0:1";
    for (uint64_t k = 1; k <= 3; k++) {
        uint64_t t = 1795000000000000000ull + k * 1000000;
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_SCHED_WAIT, 0, 0, 0, t, 10 * k, 0, 0,
                                                NULL, 0), 0);
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_SCHED_RUN, 0, 0, 0, t, 20 * k, 0, 0,
                                                NULL, 0), 0);
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_CPU_THROTTLE, 2, 0, (uint32_t)k, t,
                                                30 * k, 0, 0, NULL, 0), 0);
        assert_int_equal(tsa_telemetry_on_event(r, TSC_EV_NET_COUNTER, 0, TSC_NET_SYMBOL_ERROR, 7,
                                                t, 40 * k, 0, 0, port, sizeof port - 1), 0);
    }
    tsa_pack_buf b = {0};
    assert_int_equal(tsa_share_pack(job, 0, 1, &b), 0);
    tsa_job *back = tsa_job_new("/nowhere");
    assert_non_null(back);
    assert_int_equal(tsa_share_unpack(b.data, b.len, back), 0);
    assert_int_equal(back->n_ranks, 1);
    const struct tsa_telemetry *t = back->ranks[0].telemetry;
    assert_non_null(t);
    assert_int_equal(t->n_sched_wait, 3);
    assert_int_equal(t->sched_wait[2].value, 30);
    assert_int_equal(t->n_sched_run, 3);
    assert_int_equal(t->sched_run[1].value, 40);
    assert_int_equal(t->n_throttled, 3);
    assert_int_equal(t->throttled[2].value, 90);
    assert_int_equal(t->throttled_periods[2].value, 3);
    assert_int_equal(t->n_net, 3);
    assert_int_equal(t->net[1].value, 80);
    assert_int_equal(t->net[1].counter, TSC_NET_SYMBOL_ERROR);
    assert_string_equal(tsa_rank_string(&back->ranks[0], t->net[1].port), port);
    refuses_damaged(&b, "/nowhere");
    tsa_pack_buf_free(&b);
    tsa_job_free(back);
    tsa_job_free(job);
}

static void test_failed_stage_is_refused(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("/nowhere");
    assert_non_null(job);
    tsa_stage_host h;
    assert_int_equal(tsa_stage_host_init(&h, job, NULL), 0);
    tsa_pack_buf reply = {0};
    unsigned char junk[3] = {1, 2, 3};
    assert_int_equal(tsa_stage_host_run(&h, TSA_STAGE_STEPS, NULL, 0, junk, 3, &reply), 0);
    tsa_analysis a = {.job = job};
    tsa_host_map m = {0};
    assert_int_equal(tsa_stage_reply_unpack(TSA_STAGE_STEPS, &a, &m, reply.data, reply.len), -1);
    tsa_pack_buf_free(&reply);
    tsa_stage_host_free(&h);
    tsa_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_report_split_over_hosts),
        cmocka_unit_test(test_failed_stage_is_refused),
        cmocka_unit_test(test_telemetry_travels),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
