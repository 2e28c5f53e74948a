/* Per-thread ring buffers and descriptor interning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* The writer's zero-copy view: the published slots in place while they
 * lie in one piece, nothing once they wrap (then peek copies them). */
static void test_peek_span_in_place_until_wrap(void **state)
{
    (void)state;
    tsc_ring r;
    assert_int_equal(tsc_ring_init(&r, 256 * 32), 0);
    const tsc_event *first = (const tsc_event *)1;
    assert_int_equal(tsc_ring_peek_span(&r, &first), 0); /* empty */
    assert_null(first);
    static tsc_event in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = ev((uint64_t)i);
    uint64_t next = 0;
    for (int round = 0; round < 20; round++) {
        size_t n = 50 + (size_t)round * 7; /* wraps every few rounds */
        for (size_t i = 0; i < n; i++)
            in[i] = ev(next + i);
        assert_true(tsc_ring_push(&r, in, n) != 0);
        uint64_t tail = atomic_load(&r.tail);
        int wraps = (tail & r.mask) + n > tsc_ring_capacity(&r);
        size_t k = tsc_ring_peek_span(&r, &first);
        if (wraps) {
            assert_int_equal(k, 0);
            assert_null(first);
            k = tsc_ring_peek(&r, out, 256);
            first = out;
        } else {
            assert_ptr_equal(first, &r.slots[tail & r.mask]);
        }
        assert_int_equal(k, n);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(first[i].val, next + i);
        tsc_ring_consume(&r, k);
        next += n;
    }
    tsc_ring_free(&r);
}

/* Every byte counts in the comparison, whatever the length (the 64-byte
 * NCCL signature has its own path). */
static void test_intern_same_bytes(void **state)
{
    (void)state;
    static const uint16_t lens[] = {0, 1, 7, 8, 9, 63, 64, 65, 200};
    unsigned char a[256], b[256];
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        uint16_t len = lens[k];
        for (int i = 0; i < 256; i++)
            a[i] = b[i] = (unsigned char)(i * 37 + 11);
        assert_true(tsc_intern_same_bytes(a, b, len));
        for (uint16_t i = 0; i < len; i++) {
            b[i] ^= 0x40;
            assert_false(tsc_intern_same_bytes(a, b, len));
            b[i] ^= 0x40;
        }
        b[len] ^= 1; /* past the end: not compared */
        assert_true(tsc_intern_same_bytes(a, b, len));
    }
}

/* A signature in a test pool: 64-byte NCCL-like payloads differing in the
 * count (second word), or short strings. */
static uint16_t pool_payload(uint32_t i, unsigned char *out, uint8_t *type)
{
    if (i % 5 == 4) {
        *type = TSC_DESC_STRING;
        int n = snprintf((char *)out, 32, "s%u", i);
        return (uint16_t)n;
    }
    tsc_desc_nccl_call d;
    memset(&d, 0, sizeof d);
    d.op = 1;
    d.count = 1024u + i;
    d.bytes = 2048u + 2u * i;
    d.comm_id = 42;
    memcpy(out, &d, sizeof d);
    *type = TSC_DESC_NCCL_CALL;
    return (uint16_t)sizeof d;
}

/* The recorder's use of the table (lookup, insert on a miss) under call
 * patterns that exercise the predicted next entry: one signature
 * repeated, cycles shorter and longer than the recent set, random draws
 * from small and large pools (the large one wipes the table).  Lookup must always give the id the table
 * holds, and 0 for what a wipe forgot. */
static void test_intern_lookup_agrees_with_table(void **state)
{
    (void)state;
    static tsc_intern t;
    enum { POOL = 2000 };
    static uint32_t expect[POOL];
    struct { uint32_t pool; int random; } pats[] = {
        {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {TSC_INTERN_RECENT, 0},
        {TSC_INTERN_RECENT + 1, 0}, {40, 0}, {3, 1}, {9, 1}, {30, 1}, {POOL, 1},
    };
    uint32_t next_id = 1, rng = 12345;
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
        tsc_intern_reset(&t);
        memset(expect, 0, sizeof expect);
        uint64_t wipes = 0, hits = 0;
        for (uint32_t step = 0; step < 20000; step++) {
            uint32_t i;
            if (pats[p].random) {
                rng = rng * 1103515245u + 12345u;
                i = (rng >> 8) % pats[p].pool;
            } else {
                i = step % pats[p].pool;
            }
            unsigned char buf[64];
            uint8_t type;
            uint16_t len = pool_payload(i, buf, &type);
            uint64_t h = 0;
            uint32_t id = tsc_intern_lookup(&t, type, buf, len, &h);
            assert_int_equal(id, expect[i]);
            assert_int_equal(id, tsc_intern_find(&t, type, buf, len,
                                                 tsc_intern_hash(type, buf, len)));
            if (id) {
                hits++;
                continue;
            }
            assert_true(h == tsc_intern_hash(type, buf, len));
            int wiped = tsc_intern_insert(&t, type, buf, len, h, next_id);
            assert_true(wiped >= 0);
            if (wiped) {
                memset(expect, 0, sizeof expect);
                wipes++;
            }
            expect[i] = next_id++;
        }
        if (pats[p].pool == POOL)
            assert_true(wipes > 0);
        else
            assert_int_equal(hits, 20000 - pats[p].pool);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_is_power_of_two),
        cmocka_unit_test(test_fill_drop_and_wrap),
        cmocka_unit_test(test_multi_slot_push_wraps_and_refuses_whole),
        cmocka_unit_test(test_peek_span_in_place_until_wrap),
        cmocka_unit_test(test_intern_find_insert),
        cmocka_unit_test(test_intern_resets_when_full),
        cmocka_unit_test(test_intern_resets_when_arena_full),
        cmocka_unit_test(test_intern_same_bytes),
        cmocka_unit_test(test_intern_lookup_agrees_with_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
