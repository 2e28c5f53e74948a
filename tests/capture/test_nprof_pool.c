/* The NCCL profiler plugin's handle pools (preload/nprof/nprof_pool.c): an open
 * handle is never handed out twice, a handle whose slot was taken again is
 * stale for its owner's stop and for children reading it, a full pool
 * drops and counts, garbage handles are refused without a read, and two
 * threads taking and giving back the same four slots never share one. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nprof_pool.h"

typedef struct { uint64_t a, b; } slot_t;

static void init_pools(void)
{
    const uint32_t count[NP_KINDS] = {0, 4, 0, 8, 4};
    const size_t size[NP_KINDS] = {0, sizeof(slot_t), sizeof(slot_t), sizeof(slot_t),
                                   sizeof(slot_t)};
    assert_int_equal(np_pools_init(count, size), 0);
    assert_int_equal(np_pool_of(NP_COLL)->n, 4);
    assert_int_equal(np_pool_of(NP_OP)->n, 0);
}

/* Four open collectives fill the pool: the fifth is dropped and counted;
 * an empty pool (ops here) drops every take. */
static void test_full_pool_drops(void **state)
{
    (void)state;
    init_pools();
    uint64_t lost0 = np_lost();
    void *h[5], *slot;
    for (int i = 0; i < 4; i++) {
        h[i] = np_take(NP_COLL, &slot);
        assert_non_null(h[i]);
        assert_int_equal(np_kind_of(h[i]), NP_COLL);
    }
    assert_null(np_take(NP_COLL, &slot));
    assert_int_equal(np_lost(), lost0 + 1);
    assert_null(np_take(NP_OP, &slot));
    assert_int_equal(np_lost(), lost0 + 2);
    for (int i = 0; i < 4; i++) {
        assert_non_null(np_owned(NP_COLL, h[i]));
        np_release(NP_COLL, h[i]);
    }
}

/* A stopped collective stays readable by its children until its slot is
 * taken again; then its handle is stale for everyone. */
static void test_generations(void **state)
{
    (void)state;
    init_pools();
    void *slot;
    void *h = np_take(NP_COLL, &slot);
    assert_non_null(h);
    np_set_ident(NP_COLL, h, 1234);
    np_release(NP_COLL, h);
    uint64_t id = 0, lost0 = np_lost();
    assert_int_equal(np_read_ident(NP_COLL, h, &id), 1);
    assert_int_equal(id, 1234);
    /* a stop after the stop: not its owner's any more */
    assert_null(np_owned(NP_COLL, h));
    assert_int_equal(np_lost(), lost0 + 1);
    /* go round the pool: its slot is taken again */
    void *again[4];
    for (int i = 0; i < 4; i++) {
        again[i] = np_take(NP_COLL, &slot);
        assert_non_null(again[i]);
        assert_ptr_not_equal(again[i], h);
        np_set_ident(NP_COLL, again[i], 99);
    }
    assert_int_equal(np_read_ident(NP_COLL, h, &id), 0);
    assert_int_equal(np_lost(), lost0 + 2);
    for (int i = 0; i < 4; i++)
        np_release(NP_COLL, again[i]);
    /* no parent is not a loss */
    assert_int_equal(np_read_ident(NP_COLL, NULL, &id), 0);
    assert_null(np_owned(NP_COLL, NULL));
    assert_int_equal(np_lost(), lost0 + 2);
}

/* Another process's handle (PXN), a pointer, a wrong kind, a slot beyond
 * the pool: refused. */
static void test_garbage_handles(void **state)
{
    (void)state;
    init_pools();
    void *bad[] = {(void *)(uintptr_t)0x10, (void *)(uintptr_t)0xdeadbeef000ull,
                   (void *)(uintptr_t)(NP_COLL | 9u << 8 | 1ull << 32),
                   (void *)(uintptr_t)(NP_COLL | 0x40u), (void *)&bad};
    uint64_t id;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(np_owned(NP_COLL, bad[i]));
        assert_int_equal(np_read_ident(NP_COLL, bad[i], &id), 0);
        np_release(NP_COLL, bad[i]);
    }
    void *slot, *h = np_take(NP_COLL, &slot);
    assert_null(np_owned(NP_STEP, h)); /* the right slot, the wrong kind */
    np_release(NP_COLL, h);
}

/* Two threads, four slots: whatever a thread holds is its own. */
typedef struct { uint64_t tag; long clashes, takes; } worker;

static void *churn(void *arg)
{
    worker *w = arg;
    for (long i = 0; i < 200000; i++) {
        slot_t *s;
        void *h = np_take(NP_SPAN, (void **)&s);
        if (!h)
            continue;
        w->takes++;
        s->a = w->tag;
        np_set_ident(NP_SPAN, h, w->tag);
        uint64_t id = 0;
        if (np_owned(NP_SPAN, h) != s || !np_read_ident(NP_SPAN, h, &id) || id != w->tag ||
            s->a != w->tag)
            w->clashes++;
        np_release(NP_SPAN, h);
    }
    return NULL;
}

static void test_two_threads_never_share(void **state)
{
    (void)state;
    init_pools();
    worker w[2] = {{.tag = 0x1111}, {.tag = 0x2222}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, churn, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(w[i].clashes, 0);
        assert_true(w[i].takes > 1000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_pool_drops),
        cmocka_unit_test(test_generations),
        cmocka_unit_test(test_garbage_handles),
        cmocka_unit_test(test_two_threads_never_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
