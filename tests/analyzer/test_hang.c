/* The hang analysis on jobs built in memory: exact rank sets, the "no
 * data" / "missing" distinction, no finding for a job stopped mid-step,
 * desync rules, early exits, compact rank lists, and the stuck-on-GPU
 * matching rule (the CUPTI path's logic, checked without a GPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hang/hang.h"
#include "load/job_build.h"
#include "tsc_format.h"
#include "load/end_meta.h"
#include "report/hang_render.h"

#define WORLD 0x1111ull
#define SEC 1000000000ll
#define T0 (1700000000ll * SEC)

/* One rank: `done` AllReduce calls completed (seq 0..done-1, 10 ms apart),
 * then optionally one entered at seq `done` and never left. */
static tsa_rank *add_rank(tsa_job *job, int rank, int world, int done, int entered)
{
    tsa_rank *r = tsa_job_add_rank(job);
    assert_non_null(r);
    r->rank = rank;
    r->world_size = world;
    for (int s = 0; s < done; s++) {
        tsa_nccl_op op = {.start_ns = T0 + s * 10000000ll, .end_ns = T0 + s * 10000000ll + 1000,
                          .seq = (uint64_t)s, .comm_id = WORLD, .bytes = 4096, .count = 1024,
                          .op = TSC_NCCL_ALLREDUCE, .dtype = TSC_DT_FLOAT32, .peer = -1,
                          .comm_size = (uint32_t)world, .comm_rank = (uint32_t)rank,
                          .kernel = TSA_NONE, .tid = 100};
        assert_int_equal(tsa_rank_add_nccl(r, &op), 0);
    }
    if (entered) {
        r->pending = calloc(1, sizeof *r->pending);
        r->pending[0] = (tsa_nccl_op){.start_ns = T0 + done * 10000000ll,
                                      .end_ns = T0 + done * 10000000ll, .seq = (uint64_t)done,
                                      .comm_id = WORLD, .bytes = 4096, .op = TSC_NCCL_ALLREDUCE,
                                      .dtype = TSC_DT_FLOAT32, .peer = -1,
                                      .comm_size = (uint32_t)world, .kernel = TSA_NONE,
                                      .tid = 100};
        r->n_pending = 1;
    }
    return r;
}

static void end_at(tsa_rank *r, const char *reason, int64_t last_ns)
{
    snprintf(r->end.reason, sizeof r->end.reason, "%s", reason);
    r->end.last_ns = last_ns;
}

static const tsa_hang_item *only(const tsa_hang_result *h, tsa_hang_kind k)
{
    const tsa_hang_item *it = NULL;
    for (size_t i = 0; i < h->n; i++)
        if (h->items[i].kind == k) {
            assert_null(it);
            it = &h->items[i];
        }
    return it;
}

static void expect_list(const tsa_rank_list *l, const char *want)
{
    char buf[256];
    assert_string_equal(tsa_rank_list_format(l, buf, sizeof buf), want);
}

static tsa_job *finish(tsa_job *job)
{
    assert_int_equal(tsa_job_finish(job), 0);
    return job;
}

/* 8-rank world, dumps of ranks 0-5 only: 0,2,3 stuck at seq 50 for 5 s,
 * rank 1 alive but never entered, rank 4 exited (code 3) before it,
 * rank 5 killed by SIGTERM without entering: missing.  6 and 7: no data. */
static void test_hang_rank_sets(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    int64_t kill = T0 + 50 * 10000000ll + 5 * SEC;
    end_at(add_rank(job, 0, 8, 50, 1), "signal:15", kill);
    end_at(add_rank(job, 1, 8, 50, 0), "signal:15", kill);
    end_at(add_rank(job, 2, 8, 50, 1), "signal:15", kill);
    end_at(add_rank(job, 3, 8, 50, 1), "", kill - SEC / 2); /* SIGKILL: last flush */
    tsa_rank *r4 = add_rank(job, 4, 8, 40, 0);
    end_at(r4, "exit", T0 + 40 * 10000000ll);
    r4->end.has_exit_code = 1;
    r4->end.exit_code = 3;
    end_at(add_rank(job, 5, 8, 50, 0), "signal:15", kill);
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    assert_non_null(h);
    const tsa_hang_item *it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    assert_int_equal(it->seq, 50);
    assert_int_equal(it->op, TSC_NCCL_ALLREDUCE);
    assert_true(it->comm_id == WORLD);
    expect_list(&it->stuck, "ranks 0,2-3");
    expect_list(&it->missing, "ranks 1,5");
    expect_list(&it->exited, "rank 4");
    expect_list(&it->no_data, "ranks 6-7");
    expect_list(&h->no_data, "ranks 6-7");
    assert_true(it->in_flight_ns == 5 * SEC);
    /* Lines: stuck, missing (same last call: one line), exited, no data. */
    assert_int_equal(it->n_groups, 4);
    assert_non_null(strstr(it->groups[1].what, "AllReduce seq 49"));
    assert_non_null(strstr(it->groups[2].what, "exit code 3"));
    assert_non_null(strstr(it->groups[2].what, "AllReduce seq 39"));
    /* Rank 4 also ended early while the others went on. */
    const tsa_hang_item *ex = only(h, TSA_HANG_EXITED);
    assert_non_null(ex);
    expect_list(&ex->ranks, "rank 4");
    assert_int_equal(ex->exit_code, 3);
    assert_null(only(h, TSA_HANG_DESYNC));
    tsa_findings f = {0};
    assert_int_equal(tsa_hang_add_findings(h, &f), 0);
    assert_int_equal(f.n, 2);
    assert_string_equal(f.items[0].id, "DIST.HANG");
    tsa_findings_free(&f);
    tsa_hang_free(h);
    tsa_job_free(job);
}

/* A healthy job stopped by SIGTERM mid-step: rank 0 waits 3 ms in an
 * AllReduce that rank 1 has not reached yet.  No finding. */
static void test_job_stopped_mid_step_is_no_hang(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    int64_t kill = T0 + 30 * 10000000ll + 3000000;
    end_at(add_rank(job, 0, 2, 30, 1), "signal:15", kill);
    end_at(add_rank(job, 1, 2, 30, 0), "signal:15", kill);
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    assert_non_null(h);
    assert_int_equal(h->n, 0);
    tsa_hang_free(h);
    /* The same seen by the watchdog (it only fires after TSCOPE_HANG_S): a hang. */
    job->ranks[0].pending[0].flags |= TSA_NCCL_F_WATCHDOG;
    h = tsa_hang_analyze(job);
    assert_int_equal(h->n, 1);
    assert_true(h->items[0].watchdog);
    expect_list(&h->items[0].missing, "rank 1");
    tsa_hang_free(h);
    tsa_job_free(job);
}

/* A rank inside ncclCommInitRank for comm `comm` of `size` ranks since
 * `t`, its dump last speaking at `last`. */
static tsa_rank *init_rank(tsa_job *job, int rank, int world, uint64_t comm, uint32_t size,
                           int64_t t, int64_t last, int inside)
{
    tsa_rank *r = tsa_job_add_rank(job);
    assert_non_null(r);
    r->rank = rank;
    r->world_size = world;
    tsa_nccl_op op = {.start_ns = t, .end_ns = t, .comm_id = comm, .op = TSC_NCCL_COMM_INIT_RANK,
                      .peer = -1, .comm_size = size, .comm_rank = (uint32_t)rank,
                      .kernel = TSA_NONE, .tid = 100};
    if (inside) {
        r->pending = calloc(1, sizeof *r->pending);
        r->pending[0] = op;
        r->n_pending = 1;
    }
    end_at(r, "signal:15", last);
    return r;
}

/* Communicator creation that never completed: world-sized, the members
 * with a dump that never entered are missing (an exited one, exited),
 * those without a dump no data; a smaller communicator says how many never
 * came; a job stopped while creating (everyone inside for 0.5 s) is none. */
static void test_init_stalls(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    init_rank(job, 0, 6, WORLD, 6, T0, T0 + 3 * SEC, 1);
    init_rank(job, 1, 6, WORLD, 6, T0, T0 + 3 * SEC, 1);
    init_rank(job, 2, 6, WORLD, 6, T0, T0 + 3 * SEC, 0);               /* never came */
    end_at(init_rank(job, 3, 6, WORLD, 6, T0, T0 + SEC, 0), "exit", T0); /* died first */
    init_rank(job, 4, 6, WORLD, 6, T0 + SEC, T0 + 3 * SEC, 1);
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    assert_non_null(h);
    const tsa_hang_item *it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    assert_int_equal(it->op, TSC_NCCL_COMM_INIT_RANK);
    assert_int_equal(it->in_flight_ns, 3 * SEC);
    expect_list(&it->stuck, "ranks 0-1,4");
    expect_list(&it->missing, "rank 2");
    expect_list(&it->exited, "rank 3");
    expect_list(&it->no_data, "rank 5");
    assert_non_null(strstr(it->title, "(6 ranks) was never created: ranks 0-1,4 stuck in "
                                      "CommInitRank for 3.0 s; rank 2 never entered it; some "
                                      "had already exited"));
    assert_null(only(h, TSA_HANG_EXITED)); /* no collective went on without rank 3 */
    tsa_hang_free(h);
    tsa_job_free(job);

    /* A 4-rank sub-communicator of an 8-rank world, 2 inside, 1 joined
     * earlier (its init completed): 1 never came, which one unknown. */
    job = tsa_job_new("mem");
    init_rank(job, 0, 8, 0x22, 4, T0, T0 + 2 * SEC, 1);
    init_rank(job, 2, 8, 0x22, 4, T0, T0 + 2 * SEC, 1);
    tsa_rank *r = init_rank(job, 4, 8, 0x22, 4, T0, T0 + 2 * SEC, 0);
    tsa_nccl_op done = {.start_ns = T0, .end_ns = T0 + 1000, .comm_id = 0x22,
                        .op = TSC_NCCL_COMM_INIT_RANK_CONFIG, .peer = -1, .comm_size = 4,
                        .kernel = TSA_NONE, .tid = 100};
    assert_int_equal(tsa_rank_add_nccl(r, &done), 0);
    h = tsa_hang_analyze(finish(job));
    it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    expect_list(&it->stuck, "ranks 0,2");
    assert_int_equal(it->missing.n, 0);
    assert_non_null(strstr(it->groups[it->n_groups - 1].what, "1 of its 4 members"));
    assert_non_null(strstr(it->title, "some members never entered it"));
    tsa_hang_free(h);
    tsa_job_free(job);

    /* Everyone inside for 0.5 s when the job was stopped: no hang; the
     * same seen live by the watchdog: a hang. */
    job = tsa_job_new("mem");
    for (int k = 0; k < 3; k++)
        init_rank(job, k, 3, WORLD, 3, T0, T0 + SEC / 2, 1);
    h = tsa_hang_analyze(finish(job));
    assert_int_equal(h->n, 0);
    tsa_hang_free(h);
    job->ranks[1].pending[0].flags |= TSA_NCCL_F_WATCHDOG;
    h = tsa_hang_analyze(job);
    it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    assert_true(it->watchdog);
    assert_non_null(strstr(it->title, "no rank missing"));
    tsa_hang_free(h);
    tsa_job_free(job);
}

/* A GroupEnd that never returned: the grouped collectives are in flight. */
static void test_group_end_in_flight(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    int64_t kill = T0 + 10 * SEC;
    for (int rank = 0; rank < 2; rank++) {
        tsa_rank *r = add_rank(job, rank, 2, 5, 0);
        end_at(r, "signal:15", kill);
        if (rank == 1)
            continue; /* rank 1 never got there */
        int64_t t = T0 + 60000000ll;
        tsa_nccl_op gs = {.start_ns = t, .end_ns = t + 10, .op = TSC_NCCL_GROUP_START,
                          .tid = 100, .kernel = TSA_NONE};
        tsa_nccl_op send = {.start_ns = t + 20, .end_ns = t + 30, .op = TSC_NCCL_SEND, .seq = 5,
                            .comm_id = WORLD, .flags = TSC_NCCL_F_IN_GROUP, .tid = 100,
                            .peer = 1, .kernel = TSA_NONE, .comm_size = 2};
        assert_int_equal(tsa_rank_add_nccl(r, &gs), 0);
        assert_int_equal(tsa_rank_add_nccl(r, &send), 0);
        r->pending = calloc(1, sizeof *r->pending);
        r->pending[0] = (tsa_nccl_op){.start_ns = t + 40, .end_ns = t + 40,
                                      .op = TSC_NCCL_GROUP_END, .tid = 100,
                                      .flags = TSC_NCCL_F_IN_GROUP, .kernel = TSA_NONE};
        r->n_pending = 1;
    }
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    const tsa_hang_item *it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    assert_int_equal(it->op, TSC_NCCL_SEND);
    assert_int_equal(it->seq, 5);
    expect_list(&it->stuck, "rank 0");
    expect_list(&it->missing, "rank 1");
    tsa_hang_free(h);
    tsa_job_free(job);
}

/* Desync at seq 3 (rank 1 AllGather); p2p is never compared, and seqs
 * after a send/recv count mismatch are not compared either. */
static void test_desync_rules(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    for (int rank = 0; rank < 3; rank++)
        end_at(add_rank(job, rank, 3, 6, 0), "exit", T0 + SEC);
    job->ranks[1].nccl[3].op = TSC_NCCL_ALLGATHER;
    job->ranks[1].nccl[3].bytes = 1024;
    job->ranks[2].nccl[1].op = TSC_NCCL_SEND; /* pipeline-like: seq 1 differs, p2p */
    job->ranks[0].nccl[1].op = TSC_NCCL_RECV;
    job->ranks[1].nccl[1].op = TSC_NCCL_RECV;
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    const tsa_hang_item *it = only(h, TSA_HANG_DESYNC);
    assert_non_null(it);
    assert_int_equal(it->seq, 3);
    expect_list(&it->ranks, "ranks 0-2");
    assert_int_equal(it->n_groups, 2);
    expect_list(&it->groups[0].ranks, "ranks 0,2");
    expect_list(&it->groups[1].ranks, "rank 1");
    assert_non_null(strstr(it->groups[1].what, "AllGather float32 1024 B"));
    assert_null(only(h, TSA_HANG_EXITED)); /* all ended at the same seq */
    tsa_hang_free(h);
    /* Rank 2 makes one extra send/recv before seq 3: not comparable. */
    job->ranks[2].nccl[2].op = TSC_NCCL_SEND;
    h = tsa_hang_analyze(job);
    assert_null(only(h, TSA_HANG_DESYNC));
    tsa_hang_free(h);
    tsa_job_free(job);
}

static void test_rank_list_ranges(void **state)
{
    (void)state;
    tsa_rank_list l = {0};
    char buf[64];
    assert_string_equal(tsa_rank_list_format(&l, buf, sizeof buf), "-");
    for (int r = 999; r >= 0; r--)
        if (r != 500)
            assert_int_equal(tsa_rank_list_add(&l, r), 0);
    assert_int_equal(tsa_rank_list_add(&l, 7), 0); /* duplicate */
    tsa_rank_list_sort(&l);
    assert_int_equal(l.n, 999);
    assert_string_equal(tsa_rank_list_format(&l, buf, sizeof buf), "ranks 0-499,501-999");
    tsa_rank_list_free(&l);
    for (int r = 0; r < 1000; r += 2)
        assert_int_equal(tsa_rank_list_add(&l, r), 0);
    tsa_rank_list_format(&l, buf, sizeof buf);
    assert_true(strlen(buf) < sizeof buf);
    assert_non_null(strstr(buf, ",...")); /* cut, never overflowing */
    tsa_rank_list_free(&l);
}

/* 1,000 ranks: 999 stuck, one missing; the view is a handful of lines. */
static void test_thousand_ranks_few_lines(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    for (int rank = 0; rank < 1000; rank++)
        end_at(add_rank(job, rank, 1000, 3, rank != 617), "signal:15", T0 + 10 * SEC);
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    const tsa_hang_item *it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    expect_list(&it->stuck, "ranks 0-616,618-999");
    expect_list(&it->missing, "rank 617");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tsa_hang_print_text(f, h, 0);
    fclose(f);
    int lines = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    assert_true(lines <= 8);
    free(text);
    tsa_hang_free(h);
    tsa_job_free(job);
}

static void test_end_classification(void **state)
{
    (void)state;
    tsa_rank_end e = {0};
    char buf[64];
    assert_false(tsa_end_by_itself(&e)); /* no END: killed, no idea */
    tsa_load_end_meta(&e, TSC_META_END_REASON, "signal:6");
    assert_true(tsa_end_by_itself(&e));
    assert_string_equal(tsa_end_describe(&e, buf, sizeof buf), "SIGABRT (6)");
    tsa_load_end_meta(&e, TSC_META_END_REASON, "signal:15");
    assert_false(tsa_end_by_itself(&e));
    tsa_load_end_meta(&e, TSC_META_END_REASON, "exit");
    tsa_load_end_meta(&e, TSC_META_EXIT_CODE, "3");
    assert_true(tsa_end_by_itself(&e));
    assert_string_equal(tsa_end_describe(&e, buf, sizeof buf), "exit code 3");
    tsa_load_end_meta(&e, TSC_META_EXIT_CODE, "999"); /* garbage is ignored */
    assert_int_equal(e.exit_code, 3);
    tsa_load_end_meta(&e, TSC_META_ANCHOR_REALTIME, "200");
    tsa_load_end_meta(&e, TSC_META_END_REALTIME, "100");
    assert_true(e.last_ns == 200);
}

/* The CUPTI rule: a suffix of calls without a completed kernel after at
 * least one with one. */
static void test_gpu_first_unfinished(void **state)
{
    (void)state;
    tsa_nccl_op ops[6];
    const tsa_nccl_op *p[6];
    for (int i = 0; i < 6; i++) {
        memset(&ops[i], 0, sizeof ops[i]);
        ops[i].kernel = i;
        p[i] = &ops[i];
    }
    assert_int_equal(tsa_gpu_first_unfinished(p, 6), -1);  /* all completed */
    ops[4].kernel = ops[5].kernel = TSA_NONE;
    assert_int_equal(tsa_gpu_first_unfinished(p, 6), 4);   /* stuck from the 5th */
    ops[1].kernel = TSA_NONE;                              /* a gap that recovered */
    assert_int_equal(tsa_gpu_first_unfinished(p, 6), 4);
    ops[5].kernel = 9;                                     /* a later one completed */
    assert_int_equal(tsa_gpu_first_unfinished(p, 6), -1);
    for (int i = 0; i < 6; i++)
        ops[i].kernel = TSA_NONE;                          /* no linking at all: unknown */
    assert_int_equal(tsa_gpu_first_unfinished(p, 6), -1);
    assert_int_equal(tsa_gpu_first_unfinished(p, 0), -1);
}

/* The GPU rule wired into the analysis: a rank with kernel records whose
 * last two calls' kernels never completed is stuck on GPU at the first. */
static void test_stuck_on_gpu_in_analysis(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("mem");
    for (int rank = 0; rank < 2; rank++) {
        tsa_rank *r = add_rank(job, rank, 2, 6, 0);
        end_at(r, "signal:15", T0 + SEC);
        tsa_kernel *k = tsa_rank_new_kernel(r);
        assert_non_null(k);
        k->start_ns = T0;
        k->end_ns = T0 + 10;
        for (size_t i = 0; i < r->n_nccl; i++)
            r->nccl[i].kernel = rank == 1 && i >= 4 ? TSA_NONE : 0;
    }
    tsa_hang_result *h = tsa_hang_analyze(finish(job));
    const tsa_hang_item *it = only(h, TSA_HANG_HANG);
    assert_non_null(it);
    assert_true(it->on_gpu);
    assert_int_equal(it->seq, 4);
    expect_list(&it->stuck, "rank 1");
    tsa_hang_free(h);
    tsa_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hang_rank_sets),
        cmocka_unit_test(test_job_stopped_mid_step_is_no_hang),
        cmocka_unit_test(test_group_end_in_flight),
        cmocka_unit_test(test_init_stalls),
        cmocka_unit_test(test_desync_rules),
        cmocka_unit_test(test_rank_list_ranges),
        cmocka_unit_test(test_thousand_ranks_few_lines),
        cmocka_unit_test(test_end_classification),
        cmocka_unit_test(test_gpu_first_unfinished),
        cmocka_unit_test(test_stuck_on_gpu_in_analysis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
