/* The memory pass (analyzer/passes/memory.h) and the MEM.* findings.
 *
 *  - timeline: pool sizes replace async live bytes, frees below zero stop
 *    at zero, same-instant ordering, peak and its time, exact;
 *  - growth: a leak of X bytes per step is found with growth X; steady
 *    churn and a one-off jump are not leaks;
 *  - near-OOM: exactly at 90% of capacity does not fire, one byte over
 *    does (info), 95% warns, over capacity warns with negative headroom,
 *    unknown capacity never fires; capacity = free at start + reserved then;
 *  - generated dumps (gen_mem.h): peak, peak time, growth, churn, capacity
 *    equal the generator's truth; a healthy job has no MEM.* finding; a job
 *    without memory records has memory == null in the JSON. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "model/analysis.h"
#include "gen_run.h"
#include "load/job_build.h"
#include "model/memory.h"
#include "tsc_format.h"
#include "report/report.h"
#include "findings/mem.h"
#include "load/memory_timeline.h"
#include "passes/memory.h"

#define MiB (1ull << 20)

static const tsa_finding *find_in(const tsa_findings *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].id, id))
            return &l->items[i];
    return NULL;
}

static double number(const tsa_finding *f, const char *name)
{
    for (size_t i = 0; i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].name, name))
            return f->numbers[i].value;
    fail_msg("no number %s", name);
    return NAN;
}

/* ------------------------------------------------------ hand-built rank */

static tsa_job *job;
static tsa_rank *rk;

static void new_rank(size_t steps, int64_t step_ns, size_t warmup)
{
    job = tsa_job_new("mem");
    assert_non_null(job);
    rk = tsa_job_add_rank(job);
    assert_non_null(rk);
    rk->rank = 0;
    rk->steps = calloc(steps ? steps : 1, sizeof *rk->steps);
    rk->n_steps = steps;
    for (size_t i = 0; i < steps; i++) {
        rk->steps[i].start_ns = (int64_t)(i + 1) * step_ns;
        rk->steps[i].end_ns = (int64_t)(i + 2) * step_ns;
        rk->steps[i].warmup = i < warmup;
    }
}

static void mem(int64_t t, uint8_t op, uint8_t source, uint64_t bytes, uint64_t pool)
{
    tsa_mem_event e = {.t_ns = t, .op = op, .source = source, .bytes = bytes, .pool = pool};
    assert_int_equal(tsa_rank_add_mem(rk, &e), 0);
}

static void done_rank(void)
{
    tsa_job_free(job);
    job = NULL;
}

/* Measure the one rank and run the rules over it. */
static void measure(tsa_mem_rank *m, tsa_findings *f)
{
    assert_int_equal(tsa_mem_rank_measure(rk, m), 0);
    tsa_memory all = {.ranks = m, .n_ranks = 1, .peak_rank = m->rank, .peak_bytes = m->peak_bytes};
    memset(f, 0, sizeof *f);
    assert_int_equal(tsa_memory_findings(&all, f), 0);
}

static void test_walk(void **state)
{
    (void)state;
    tsa_mem_walk w;
    tsa_mem_event a = {.op = TSA_MEM_ALLOC, .source = TSC_MEM_SRC_ASYNC, .bytes = 100};
    tsa_mem_event p1 = {.op = TSA_MEM_POOL, .source = TSC_MEM_SRC_POOL, .bytes = 1000, .pool = 1};
    tsa_mem_event p2 = {.op = TSA_MEM_POOL, .source = TSC_MEM_SRC_POOL, .bytes = 300, .pool = 2};
    tsa_mem_event p1b = {.op = TSA_MEM_POOL, .source = TSC_MEM_SRC_POOL, .bytes = 50, .pool = 1};
    tsa_mem_event m = {.op = TSA_MEM_ALLOC, .source = TSC_MEM_SRC_MALLOC, .bytes = 7};
    tsa_mem_event v = {.op = TSA_MEM_FREE, .source = TSC_MEM_SRC_VMM, .bytes = 9};
    /* Without pool sizes, live async bytes count. */
    tsa_mem_walk_init(&w, 0);
    tsa_mem_walk_apply(&w, &a);
    tsa_mem_walk_apply(&w, &m);
    assert_int_equal(tsa_mem_walk_reserved(&w), 107);
    /* A free of more than is live (allocated before capture) stops at 0. */
    tsa_mem_walk_apply(&w, &v);
    assert_int_equal(tsa_mem_walk_reserved(&w), 100);
    /* With pool sizes, pools count and async allocations do not. */
    tsa_mem_walk_init(&w, 1);
    tsa_mem_walk_apply(&w, &a);
    tsa_mem_walk_apply(&w, &p1);
    tsa_mem_walk_apply(&w, &p2);
    tsa_mem_walk_apply(&w, &m);
    assert_int_equal(tsa_mem_walk_reserved(&w), 1307);
    tsa_mem_walk_apply(&w, &p1b); /* pool 1 trimmed: replaces, not adds */
    assert_int_equal(tsa_mem_walk_reserved(&w), 357);
}

static void test_same_instant_and_peak(void **state)
{
    (void)state;
    new_rank(0, 1000, 0);
    /* Arrival order scrambled; at t=30 a free and an alloc of the same
     * size: the free counts first, so the peak stays 100 + 50. */
    mem(30, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 50, 0);
    mem(10, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 100, 0);
    mem(20, TSA_MEM_ALLOC, TSC_MEM_SRC_VMM, 50, 0);
    mem(30, TSA_MEM_FREE, TSC_MEM_SRC_VMM, 50, 0);
    mem(40, TSA_MEM_FREE, TSC_MEM_SRC_MALLOC, 100, 0);
    tsa_mem_rank m;
    tsa_findings f;
    measure(&m, &f);
    assert_int_equal(m.peak_bytes, 150);
    assert_int_equal(m.peak_ns, 20);
    assert_int_equal(m.peak_step, -1);
    assert_int_equal(m.allocs, 3);
    assert_int_equal(m.frees, 2);
    assert_int_equal(m.alloc_bytes, 200);
    assert_int_equal(m.steps, 0);
    assert_true(isnan(m.growth_share));
    assert_true(isnan(m.peak_share)); /* no capacity known */
    assert_int_equal(f.n, 0);
    tsa_findings_free(&f);
    done_rank();
}

/* 8 steps of 1000 ns from t=1000, 2 warm-up; in each step `leak` bytes
 * stay and `churn` bytes come and go. */
static void steady_job(uint64_t base, uint64_t leak, uint64_t churn)
{
    new_rank(8, 1000, 2);
    mem(500, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, base, 0);
    for (int k = 0; k < 8; k++) {
        int64_t s = (int64_t)(k + 1) * 1000;
        if (leak)
            mem(s + 100, TSA_MEM_ALLOC, TSC_MEM_SRC_VMM, leak, 0);
        if (churn) {
            mem(s + 200, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, churn, 0);
            mem(s + 800, TSA_MEM_FREE, TSC_MEM_SRC_MALLOC, churn, 0);
        }
    }
}

static void test_leak_found(void **state)
{
    (void)state;
    steady_job(1000 * MiB, 3 * MiB, 0);
    tsa_mem_rank m;
    tsa_findings f;
    measure(&m, &f);
    assert_int_equal(m.steps, 6);
    assert_int_equal(m.growth_per_step, 3 * MiB);
    assert_true(m.growth_share == 1.0);
    assert_int_equal(m.first_step_bytes, 1000 * MiB + 3 * 3 * MiB);
    assert_int_equal(m.last_step_bytes, 1000 * MiB + 8 * 3 * MiB);
    assert_int_equal(m.peak_bytes, 1000 * MiB + 8 * 3 * MiB);
    assert_int_equal(m.peak_ns, 8000 + 100);
    assert_int_equal(m.peak_step, 7);
    const tsa_finding *g = find_in(&f, "MEM.GROWTH");
    assert_non_null(g);
    assert_int_equal(g->severity, TSA_SEV_INFO); /* no capacity: no projection */
    assert_true(g->recoverable_s == 0);
    assert_true(number(g, "growth_bytes_per_step") == (double)(3 * MiB));
    assert_null(find_in(&f, "MEM.CHURN"));
    tsa_findings_free(&f);
    /* With a capacity: warning, with the steps left at this rate. */
    rk->mem_total_bytes = 1100 * MiB;
    measure(&m, &f);
    g = find_in(&f, "MEM.GROWTH");
    assert_non_null(g);
    assert_int_equal(g->severity, TSA_SEV_WARNING);
    assert_true(number(g, "steps_to_oom") == floor((1100.0 - 1024.0) / 3.0));
    tsa_findings_free(&f);
    done_rank();
    /* Under the minimum growth per step: not reported. */
    steady_job(1000 * MiB, MiB - 1, 0);
    measure(&m, &f);
    assert_int_equal(m.growth_per_step, MiB - 1);
    assert_null(find_in(&f, "MEM.GROWTH"));
    tsa_findings_free(&f);
    done_rank();
}

static void test_churn_is_not_a_leak(void **state)
{
    (void)state;
    steady_job(1000 * MiB, 0, 64 * MiB);
    tsa_mem_rank m;
    tsa_findings f;
    measure(&m, &f);
    assert_int_equal(m.growth_per_step, 0);
    assert_true(m.growth_share == 0.0);
    assert_int_equal(m.churn_bytes_per_step, 64 * MiB);
    assert_true(m.churn_share == 1.0);
    assert_true(m.allocs_per_step == 1.0);
    assert_int_equal(m.peak_bytes, 1064 * MiB);
    assert_int_equal(m.peak_ns, 1200); /* first reached in step 0 */
    assert_null(find_in(&f, "MEM.GROWTH"));
    const tsa_finding *c = find_in(&f, "MEM.CHURN");
    assert_non_null(c);
    assert_true(number(c, "churn_bytes_per_step") == (double)(64 * MiB));
    tsa_findings_free(&f);
    done_rank();
    /* Churn of 1% of the peak or less is noise. */
    steady_job(1000 * MiB, 0, 10 * MiB);
    measure(&m, &f);
    assert_null(find_in(&f, "MEM.CHURN"));
    tsa_findings_free(&f);
    done_rank();
}

static void test_one_off_jump_is_not_a_leak(void **state)
{
    (void)state;
    steady_job(1000 * MiB, 0, 0);
    mem(5500, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 600 * MiB, 0); /* step 4 only */
    tsa_mem_rank m;
    tsa_findings f;
    measure(&m, &f);
    assert_int_equal(m.growth_per_step, 600 * MiB / 5);
    assert_true(m.growth_share == 1.0 / 5.0);
    assert_null(find_in(&f, "MEM.GROWTH"));
    tsa_findings_free(&f);
    done_rank();
}

/* One allocation of `peak` bytes against `capacity` (device total). */
static const tsa_finding *oom_case(uint64_t peak, uint64_t total, tsa_mem_rank *m,
                                   tsa_findings *f)
{
    new_rank(0, 1000, 0);
    rk->mem_total_bytes = total;
    mem(10, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, peak, 0);
    measure(m, f);
    done_rank();
    return find_in(f, "MEM.NEAR_OOM");
}

static void test_near_oom_edges(void **state)
{
    (void)state;
    tsa_mem_rank m;
    tsa_findings f;
    /* Exactly 90%: not strictly over, no finding. */
    assert_null(oom_case(900 * MiB, 1000 * MiB, &m, &f));
    assert_true(m.peak_share == 0.9);
    assert_int_equal(m.headroom_bytes, 100 * MiB);
    tsa_findings_free(&f);
    /* One byte over: info. */
    const tsa_finding *n = oom_case(900 * MiB + 1, 1000 * MiB, &m, &f);
    assert_non_null(n);
    assert_int_equal(n->severity, TSA_SEV_INFO);
    assert_true(number(n, "headroom_bytes") == (double)(100 * MiB - 1));
    tsa_findings_free(&f);
    /* 95%: warning. */
    n = oom_case(950 * MiB, 1000 * MiB, &m, &f);
    assert_non_null(n);
    assert_int_equal(n->severity, TSA_SEV_WARNING);
    tsa_findings_free(&f);
    /* Above the capacity (memory the capture did not see): negative
     * headroom, still a warning, no crash. */
    n = oom_case(1200 * MiB, 1000 * MiB, &m, &f);
    assert_non_null(n);
    assert_int_equal(m.headroom_bytes, -(int64_t)(200 * MiB));
    assert_int_equal(n->severity, TSA_SEV_WARNING);
    tsa_findings_free(&f);
    /* Capacity unknown: never fires. */
    assert_null(oom_case(UINT64_MAX / 2, 0, &m, &f));
    assert_true(isnan(m.peak_share));
    tsa_findings_free(&f);
}

static void test_capacity_from_mem_info(void **state)
{
    (void)state;
    /* 200 MiB held when cuMemGetInfo said 700 MiB free: usable is 900. */
    new_rank(0, 1000, 0);
    rk->mem_total_bytes = 80000 * MiB;
    rk->mem_free_bytes = 700 * MiB;
    rk->mem_info_ns = 50;
    mem(10, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 200 * MiB, 0);
    mem(60, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 660 * MiB, 0);
    tsa_mem_rank m;
    tsa_findings f;
    measure(&m, &f);
    assert_int_equal(m.capacity_bytes, 900 * MiB);
    assert_int_equal(m.headroom_bytes, 40 * MiB); /* 860 of 900: 95.6% */
    const tsa_finding *n = find_in(&f, "MEM.NEAR_OOM");
    assert_non_null(n);
    assert_int_equal(n->severity, TSA_SEV_WARNING);
    tsa_findings_free(&f);
    done_rank();
}

/* Sizes near 2^64 from a damaged dump: sums saturate, differences stay
 * in range (UBSan fails the test on any overflow). */
static void test_hostile_sizes(void **state)
{
    (void)state;
    new_rank(6, 1000, 1);
    rk->mem_free_bytes = UINT64_MAX - 5;
    rk->mem_info_ns = 1015; /* after the first allocation: capacity saturates */
    for (int k = 0; k < 6; k++) {
        int64_t s = (int64_t)(k + 1) * 1000;
        mem(s + 10, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, UINT64_MAX / 2, 0);
        mem(s + 20, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, UINT64_MAX, 0);
        mem(s + 30, TSA_MEM_FREE, TSC_MEM_SRC_MALLOC, UINT64_MAX, 0);
        mem(s + 40, TSA_MEM_POOL, TSC_MEM_SRC_POOL, UINT64_MAX, (uint64_t)k);
    }
    tsa_mem_rank m;
    tsa_findings f;
    measure(&m, &f);
    assert_int_equal(m.peak_bytes, UINT64_MAX);
    assert_int_equal(m.alloc_bytes, UINT64_MAX);
    assert_int_equal(m.capacity_bytes, UINT64_MAX);
    assert_true(m.headroom_bytes == 0);
    tsa_findings_free(&f);
    done_rank();
}

/* A job where the last rank has no memory records (its dump lost them):
 * only the ranks with records are measured, and nothing is written past
 * them (found by the pipeline fuzzer: the slot of a rank without records
 * was cleared past the end of the array). */
static void test_ranks_without_records(void **state)
{
    (void)state;
    new_rank(0, 1000, 0);
    mem(10, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 100, 0);
    tsa_rank *r1 = tsa_job_add_rank(job);
    assert_non_null(r1);
    r1->rank = 1;
    tsa_rank *r2 = tsa_job_add_rank(job);
    assert_non_null(r2);
    r2->rank = 2;
    rk = &job->ranks[1];
    mem(20, TSA_MEM_ALLOC, TSC_MEM_SRC_MALLOC, 300, 0);
    tsa_memory all;
    assert_int_equal(tsa_memory_measure(job, &all), 0);
    assert_int_equal(all.n_ranks, 2);
    assert_int_equal(all.ranks[0].rank, 0);
    assert_int_equal(all.ranks[1].rank, 1);
    assert_int_equal(all.peak_rank, 1);
    assert_int_equal(all.peak_bytes, 300);
    tsa_memory_free(&all);
    done_rank();
}

/* ------------------------------------------------------ generated dumps */

static const char *const mem_ids[] = {"MEM.GROWTH", "MEM.NEAR_OOM", "MEM.CHURN"};

static const tsa_mem_rank *mem_rank(const tsa_analysis *a, int rank)
{
    for (size_t i = 0; i < a->memory.n_ranks; i++)
        if (a->memory.ranks[i].rank == rank)
            return &a->memory.ranks[i];
    fail_msg("rank %d has no memory numbers", rank);
    return NULL;
}

static void test_gen_healthy(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.mem_base = 30000 * MiB;
    o.mem_pool = 2048 * MiB;
    o.mem_total = 81559 * MiB;
    o.mem_free = 80000 * MiB;
    run r;
    generate_and_analyze(&o, "mem_healthy", &r);
    assert_int_equal(r.a->memory.n_ranks, 4);
    for (size_t i = 0; i < 3; i++)
        assert_null(find_in(&r.a->findings, mem_ids[i]));
    const tsa_mem_rank *m = mem_rank(r.a, 0);
    assert_int_equal(m->peak_bytes, r.t.mem_peak_bytes);
    assert_int_equal(m->peak_ns, r.t.mem_peak_ns);
    assert_int_equal(m->capacity_bytes, r.t.mem_capacity_bytes);
    assert_int_equal(m->growth_per_step, 0);
    assert_int_equal(m->churn_bytes_per_step, 0);
    assert_true(m->allocs_per_step == 0); /* async allocations come from the pool */
    assert_int_equal(m->steps, (size_t)r.t.steps_analysed);
    done(&r);
}

static void test_gen_leak_and_churn(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.mem_base = 20000 * MiB;
    o.mem_leak = 96 * MiB;
    o.mem_leak_rank = 2;
    o.mem_churn = 512 * MiB;
    o.mem_total = 81559 * MiB;
    run r;
    generate_and_analyze(&o, "mem_leak", &r);
    assert_int_equal(r.a->memory.peak_rank, r.t.mem_peak_rank);
    assert_int_equal(r.a->memory.peak_bytes, r.t.mem_peak_bytes);
    const tsa_mem_rank *m = mem_rank(r.a, 2);
    assert_int_equal(m->peak_ns, r.t.mem_peak_ns);
    assert_int_equal(m->growth_per_step, r.t.mem_growth_per_step);
    assert_int_equal(m->churn_bytes_per_step, r.t.mem_churn_per_step);
    assert_int_equal(mem_rank(r.a, 1)->growth_per_step, 0);
    const tsa_finding *g = find_in(&r.a->findings, "MEM.GROWTH");
    assert_non_null(g);
    assert_int_equal(g->rank, 2);
    assert_true(number(g, "ranks") == 1);
    assert_true(number(g, "growth_bytes_per_step") == (double)r.t.mem_growth_per_step);
    assert_non_null(find_in(&r.a->findings, "MEM.CHURN"));
    assert_null(find_in(&r.a->findings, "MEM.NEAR_OOM"));
    /* Advisory: the budget attribution gives them nothing. */
    assert_true(g->recoverable_s == 0);
    done(&r);
}

static void test_gen_near_oom(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.mem_base = 75000 * MiB;
    o.mem_free = 78000 * MiB; /* 96% of what was free at start */
    run r;
    generate_and_analyze(&o, "mem_oom", &r);
    const tsa_finding *n = find_in(&r.a->findings, "MEM.NEAR_OOM");
    assert_non_null(n);
    assert_int_equal(n->severity, TSA_SEV_WARNING);
    assert_true(number(n, "ranks") == 2);
    assert_true(number(n, "headroom_bytes") == (double)(3000 * MiB));
    done(&r);
}

static void test_gen_without_memory_json_null(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    run r;
    generate_and_analyze(&o, "mem_none", &r);
    assert_int_equal(r.a->memory.n_ranks, 0);
    char *js = tsa_report_json(r.a);
    assert_non_null(js);
    cJSON *root = cJSON_Parse(js);
    assert_non_null(root);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "memory")));
    cJSON_Delete(root);
    free(js);
    done(&r);
    /* With records: an object whose peak is the truth. */
    o.mem_base = 100 * MiB;
    generate_and_analyze(&o, "mem_some", &r);
    js = tsa_report_json(r.a);
    root = cJSON_Parse(js);
    const cJSON *mo = cJSON_GetObjectItemCaseSensitive(root, "memory");
    assert_true(cJSON_IsObject(mo));
    assert_true(cJSON_GetObjectItemCaseSensitive(mo, "peak_reserved_bytes")->valuedouble ==
                (double)(100 * MiB));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(mo, "per_rank")), 2);
    cJSON_Delete(root);
    free(js);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_same_instant_and_peak),
        cmocka_unit_test(test_leak_found),
        cmocka_unit_test(test_churn_is_not_a_leak),
        cmocka_unit_test(test_one_off_jump_is_not_a_leak),
        cmocka_unit_test(test_near_oom_edges),
        cmocka_unit_test(test_capacity_from_mem_info),
        cmocka_unit_test(test_hostile_sizes),
        cmocka_unit_test(test_ranks_without_records),
        cmocka_unit_test(test_gen_healthy),
        cmocka_unit_test(test_gen_leak_and_churn),
        cmocka_unit_test(test_gen_near_oom),
        cmocka_unit_test(test_gen_without_memory_json_null),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
