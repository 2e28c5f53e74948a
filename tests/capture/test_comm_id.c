/* Communicator identities and the communicator registry. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm_id.h"
#include "comm_registry.h"

typedef struct { char internal[128]; } uid;

static void test_same_unique_id_same_comm_on_every_rank(void **state)
{
    (void)state;
    uid a, b;
    memset(&a, 0, sizeof a);
    memcpy(a.internal, "some-random-bytes-1", 19);
    b = a; /* what every rank receives from rank 0 */
    uint64_t ida = tsc_comm_id_from_unique_ids(&a, 1, sizeof a);
    assert_true(ida != 0);
    assert_true(ida == tsc_comm_id_from_unique_ids(&b, 1, sizeof b));
    b.internal[127] ^= 1;
    assert_true(ida != tsc_comm_id_from_unique_ids(&b, 1, sizeof b));
    /* A stable value: the id must not depend on the process or build. */
    uid z;
    memset(&z, 0, sizeof z);
    uint64_t z1 = tsc_comm_id_from_unique_ids(&z, 1, sizeof z);
    assert_true(z1 == tsc_comm_id_from_unique_ids(&z, 1, sizeof z));
}

static void test_scalable_uses_all_ids(void **state)
{
    (void)state;
    uid ids[3];
    memset(ids, 0, sizeof ids);
    for (int i = 0; i < 3; i++)
        ids[i].internal[0] = (char)('a' + i);
    uint64_t all = tsc_comm_id_from_unique_ids(ids, 3, sizeof ids[0]);
    assert_true(all != tsc_comm_id_from_unique_ids(ids, 2, sizeof ids[0]));
    assert_true(all != tsc_comm_id_from_unique_ids(ids, 1, sizeof ids[0]));
    ids[2].internal[5] = 1;
    assert_true(all != tsc_comm_id_from_unique_ids(ids, 3, sizeof ids[0]));
}

static void test_split_ids(void **state)
{
    (void)state;
    uint64_t parent = 0x1234567890abcdefull;
    /* Four "ranks" split with colors rank % 2: the two of each color agree,
     * the two colors differ. */
    uint64_t by_rank[4];
    for (int r = 0; r < 4; r++)
        by_rank[r] = tsc_comm_id_split(parent, 0, r % 2);
    assert_true(by_rank[0] == by_rank[2]);
    assert_true(by_rank[1] == by_rank[3]);
    assert_true(by_rank[0] != by_rank[1]);
    /* The second split of the same parent with the same color is another
     * communicator; so is a split of another parent. */
    assert_true(tsc_comm_id_split(parent, 1, 0) != by_rank[0]);
    assert_true(tsc_comm_id_split(parent + 1, 0, 0) != by_rank[0]);
    assert_true(tsc_comm_id_split(parent, 0, -2) != tsc_comm_id_split(parent, 0, 2));
    /* Shrink and split of the same parent and index never collide. */
    assert_true(tsc_comm_id_shrink(parent, 0) != tsc_comm_id_split(parent, 0, 0));
    assert_true(tsc_comm_id_shrink(parent, 0) != tsc_comm_id_shrink(parent, 1));
    assert_true(tsc_comm_id_shrink(parent, 0) == tsc_comm_id_shrink(parent, 0));
}

static void test_local_ids(void **state)
{
    (void)state;
    uint64_t a = tsc_comm_id_local("node1", 100, 0);
    assert_true(a == tsc_comm_id_local("node1", 100, 0));
    assert_true(a != tsc_comm_id_local("node1", 100, 1));
    assert_true(a != tsc_comm_id_local("node2", 100, 0));
    assert_true(a != tsc_comm_id_local("node1", 101, 0));
    assert_true(tsc_comm_id_local(NULL, 1, 0) != 0);
}

static void test_registry_add_lookup_remove(void **state)
{
    (void)state;
    tsc_comm_registry_clear();
    int objs[3];
    assert_null(tsc_comm_lookup(&objs[0]));
    assert_null(tsc_comm_lookup(NULL));
    tsc_comm_info *a = tsc_comm_add(&objs[0], 11, 0, 4);
    tsc_comm_info *b = tsc_comm_add(&objs[1], 22, 3, 4);
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_equal(tsc_comm_lookup(&objs[0]), a);
    assert_ptr_equal(tsc_comm_lookup(&objs[1]), b);
    assert_true(b->comm_id == 22);
    assert_int_equal(atomic_load(&b->rank), 3);
    assert_int_equal(atomic_fetch_add(&a->seq, 1), 0);
    assert_int_equal(atomic_fetch_add(&a->seq, 1), 1);
    tsc_comm_remove(&objs[0]);
    assert_null(tsc_comm_lookup(&objs[0]));
    assert_ptr_equal(tsc_comm_lookup(&objs[1]), b); /* still reachable past a tombstone */
    /* A pointer reused for a new communicator starts counting afresh. */
    tsc_comm_info *c = tsc_comm_add(&objs[0], 33, 1, 2);
    assert_non_null(c);
    assert_int_equal(atomic_load(&c->seq), 0);
    assert_true(c->comm_id == 33);
    assert_int_equal(tsc_comm_count_live(), 2);
}

static void test_registry_is_bounded(void **state)
{
    (void)state;
    tsc_comm_registry_clear();
    static char objs[TSC_COMM_CAPACITY + 1];
    for (uint32_t i = 0; i < TSC_COMM_CAPACITY; i++)
        assert_non_null(tsc_comm_add(&objs[i], i + 1, 0, 1));
    assert_null(tsc_comm_add(&objs[TSC_COMM_CAPACITY], 1, 0, 1));
    for (uint32_t i = 0; i < TSC_COMM_CAPACITY; i += 97)
        assert_true(tsc_comm_lookup(&objs[i])->comm_id == i + 1);
    tsc_comm_remove(&objs[5]);
    assert_non_null(tsc_comm_add(&objs[TSC_COMM_CAPACITY], 7, 0, 1));
    tsc_comm_registry_clear();
}

/* Sequence numbers from many threads on one communicator: contiguous. */
static tsc_comm_info *shared_info;
static void *bump(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10000; i++)
        atomic_fetch_add(&shared_info->seq, 1);
    return NULL;
}

static void test_sequence_numbers_under_threads(void **state)
{
    (void)state;
    tsc_comm_registry_clear();
    int obj;
    shared_info = tsc_comm_add(&obj, 1, 0, 1);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, bump, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&shared_info->seq), 40000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_unique_id_same_comm_on_every_rank),
        cmocka_unit_test(test_scalable_uses_all_ids),
        cmocka_unit_test(test_split_ids),
        cmocka_unit_test(test_local_ids),
        cmocka_unit_test(test_registry_add_lookup_remove),
        cmocka_unit_test(test_registry_is_bounded),
        cmocka_unit_test(test_sequence_numbers_under_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
