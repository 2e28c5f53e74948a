/* The NCCL operations table (format/tsc_nccl_ops.h): the op codes written
 * in dumps never change, the kinds give the historical codes exactly the
 * sets the analyses used to spell out by hand (collectives 1..9, sequenced
 * calls 1..11, communicator calls from 30, three rank inits, the clock
 * anchors), and a code not in the table is nothing.  A new line in the
 * table needs no change here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tsc_format.h"

static const struct {
    unsigned code;
    const char *name;
} dump_codes[] = {
    {1, "AllReduce"}, {2, "AllGather"}, {3, "ReduceScatter"}, {4, "Broadcast"}, {5, "Bcast"},
    {6, "Reduce"}, {7, "AlltoAll"}, {8, "Gather"}, {9, "Scatter"}, {10, "Send"}, {11, "Recv"},
    {20, "GroupStart"}, {21, "GroupEnd"}, {30, "CommInitRank"}, {31, "CommInitRankConfig"},
    {32, "CommInitRankScalable"}, {33, "CommInitAll"}, {34, "CommSplit"}, {35, "CommShrink"},
    {36, "CommFinalize"}, {37, "CommDestroy"}, {38, "CommAbort"},
};

static void test_codes_and_names(void **state)
{
    (void)state;
    size_t n = sizeof dump_codes / sizeof dump_codes[0];
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(tsc_nccl_op_name(dump_codes[i].code), dump_codes[i].name);
        char sym[64];
        snprintf(sym, sizeof sym, "nccl%s", dump_codes[i].name);
        assert_string_equal(tsc_nccl_op_symbol(dump_codes[i].code), sym);
    }
    assert_int_equal(TSC_NCCL_ALLREDUCE, 1);
    assert_int_equal(TSC_NCCL_GROUP_END, 21);
    assert_int_equal(TSC_NCCL_COMM_ABORT, 38);
}

static void test_kinds_match_the_old_sets(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dump_codes / sizeof dump_codes[0]; i++) {
        unsigned op = dump_codes[i].code;
        assert_int_equal(tsc_nccl_op_is_collective(op), op >= 1 && op <= 9);
        assert_int_equal(tsc_nccl_op_is_sequenced(op), op >= 1 && op <= 11);
        assert_int_equal(tsc_nccl_op_is_setup(op), op >= 30);
        assert_int_equal(tsc_nccl_op_kind(op) == TSC_NCCL_KIND_INIT, op >= 30 && op <= 32);
        assert_int_equal(tsc_nccl_op_kind(op) == TSC_NCCL_KIND_SYMMETRIC, op >= 1 && op <= 3);
        assert_int_equal(tsc_nccl_op_kind(op) == TSC_NCCL_KIND_ALLTOALL, op == 7);
        assert_int_equal(tsc_nccl_op_kind(op) == TSC_NCCL_KIND_P2P, op == 10 || op == 11);
        assert_int_equal(tsc_nccl_op_kind(op) == TSC_NCCL_KIND_ROOTED,
                         op == 4 || op == 5 || op == 6 || op == 8 || op == 9);
        assert_int_equal(tsc_nccl_op_kind(op) == TSC_NCCL_KIND_GROUP, op == 20 || op == 21);
    }
    /* A code not in the table (damage, a newer writer) is no operation. */
    for (unsigned op = 0; op < 256; op++) {
        if (tsc_nccl_op_name(op))
            continue;
        assert_int_equal(tsc_nccl_op_kind(op), TSC_NCCL_KIND_NONE);
        assert_null(tsc_nccl_op_symbol(op));
        assert_false(tsc_nccl_op_is_collective(op) || tsc_nccl_op_is_sequenced(op) ||
                     tsc_nccl_op_is_setup(op));
        assert_int_equal(tsc_nccl_op_busbw(op), 0);
    }
}

static void test_busbw_and_row_limit(void **state)
{
    (void)state;
    assert_int_equal(tsc_nccl_op_busbw(TSC_NCCL_ALLREDUCE), 2);
    assert_int_equal(tsc_nccl_op_busbw(TSC_NCCL_ALLGATHER), 1);
    assert_int_equal(tsc_nccl_op_busbw(TSC_NCCL_REDUCESCATTER), 1);
    assert_int_equal(tsc_nccl_op_busbw(TSC_NCCL_ALLTOALL), 1);
    assert_int_equal(tsc_nccl_op_busbw(TSC_NCCL_BROADCAST), 0);
    assert_int_equal(tsc_nccl_op_busbw(TSC_NCCL_SEND), 0);
    /* tables indexed by the step operations' codes end after the largest */
    for (unsigned op = 0; op < 256; op++)
        if (tsc_nccl_op_name(op) && !tsc_nccl_op_is_setup(op))
            assert_true(op < (unsigned)TSC_NCCL_STEP_OP_LIMIT);
    assert_true(tsc_nccl_op_name(TSC_NCCL_STEP_OP_LIMIT - 1) != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_and_names),
        cmocka_unit_test(test_kinds_match_the_old_sets),
        cmocka_unit_test(test_busbw_and_row_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
