/* Per-thread ring buffers and descriptor interning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dump_file.h"
#include "intern.h"
#include "ring.h"

static tsc_event ev(uint64_t v)
{
    tsc_event e;
    memset(&e, 0, sizeof e);
    e.kind = TSC_EV_NCCL;
    e.val = v;
    return e;
}

static void test_capacity_is_power_of_two(void **state)
{
    (void)state;
    tsc_ring r;
    assert_int_equal(tsc_ring_init(&r, 1024 * 1024), 0);
    assert_int_equal(tsc_ring_capacity(&r), 32768);
    tsc_ring_free(&r);
    assert_int_equal(tsc_ring_init(&r, 100000), 0); /* 3125 slots -> 2048 */
    assert_int_equal(tsc_ring_capacity(&r), 2048);
    tsc_ring_free(&r);
    assert_int_equal(tsc_ring_init(&r, 10), 0);     /* floor of 256 */
    assert_int_equal(tsc_ring_capacity(&r), 256);
    tsc_ring_free(&r);
}

static void test_fill_drop_and_wrap(void **state)
{
    (void)state;
    tsc_ring r;
    assert_int_equal(tsc_ring_init(&r, 256 * 32), 0);
    static tsc_event out[256];
    uint64_t next = 0, expect = 0;
    /* Many rounds of: fill to the brim, see the overflow dropped, drain
     * part of it; positions wrap the ring many times. */
    for (int round = 0; round < 50; round++) {
        while (1) {
            tsc_event *s = tsc_ring_reserve1(&r);
            if (!s)
                break;
            *s = ev(next++);
            tsc_ring_commit(&r, 1);
        }
        assert_int_equal(atomic_load(&r.dropped), (uint64_t)round + 1);
        size_t n = tsc_ring_peek(&r, out, 256);
        assert_int_equal(n, 256);
        size_t take = 100 + (size_t)round % 50;
        for (size_t i = 0; i < take; i++)
            assert_int_equal(out[i].val, expect + i);
        tsc_ring_consume(&r, take);
        expect += take;
    }
    /* Drain the rest: still in order. */
    size_t n = tsc_ring_peek(&r, out, 256);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(out[i].val, expect + i);
    assert_int_equal(expect + n, next);
    tsc_ring_free(&r);
}

static void test_multi_slot_push_wraps_and_refuses_whole(void **state)
{
    (void)state;
    tsc_ring r;
    assert_int_equal(tsc_ring_init(&r, 256 * 32), 0);
    static tsc_event in[10], out[256];
    for (int i = 0; i < 10; i++)
        in[i] = ev(1000 + (uint64_t)i);
    /* Move the positions near the end of the buffer. */
    for (int i = 0; i < 250; i++)
        assert_true(tsc_ring_push(&r, in, 1) > 0);
    tsc_ring_consume(&r, tsc_ring_peek(&r, out, 256));
    assert_int_equal(tsc_ring_push(&r, in, 10), 10); /* crosses the end */
    assert_int_equal(tsc_ring_peek(&r, out, 256), 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(out[i].val, 1000 + (uint64_t)i);
    /* 246 free: 24 pushes of 10 fit, the 25th does not, and nothing of it
     * is published (all or nothing). */
    for (int i = 0; i < 24; i++)
        assert_true(tsc_ring_push(&r, in, 10) > 0);
    uint64_t d0 = atomic_load(&r.dropped);
    assert_int_equal(tsc_ring_push(&r, in, 10), 0);
    assert_int_equal(atomic_load(&r.dropped), d0 + 1);
    assert_int_equal(tsc_ring_peek(&r, out, 256), 250);
    assert_int_equal(tsc_ring_push(&r, in, 300), 0); /* larger than the ring */
    tsc_ring_free(&r);
}

static void test_intern_find_insert(void **state)
{
    (void)state;
    static tsc_intern t;
    tsc_intern_reset(&t);
    uint64_t resets0 = t.resets;
    const char a[] = "allreduce-64", b[] = "allreduce-65";
    uint64_t ha = tsc_intern_hash(TSC_DESC_STRING, a, sizeof a);
    uint64_t hb = tsc_intern_hash(TSC_DESC_STRING, b, sizeof b);
    assert_true(ha != hb);
    /* The type is part of the key. */
    assert_true(ha != tsc_intern_hash(TSC_DESC_NCCL_CALL, a, sizeof a));
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_STRING, a, sizeof a, ha), 0);
    assert_int_equal(tsc_intern_insert(&t, TSC_DESC_STRING, a, sizeof a, ha, 7), 0);
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_STRING, a, sizeof a, ha), 7);
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_STRING, b, sizeof b, hb), 0);
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_NCCL_CALL, a, sizeof a, ha), 0);
    /* Same hash, different bytes: compared, not trusted. */
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_STRING, b, sizeof b, ha), 0);
    assert_int_equal(t.resets, resets0);
}

static void test_intern_resets_when_full(void **state)
{
    (void)state;
    static tsc_intern t;
    tsc_intern_reset(&t);
    uint64_t r0 = t.resets;
    uint64_t key[8] = {0};
    for (uint32_t i = 0; i < TSC_INTERN_MAX_USED; i++) {
        key[0] = i;
        uint64_t h = tsc_intern_hash(TSC_DESC_NCCL_CALL, key, 64);
        assert_int_equal(tsc_intern_insert(&t, TSC_DESC_NCCL_CALL, key, 64, h, i + 1), 0);
    }
    for (uint32_t i = 0; i < TSC_INTERN_MAX_USED; i++) {
        key[0] = i;
        uint64_t h = tsc_intern_hash(TSC_DESC_NCCL_CALL, key, 64);
        assert_int_equal(tsc_intern_find(&t, TSC_DESC_NCCL_CALL, key, 64, h), i + 1);
    }
    /* One more: the table is wiped, then holds only the newcomer. */
    key[0] = 99999;
    uint64_t h = tsc_intern_hash(TSC_DESC_NCCL_CALL, key, 64);
    assert_int_equal(tsc_intern_insert(&t, TSC_DESC_NCCL_CALL, key, 64, h, 5000), 1);
    assert_int_equal(t.resets, r0 + 1);
    assert_int_equal(t.used, 1);
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_NCCL_CALL, key, 64, h), 5000);
    key[0] = 3;
    h = tsc_intern_hash(TSC_DESC_NCCL_CALL, key, 64);
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_NCCL_CALL, key, 64, h), 0);
}

static void test_intern_resets_when_arena_full(void **state)
{
    (void)state;
    static tsc_intern t;
    static unsigned char big[4096];
    tsc_intern_reset(&t);
    uint64_t r0 = t.resets;
    /* 16 payloads of 4096 bytes fill the 64 KiB arena exactly. */
    for (int i = 0; i < 16; i++) {
        memset(big, i + 1, sizeof big);
        uint64_t h = tsc_intern_hash(TSC_DESC_STRING, big, sizeof big);
        assert_int_equal(tsc_intern_insert(&t, TSC_DESC_STRING, big, sizeof big, h,
                                           (uint32_t)i + 1), 0);
    }
    memset(big, 0x77, sizeof big);
    uint64_t h = tsc_intern_hash(TSC_DESC_STRING, big, sizeof big);
    assert_int_equal(tsc_intern_insert(&t, TSC_DESC_STRING, big, sizeof big, h, 100), 1);
    assert_int_equal(t.resets, r0 + 1);
    assert_int_equal(tsc_intern_find(&t, TSC_DESC_STRING, big, sizeof big, h), 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_is_power_of_two),
        cmocka_unit_test(test_fill_drop_and_wrap),
        cmocka_unit_test(test_multi_slot_push_wraps_and_refuses_whole),
        cmocka_unit_test(test_intern_find_insert),
        cmocka_unit_test(test_intern_resets_when_full),
        cmocka_unit_test(test_intern_resets_when_arena_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
