/* Interval sets against a brute-force bitmap over a small universe: every
 * operation on many random sets, plus the edge cases (empty, adjacent,
 * nested, identical, touching at one point). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/interval_set.h"

#define U 48 /* universe [0, U) */

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void random_set(tsa_ivset *s, char *bits)
{
    memset(bits, 0, U);
    tsa_ivset_clear(s);
    int n = (int)(next() % 6);
    for (int i = 0; i < n; i++) {
        int a = (int)(next() % U), b = (int)(next() % (U + 1));
        assert_int_equal(tsa_ivset_push(s, a, b), 0); /* b <= a: ignored */
        for (int x = a; x < b; x++)
            bits[x] = 1;
    }
    tsa_ivset_normalize(s);
}

static void to_bits(const tsa_ivset *s, char *bits)
{
    memset(bits, 0, U);
    for (size_t i = 0; i < s->n; i++)
        for (int64_t x = s->v[i].s; x < s->v[i].e; x++)
            bits[x] = 1;
}

static int64_t count(const char *bits)
{
    int64_t n = 0;
    for (int i = 0; i < U; i++)
        n += bits[i];
    return n;
}

/* Normalised: sorted, non-empty, neither overlapping nor touching. */
static void assert_normal(const tsa_ivset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        assert_true(s->v[i].s < s->v[i].e);
        if (i)
            assert_true(s->v[i - 1].e < s->v[i].s);
    }
}

static void test_random_against_bitmap(void **state)
{
    (void)state;
    tsa_ivset a, b, out;
    tsa_ivset_init(&a);
    tsa_ivset_init(&b);
    tsa_ivset_init(&out);
    char ba[U], bb[U], bo[U], expect[U];
    for (int iter = 0; iter < 20000; iter++) {
        random_set(&a, ba);
        random_set(&b, bb);
        assert_normal(&a);
        to_bits(&a, bo);
        assert_memory_equal(bo, ba, U);
        assert_int_equal(tsa_ivset_length(&a), count(ba));

        assert_int_equal(tsa_ivset_union(&a, &b, &out), 0);
        assert_normal(&out);
        for (int x = 0; x < U; x++)
            expect[x] = ba[x] | bb[x];
        to_bits(&out, bo);
        assert_memory_equal(bo, expect, U);

        assert_int_equal(tsa_ivset_intersect(&a, &b, &out), 0);
        assert_normal(&out);
        for (int x = 0; x < U; x++)
            expect[x] = ba[x] & bb[x];
        to_bits(&out, bo);
        assert_memory_equal(bo, expect, U);
        assert_int_equal(tsa_ivset_intersect_length(&a, &b), count(expect));

        assert_int_equal(tsa_ivset_subtract(&a, &b, &out), 0);
        assert_normal(&out);
        for (int x = 0; x < U; x++)
            expect[x] = ba[x] & !bb[x];
        to_bits(&out, bo);
        assert_memory_equal(bo, expect, U);

        int s = (int)(next() % U), e = (int)(next() % (U + 1));
        int64_t in = 0;
        for (int x = s; x < e; x++)
            in += ba[x];
        assert_int_equal(tsa_ivset_length_in(&a, s, e), in);

        int64_t next_start = INT64_MAX; /* first x >= s in a */
        for (int x = U - 1; x >= s; x--)
            if (ba[x])
                next_start = x;
        assert_int_equal(tsa_ivset_next_start(&a, s), next_start);

        assert_int_equal(tsa_ivset_copy(&a, &out), 0);
        tsa_ivset_clip(&out, s, e);
        assert_normal(&out);
        assert_int_equal(tsa_ivset_length(&out), in);
    }
    tsa_ivset_free(&a);
    tsa_ivset_free(&b);
    tsa_ivset_free(&out);
}

static void test_edges(void **state)
{
    (void)state;
    tsa_ivset a, b, out;
    tsa_ivset_init(&a);
    tsa_ivset_init(&b);
    tsa_ivset_init(&out);
    /* Adjacent intervals merge; empty and reversed ones vanish. */
    tsa_ivset_push(&a, 10, 20);
    tsa_ivset_push(&a, 20, 30);
    tsa_ivset_push(&a, 5, 5);
    tsa_ivset_push(&a, 40, 35);
    tsa_ivset_normalize(&a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].s, 10);
    assert_int_equal(a.v[0].e, 30);
    /* Empty operands. */
    assert_int_equal(tsa_ivset_union(&a, &b, &out), 0);
    assert_int_equal(tsa_ivset_length(&out), 20);
    assert_int_equal(tsa_ivset_intersect(&a, &b, &out), 0);
    assert_int_equal(out.n, 0);
    assert_int_equal(tsa_ivset_subtract(&b, &a, &out), 0);
    assert_int_equal(out.n, 0);
    /* Subtracting itself leaves nothing; a nested hole splits. */
    assert_int_equal(tsa_ivset_subtract(&a, &a, &out), 0);
    assert_int_equal(out.n, 0);
    tsa_ivset_push(&b, 15, 17);
    tsa_ivset_normalize(&b);
    assert_int_equal(tsa_ivset_subtract(&a, &b, &out), 0);
    assert_int_equal(out.n, 2);
    assert_int_equal(tsa_ivset_length(&out), 18);
    /* Large nanosecond values do not overflow the arithmetic. */
    tsa_ivset_clear(&a);
    tsa_ivset_push(&a, INT64_C(1763700000000000000), INT64_C(1763700001000000000));
    tsa_ivset_normalize(&a);
    assert_int_equal(tsa_ivset_length(&a), 1000000000);
    tsa_ivset_free(&a);
    tsa_ivset_free(&b);
    tsa_ivset_free(&out);
}

/* Large sets in each order the normalisation meets (already sorted, a few
 * places late, several long sorted runs as one per stream, no order at
 * all), each against a bitmap of a wider universe: the sort behind it takes
 * a different way for each. */
enum { BIG_U = 1 << 16, BIG_N = 20000 };

static void big_case(int order)
{
    static char want[BIG_U], got[BIG_U];
    memset(want, 0, sizeof want);
    tsa_ivset s;
    tsa_ivset_init(&s);
    int runs = 1 + order * 3; /* interleaved sorted streams for order 2 */
    for (int i = 0; i < BIG_N; i++) {
        int64_t a;
        if (order == 0 || order == 2)
            a = (int64_t)((i % runs) * (BIG_U / runs) + (i / runs) * (BIG_U / runs) / (BIG_N / runs));
        else if (order == 1)
            a = (int64_t)(i * 3) - (int64_t)(i % 7 == 0 ? next() % 40 : 0);
        else
            a = (int64_t)(next() % (BIG_U - 64));
        if (a < 0)
            a = 0;
        int64_t b = a + 1 + (int64_t)(next() % 6);
        if (b > BIG_U)
            b = BIG_U;
        assert_int_equal(tsa_ivset_push(&s, a, b), 0);
        for (int64_t x = a; x < b; x++)
            want[x] = 1;
    }
    tsa_ivset_normalize(&s);
    assert_normal(&s);
    memset(got, 0, sizeof got);
    int64_t len = 0;
    for (size_t i = 0; i < s.n; i++) {
        assert_true(s.v[i].s >= 0 && s.v[i].e <= BIG_U);
        for (int64_t x = s.v[i].s; x < s.v[i].e; x++)
            got[x] = 1;
        len += s.v[i].e - s.v[i].s;
    }
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(tsa_ivset_length(&s), len);
    tsa_ivset_free(&s);
}

static void test_large_sets_in_every_order(void **state)
{
    (void)state;
    for (int order = 0; order < 4; order++)
        big_case(order);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_bitmap),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_large_sets_in_every_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
