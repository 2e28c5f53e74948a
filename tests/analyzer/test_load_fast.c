/* The loader's fast paths: the lane merge of tsa_sort_keys (interleaved
 * sorted streams), tsa_sort_records (in-place insertion fix-up of nearly
 * sorted records, gather sort, and both together, with the permutation),
 * the correlation index (dense and sparse forms, repeated ids) and the
 * in-place appends with reserved capacity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "load/corr_index.h"
#include "load/job_build.h"
#include "util/radix_sort.h"
#include "util/record_sort.h"
#include "sort_check.h"


/* n keys drawn from `lanes` sorted streams, interleaved in random bursts
 * (so far more than 64 runs), with repeated keys across streams. */
static void fill_streams(tsa_sort_key *a, size_t n, size_t lanes)
{
    int64_t t[16] = {0};
    size_t l = 0;
    for (size_t i = 0; i < n; i++) {
        if (next() % 4 == 0)
            l = (size_t)(next() % lanes);
        t[l] += (int64_t)(next() % 3); /* steps of 0 make ties */
        a[i].key = t[l] * 16 + (int64_t)l % 2 - 1000;
        a[i].idx = i;
    }
}

static void test_sort_keys_interleaved_streams(void **state)
{
    (void)state;
    size_t lane_counts[] = {2, 3, 8, 9, 16};
    size_t sizes[] = {100, 5000, 200000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t c = 0; c < sizeof lane_counts / sizeof lane_counts[0]; c++) {
            size_t n = sizes[s];
            tsa_sort_key *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
            assert_non_null(a);
            assert_non_null(b);
            fill_streams(a, n, lane_counts[c]);
            memcpy(b, a, n * sizeof *a);
            qsort(b, n, sizeof *b, by_key_then_idx);
            assert_int_equal(tsa_sort_keys(a, n), 0);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(a[i].key, b[i].key);
                assert_int_equal(a[i].idx, b[i].idx);
            }
            free(a);
            free(b);
        }
}

typedef struct rec {
    int64_t start_ns;
    uint32_t tag;      /* original position */
    uint32_t pad;
    uint64_t more[2];
} rec;

/* Shapes: 0 sorted; 1 random keys (gather sort); 2 nearly sorted, one
 * record in 100 written up to 40 places late (fixed in place); 3 shape 2
 * for the first half, then one record 1000 places late (the fix-up gives
 * up after moving records: the gather sort finishes from there). */
static int64_t shape_key(int shape, size_t i, size_t n)
{
    switch (shape) {
    case 0: return (int64_t)i;
    case 1: return (int64_t)(next() % 50);
    default:
        if (shape == 3 && n > 2000 && i == n / 2 + 1000)
            return (int64_t)(n / 2) * 10;
        if (next() % 100 == 0)
            return (int64_t)i * 10 - (int64_t)(next() % 400);
        return (int64_t)i * 10 + (int64_t)(next() % 2) * 10; /* ties */
    }
}

static void check_records(size_t n, int shape)
{
    rec *v = malloc((n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        memset(&v[i], 0, sizeof v[i]);
        v[i].start_ns = shape_key(shape, i, n);
        v[i].tag = (uint32_t)i;
        v[i].more[0] = i * 3;
        v[i].more[1] = ~(uint64_t)i;
    }
    int sorted = 1;
    for (size_t i = 1; i < n; i++)
        sorted &= v[i - 1].start_ns <= v[i].start_ns;
    void *arr = v;
    size_t cap = n + 5, *perm = NULL;
    assert_int_equal(tsa_sort_records(&arr, &cap, n, sizeof(rec), &perm), 0);
    rec *out = arr;
    if (sorted)
        assert_null(perm);
    else
        assert_non_null(perm);
    if (sorted || shape == 2) { /* in place: same array, same capacity */
        assert_ptr_equal(arr, v);
        assert_int_equal(cap, n + 5);
    }
    if (shape == 3 && n > 2000)
        assert_ptr_not_equal(arr, v);
    for (size_t k = 1; k < n; k++) {
        assert_true(out[k - 1].start_ns <= out[k].start_ns);
        if (out[k - 1].start_ns == out[k].start_ns)
            assert_true(out[k - 1].tag < out[k].tag); /* stable */
    }
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(out[k].more[0], (uint64_t)out[k].tag * 3);
        assert_int_equal(out[k].more[1], ~(uint64_t)out[k].tag);
        if (perm)
            assert_int_equal(perm[out[k].tag], k);
    }
    if (perm && arr != v)
        assert_int_equal(cap, n);
    free(perm);
    free(arr);
}

static void test_sort_records(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 2, 33, 10000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int shape = 0; shape < 4; shape++)
            check_records(sizes[s], shape);
    }
    /* No permutation wanted. */
    rec *v = calloc(3, sizeof *v);
    assert_non_null(v);
    v[0].start_ns = 5;
    v[1].start_ns = 1;
    v[2].start_ns = 3;
    void *arr = v;
    size_t cap = 3;
    assert_int_equal(tsa_sort_records(&arr, &cap, 3, sizeof *v, NULL), 0);
    v = arr;
    assert_int_equal(v[0].start_ns, 1);
    assert_int_equal(v[1].start_ns, 3);
    assert_int_equal(v[2].start_ns, 5);
    free(v);
}

static int64_t slow_find(const tsa_kernel *k, size_t n, uint64_t corr)
{
    for (size_t i = 0; i < n; i++)
        if (k[i].correlation == corr)
            return (int64_t)i;
    return -1;
}

static void check_index(uint32_t spread, size_t n)
{
    tsa_kernel *k = calloc(n ? n : 1, sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < n; i++)
        k[i].correlation = (uint32_t)(1000 + next() % spread);
    tsa_corr_index ix;
    assert_int_equal(tsa_corr_index_build(&ix, k, n), 0);
    for (uint64_t j = 0; j < 5000 && j < (uint64_t)spread + 20; j++) {
        uint64_t c = spread <= 5000 ? 990 + j : 990 + next() % ((uint64_t)spread + 20);
        assert_int_equal(tsa_corr_index_find(&ix, c), slow_find(k, n, c));
    }
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tsa_corr_index_find(&ix, k[i].correlation),
                         slow_find(k, n, k[i].correlation));
    assert_int_equal(tsa_corr_index_find(&ix, UINT64_C(1) << 40), -1);
    tsa_corr_index_free(&ix);
    free(k);
}

static void test_corr_index(void **state)
{
    (void)state;
    check_index(10, 0);
    check_index(10, 50);          /* dense, many repeats */
    check_index(3000, 2000);      /* dense, some repeats */
    check_index(4000000000u, 2000); /* sparse */
}

static void test_reserve_and_new(void **state)
{
    (void)state;
    tsa_job *job = tsa_job_new("x");
    assert_non_null(job);
    tsa_rank *r = tsa_job_add_rank(job);
    assert_non_null(r);
    tsa_rank_counts c = {.kernels = 1000, .apis = 10, .gemms = 3};
    assert_int_equal(tsa_rank_reserve(r, &c), 0);
    assert_true(r->cap_kernels >= 1000);
    assert_true(r->cap_apis >= 10);
    assert_int_equal(r->n_kernels, 0);
    for (int i = 0; i < 3000; i++) {
        tsa_kernel *k = tsa_rank_new_kernel(r);
        assert_non_null(k);
        assert_int_equal(k->start_ns, 0);
        assert_int_equal(k->correlation, 0);
        k->start_ns = 3000 - i;
        k->nccl = k->gemm = TSA_NONE;
        tsa_api *a = tsa_rank_new_api(r);
        assert_non_null(a);
        a->start_ns = i;
    }
    tsa_gemm *g = tsa_rank_new_gemm(r);
    assert_non_null(g);
    g->kernel = TSA_NONE;
    tsa_rank_counts got;
    tsa_rank_counts_of(r, &got);
    assert_int_equal(got.kernels, 3000);
    assert_int_equal(got.apis, 3000);
    assert_int_equal(got.gemms, 1);
    assert_int_equal(got.nccl, 0);
    assert_int_equal(tsa_job_finish(job), 0);
    r = &job->ranks[0];
    assert_int_equal(r->kernels[0].start_ns, 1);
    assert_int_equal(r->kernels[2999].start_ns, 3000);
    tsa_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_keys_interleaved_streams),
        cmocka_unit_test(test_sort_records),
        cmocka_unit_test(test_corr_index),
        cmocka_unit_test(test_reserve_and_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
