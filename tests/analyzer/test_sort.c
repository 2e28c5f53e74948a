/* Sorting the model: the radix and run-merge sorts against qsort, and
 * tsa_job_finish keeping the kernel <-> NCCL <-> GEMM links right while it
 * reorders records (nearly sorted, chunk-interleaved and random inputs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "load/job_build.h"
#include "util/radix_sort.h"
#include "tsc_format.h"
#include "sort_check.h"


static void check_sort(int (*sorter)(tsa_sort_key *, size_t), int shape, size_t n)
{
    tsa_sort_key *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        switch (shape) {
        case 0: a[i].key = (int64_t)(next() % 1000) - 500; break;          /* random, dups, negative */
        case 1: a[i].key = INT64_C(1763700000000000000) + (int64_t)((i % 7) * 1000 + i); break; /* 7 runs */
        default: a[i].key = (int64_t)i * 10 + (int64_t)(next() % 25); break; /* nearly sorted */
        }
        a[i].idx = i;
    }
    memcpy(b, a, n * sizeof *a);
    qsort(b, n, sizeof *b, by_key_then_idx); /* stable by construction of idx */
    assert_int_equal(sorter(a, n), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].key, b[i].key);
        assert_int_equal(a[i].idx, b[i].idx); /* stability */
    }
    free(a);
    free(b);
}

static void test_sorts_match_qsort(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 2, 3, 17, 1000, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int shape = 0; shape < 3; shape++) {
            check_sort(tsa_radix_sort, shape, sizes[s]);
            check_sort(tsa_sort_keys, shape, sizes[s]);
        }
}

/* Kernels with start = 10*i shuffled by `shape`; kernel i is linked to NCCL
 * call i/2 (even i) or GEMM i/2 (odd i), and the calls back to it. */
static void check_finish(int shape, size_t n)
{
    tsa_job *job = tsa_job_new("mem");
    tsa_rank *r = tsa_job_add_rank(job);
    size_t *order = malloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (shape == 0) {
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = next() % (i + 1);
            size_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    } else if (shape == 1) {
        for (size_t i = 0; i + 1 < n; i += 5) {
            size_t t = order[i];
            order[i] = order[i + 1];
            order[i + 1] = t;
        }
    } else { /* two interleaved "threads": all even then all odd */
        size_t k = 0;
        for (size_t i = 0; i < n; i += 2)
            order[k++] = i;
        for (size_t i = 1; i < n; i += 2)
            order[k++] = i;
    }
    /* Calls are added in reverse time order so that they move too. */
    for (size_t c = 0; c < n / 2; c++) {
        size_t i = n / 2 - 1 - c;
        tsa_nccl_op op;
        memset(&op, 0, sizeof op);
        op.start_ns = op.gpu_start_ns = (int64_t)(20 * i);
        op.end_ns = op.gpu_end_ns = (int64_t)(20 * i + 1);
        op.op = TSC_NCCL_ALLREDUCE;
        op.seq = i;
        op.kernel = TSA_NONE;
        assert_int_equal(tsa_rank_add_nccl(r, &op), 0);
        tsa_gemm g;
        memset(&g, 0, sizeof g);
        g.start_ns = (int64_t)(20 * i + 5);
        g.m = i;
        g.kernel = TSA_NONE;
        assert_int_equal(tsa_rank_add_gemm(r, &g), 0);
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        tsa_kernel kk;
        memset(&kk, 0, sizeof kk);
        kk.start_ns = (int64_t)(10 * i);
        kk.end_ns = kk.start_ns + 5;
        kk.correlation = (uint32_t)i;
        kk.nccl = kk.gemm = TSA_NONE;
        size_t call_pos = n / 2 - 1 - i / 2; /* added in reverse */
        if (i % 2 == 0 && i / 2 < n / 2) {
            kk.nccl = (int32_t)call_pos;
            r->nccl[call_pos].kernel = (int32_t)k;
        } else if (i % 2 == 1 && i / 2 < n / 2) {
            kk.gemm = (int32_t)call_pos;
            r->gemms[call_pos].kernel = (int32_t)k;
        }
        assert_int_equal(tsa_rank_add_kernel(r, &kk), 0);
    }
    assert_int_equal(tsa_job_finish(job), 0);
    for (size_t i = 0; i < n; i++) {
        const tsa_kernel *k = &r->kernels[i];
        assert_int_equal(k->start_ns, (int64_t)(10 * i));
        assert_int_equal(k->correlation, i);
        if (k->nccl >= 0) {
            assert_int_equal(r->nccl[k->nccl].seq, i / 2);
            assert_int_equal(r->nccl[k->nccl].kernel, (int32_t)i);
            assert_int_equal(k->category, TSA_KCAT_COMM);
        }
        if (k->gemm >= 0) {
            assert_int_equal(r->gemms[k->gemm].m, i / 2);
            assert_int_equal(r->gemms[k->gemm].kernel, (int32_t)i);
        }
    }
    for (size_t c = 0; c + 1 < r->n_nccl; c++)
        assert_true(r->nccl[c].start_ns <= r->nccl[c + 1].start_ns);
    free(order);
    tsa_job_free(job);
}

static void test_finish_keeps_links(void **state)
{
    (void)state;
    for (int shape = 0; shape < 3; shape++) {
        check_finish(shape, 10);
        check_finish(shape, 20000);
    }
}

int main(void)
{
    rng = 0x1234567ull; /* this test's sequence, as before */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorts_match_qsort),
        cmocka_unit_test(test_finish_keeps_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
