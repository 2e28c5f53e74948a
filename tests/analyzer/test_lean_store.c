/* The compact stores of a lean rank (analyzer/load/lean_calls.h,
 * lean_steps.h, seq_summary.h, rank_view.h): every value comes back exact,
 * garbage included (times at the int64 limits, seqs that wrap or go back,
 * kernels at the int32 limits, a new shape at every call); a rank read
 * through a view or an iterator reads the same whether it holds its calls
 * as an array or compact; the per-communicator summary is the one counted
 * from the array; and a packed store cut short or with flipped bytes is
 * refused or read as some valid store, never a crash (the buffers cross
 * process boundaries in tscope-report-mpi). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/lean_calls.h"
#include "load/lean_steps.h"
#include "load/pack_buf.h"
#include "load/rank_view.h"
#include "tsc_format.h"

#define N_CALLS 4000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Calls of a healthy rank (two communicators, steady seqs and times) with
 * damaged ones mixed in. */
static void make_calls(tsa_nccl_op *v, size_t n)
{
    uint64_t seq[2] = {0, 0};
    int64_t t = 1700000000000000000ll;
    for (size_t i = 0; i < n; i++) {
        tsa_nccl_op *o = &v[i];
        memset(o, 0, sizeof *o);
        int c = (int)(i % 3 == 2);
        o->comm_id = c ? 0x5eed0002 : 0x5eed0001;
        o->op = i % 7 == 6 ? TSC_NCCL_SEND : TSC_NCCL_ALLREDUCE;
        o->seq = seq[c]++;
        o->count = 1 << 20;
        o->bytes = 2 << 20;
        o->comm_rank = 3;
        o->comm_size = 8;
        o->tid = 42;
        o->peer = -1;
        o->stream = 7;
        t += 5000000 + (int64_t)(next_u64() % 1000);
        o->start_ns = t;
        o->end_ns = t + 2000;
        o->gpu_start_ns = t + 3000;
        o->gpu_end_ns = t + 22000000;
        o->kernel = (int32_t)(5 * i);
        switch (i % 97) {   /* damage */
        case 11: o->start_ns = INT64_MIN; o->end_ns = INT64_MAX; break;
        case 23: o->seq = UINT64_MAX; break;                       /* wraps */
        case 31: o->seq = 3; break;                                /* goes back */
        case 47: o->kernel = INT32_MIN; o->gpu_start_ns = INT64_MAX; break;
        case 59: o->kernel = INT32_MAX; o->gpu_end_ns = INT64_MIN; break;
        case 61: o->bytes = next_u64(); o->comm_id = next_u64(); break; /* new shapes */
        case 71: o->comm_id = 0; break;
        }
        if (i % 13 == 5) {      /* unlinked */
            o->kernel = -1;
            o->gpu_start_ns = o->start_ns;
            o->gpu_end_ns = o->end_ns;
        }
    }
}

static void assert_same_call(const tsa_nccl_op *a, const tsa_nccl_op *b)
{
    assert_true(a->start_ns == b->start_ns && a->end_ns == b->end_ns);
    assert_true(a->gpu_start_ns == b->gpu_start_ns && a->gpu_end_ns == b->gpu_end_ns);
    assert_true(a->seq == b->seq && a->comm_id == b->comm_id);
    assert_true(a->count == b->count && a->bytes == b->bytes && a->stream == b->stream);
    assert_true(a->comm_rank == b->comm_rank && a->comm_size == b->comm_size);
    assert_true(a->tid == b->tid && a->peer == b->peer && a->kernel == b->kernel);
    assert_true(a->op == b->op && a->dtype == b->dtype && a->redop == b->redop);
    assert_true(a->result == b->result && a->group_depth == b->group_depth);
    assert_true(a->flags == b->flags);
}

static void assert_same_summary(const tsa_seq_summary *a, const tsa_seq_summary *b)
{
    assert_int_equal(a->n_comms, b->n_comms);
    for (size_t i = 0; i < a->n_comms; i++) {
        const tsa_comm_seqs *x = &a->comms[i], *y = &b->comms[i];
        assert_true(x->comm_id == y->comm_id && x->first_seq == y->first_seq &&
                    x->last_seq == y->last_seq && x->top == y->top && x->calls == y->calls &&
                    x->ordered == y->ordered);
    }
    assert_int_equal(a->has_last, b->has_last);
    if (a->has_last)
        assert_same_call(&a->last, &b->last);
}

/* The calls of make_calls, room for them decoded, and their store. */
static tsa_lean_calls *calls_and_store(tsa_nccl_op **v, tsa_nccl_op **back)
{
    *v = malloc(N_CALLS * sizeof **v);
    *back = malloc(N_CALLS * sizeof **back);
    assert_non_null(*v);
    assert_non_null(*back);
    make_calls(*v, N_CALLS);
    tsa_lean_calls *lc = tsa_lean_calls_encode(*v, N_CALLS);
    assert_non_null(lc);
    return lc;
}

static void test_calls_round_trip(void **state)
{
    (void)state;
    tsa_nccl_op *v, *back;
    tsa_lean_calls *lc = calls_and_store(&v, &back);
    assert_int_equal(lc->n, N_CALLS);
    assert_true(lc->data.len < N_CALLS * sizeof *v / 3);   /* compact */
    assert_int_equal(tsa_lean_calls_decode(lc, back), 0);
    for (size_t i = 0; i < N_CALLS; i++)
        assert_same_call(&v[i], &back[i]);

    /* The same rank held both ways reads the same through views,
     * iterators, shapes and summaries. */
    tsa_rank arr = {.nccl = v, .n_nccl = N_CALLS}, lean = {.n_nccl = N_CALLS, .lean_calls = lc};
    tsa_rank_view va, vl;
    const tsa_rank *ra = tsa_view_open(&arr, TSA_VIEW_CALLS, &va);
    const tsa_rank *rl = tsa_view_open(&lean, TSA_VIEW_CALLS, &vl);
    assert_ptr_equal(ra, &arr);
    assert_non_null(rl);
    for (size_t i = 0; i < N_CALLS; i++)
        assert_same_call(&ra->nccl[i], &rl->nccl[i]);
    tsa_view_close(&va);
    tsa_view_close(&vl);
    tsa_call_iter ia, il;
    assert_int_equal(tsa_call_iter_open(&ia, &arr), 0);
    assert_int_equal(tsa_call_iter_open(&il, &lean), 0);
    size_t n = 0;
    for (const tsa_nccl_op *a, *l; (a = tsa_call_iter_next(&ia));) {
        assert_non_null(l = tsa_call_iter_next(&il));
        assert_same_call(a, l);
        n++;
    }
    assert_null(tsa_call_iter_next(&il));
    assert_int_equal(n, N_CALLS);
    tsa_call_iter_close(&ia);
    tsa_call_iter_close(&il);
    tsa_seq_summary ta, tl;
    const tsa_seq_summary *sa = tsa_rank_seqs(&arr, &ta), *sl = tsa_rank_seqs(&lean, &tl);
    assert_non_null(sa);
    assert_non_null(sl);
    assert_same_summary(sa, sl);
    assert_int_equal(sa->n_comms, 2 + N_CALLS / 97 + 1);  /* the damaged ids, comm 0 */
    assert_false(tsa_seq_summary_comm(sa, 0x5eed0001)->ordered);  /* seq 3 went back */
    tsa_seq_summary_free(&ta);
    tsa_seq_summary_free(&tl);
    assert_int_equal(tsa_rank_calls_all_linked(&arr), tsa_rank_calls_all_linked(&lean));
    size_t ns;
    const tsa_nccl_op *shape = tsa_rank_call_shapes(&lean, &ns);
    assert_int_equal(ns, lc->n_shapes);
    for (size_t k = 0; k < ns; k++)
        assert_int_equal(shape[k].seq, 0);  /* per-call values are not in a shape */
    tsa_lean_calls_free(lc);
    free(v);
    free(back);
}

static void test_steps_round_trip(void **state)
{
    (void)state;
    enum { N = 500 };
    tsa_step *s = calloc(N, sizeof *s), *back = calloc(N, sizeof *back);
    assert_non_null(s);
    assert_non_null(back);
    int64_t t = 1700000000000000000ll;
    for (size_t i = 0; i < N; i++) {
        s[i].start_ns = t;
        t += 100000000 + (int64_t)(next_u64() % 100000);
        s[i].end_ns = t;
        s[i].compute_ns = 70000000;
        s[i].comm_ns = (int64_t)(next_u64() % 30000000);
        for (int p = 0; p < TSA_PHASE_COUNT; p++)
            s[i].phase_ns[p] = (int64_t)(next_u64() % 50000000);
        s[i].first_nccl = 4 * i;
        s[i].n_nccl = 4;
        s[i].warmup = i < 2;
        if (i % 50 == 7) {      /* damage */
            s[i].start_ns = INT64_MAX;
            s[i].end_ns = INT64_MIN;
            s[i].phase_ns[3] = INT64_MIN;
            s[i].first_nccl = SIZE_MAX;
            s[i].n_nccl = SIZE_MAX / 2;
            s[i].warmup = -5;
        }
    }
    tsa_lean_steps *ls = tsa_lean_steps_encode(s, N);
    assert_non_null(ls);
    assert_true(ls->data.len < N * sizeof *s / 2);
    assert_int_equal(tsa_lean_steps_decode(ls, back), 0);
    assert_memory_equal(s, back, N * sizeof *s);
    /* A rank's steps kept compact read back the same through a view, and
     * a change made through it (the warm-up flags) is kept. */
    tsa_rank r = {.steps = malloc(N * sizeof *s), .n_steps = N};
    assert_non_null(r.steps);
    memcpy(r.steps, s, N * sizeof *s);
    assert_int_equal(tsa_rank_make_lean(&r), 0);
    assert_null(r.steps);
    tsa_rank_view v;
    tsa_rank *rv = tsa_view_open_mut(&r, TSA_VIEW_STEPS, &v);
    assert_non_null(rv);
    assert_memory_equal(rv->steps, s, N * sizeof *s);
    rv->steps[9].warmup = 1;
    assert_int_equal(tsa_view_store_steps(&r, &v), 0);
    tsa_view_close(&v);
    s[9].warmup = 1;
    assert_int_equal(tsa_lean_steps_decode(r.lean_steps, back), 0);
    assert_memory_equal(s, back, N * sizeof *s);
    tsa_lean_steps_free(r.lean_steps);
    tsa_lean_calls_free(r.lean_calls);
    tsa_lean_steps_free(ls);
    free(s);
    free(back);
}

/* Packed and read back; then every cut is refused and flipped bytes are
 * refused or read as a valid store. */
static void test_packed_store(void **state)
{
    (void)state;
    tsa_nccl_op *v, *back;
    tsa_lean_calls *lc = calls_and_store(&v, &back);
    tsa_pack_buf b = {0};
    assert_int_equal(tsa_lean_calls_put(&b, lc), 0);
    for (int own = 0; own < 2; own++) {
        tsa_cursor c = {.p = b.data, .left = b.len};
        tsa_lean_calls *got = tsa_lean_calls_get(&c, own);
        assert_non_null(got);
        assert_int_equal(c.left, 0);
        assert_int_equal(tsa_lean_calls_decode(got, back), 0);
        for (size_t i = 0; i < N_CALLS; i++)
            assert_same_call(&v[i], &back[i]);
        assert_same_summary(&lc->seqs, &got->seqs);
        tsa_lean_calls_free(got);
    }
    for (size_t len = 0; len < b.len; len += 1 + len / 8) {
        tsa_cursor c = {.p = b.data, .left = len};
        assert_null(tsa_lean_calls_get(&c, 0));
    }
    unsigned char *bad = malloc(b.len);
    assert_non_null(bad);
    for (int round = 0; round < 400; round++) {
        memcpy(bad, b.data, b.len);
        for (int k = 0; k < 1 + round % 4; k++)
            bad[next_u64() % b.len] ^= (unsigned char)(1 + next_u64() % 255);
        tsa_cursor c = {.p = bad, .left = b.len};
        tsa_lean_calls *got = tsa_lean_calls_get(&c, 0);
        if (got) {  /* whatever it reads, it reads within bounds */
            tsa_nccl_op *any = malloc((got->n ? got->n : 1) * sizeof *any);
            assert_non_null(any);
            assert_int_equal(tsa_lean_calls_decode(got, any), 0);
            free(any);
        }
        tsa_lean_calls_free(got);
    }
    free(bad);
    tsa_pack_buf_free(&b);
    tsa_lean_calls_free(lc);
    free(v);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_round_trip),
        cmocka_unit_test(test_steps_round_trip),
        cmocka_unit_test(test_packed_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
