/* Tests of the test NCCL itself: real processes, real shared memory, exact
 * results.  Each test forks the ranks, each rank checks its own results and
 * exits non-zero on the first wrong value. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fn_reduce.h"
#include "nccl_abi.h"

typedef int (*rank_fn)(ncclComm_t comm, int rank, int n, void *arg);

#define FAIL_IF(cond, ...)                                                   \
    do {                                                                     \
        if (cond) {                                                          \
            fprintf(stderr, "rank %d: ", rank);                              \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);              \
            return 1;                                                        \
        }                                                                    \
    } while (0)

#define NCCLOK(call) FAIL_IF((call) != ncclSuccess, "%s failed: %s", #call, ncclGetLastError(NULL))

/* Fork n ranks that join one communicator and run fn; `present` limits
 * how many actually start (to test a missing rank).  Returns the number of
 * ranks that failed; init_rc gets rank 0's ncclCommInitRank result. */
static int run_ranks_partial(int n, int present, rank_fn fn, void *arg, ncclUniqueId *id_out)
{
    ncclUniqueId id;
    assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
    if (id_out)
        *id_out = id;
    pid_t pids[64];
    for (int r = 0; r < present; r++) {
        fflush(NULL);
        pids[r] = fork();
        if (pids[r] == 0) {
            ncclComm_t comm = NULL;
            ncclResult_t rc = ncclCommInitRank(&comm, n, id, r);
            if (rc != ncclSuccess)
                _exit(fn ? 100 + rc : rc);
            int bad = fn ? fn(comm, r, n, arg) : 0;
            ncclCommDestroy(comm);
            _exit(bad);
        }
        assert_true(pids[r] > 0);
    }
    int failed = 0;
    for (int r = 0; r < present; r++) {
        int st;
        waitpid(pids[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "rank %d ended with status 0x%x\n", r, st);
            failed++;
        }
    }
    return failed;
}

static int run_ranks(int n, rank_fn fn, void *arg)
{
    return run_ranks_partial(n, n, fn, arg, NULL);
}

/* ------------------------------------------------------------ reductions */

static double input(int rank, size_t i) { return (double)((rank + (int)i) % 3 + 1); }

static double expect_reduce(ncclRedOp_t op, int n, size_t i, int integer)
{
    double acc = input(0, i);
    for (int r = 1; r < n; r++) {
        double x = input(r, i);
        if (op == ncclProd) acc *= x;
        else if (op == ncclMax) acc = x > acc ? x : acc;
        else if (op == ncclMin) acc = x < acc ? x : acc;
        else acc += x;
    }
    if (op == ncclAvg)
        acc = integer ? (double)((long long)acc / n) : acc / n;
    return acc;
}

static void put(ncclDataType_t dt, void *buf, size_t i, double v)
{
    switch (dt) {
    case ncclInt8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case ncclInt32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case ncclInt64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case ncclFloat32: ((float *)buf)[i] = (float)v; break;
    case ncclFloat64: ((double *)buf)[i] = v; break;
    case ncclFloat16: ((uint16_t *)buf)[i] = fn_float_to_half((float)v); break;
    case ncclBfloat16: ((uint16_t *)buf)[i] = fn_float_to_bf16((float)v); break;
    default: break;
    }
}

static double get(ncclDataType_t dt, const void *buf, size_t i)
{
    switch (dt) {
    case ncclInt8: return ((const int8_t *)buf)[i];
    case ncclInt32: return ((const int32_t *)buf)[i];
    case ncclUint32: return ((const uint32_t *)buf)[i];
    case ncclInt64: return (double)((const int64_t *)buf)[i];
    case ncclUint64: return (double)((const uint64_t *)buf)[i];
    case ncclFloat32: return ((const float *)buf)[i];
    case ncclFloat64: return ((const double *)buf)[i];
    case ncclFloat16: return fn_half_to_float(((const uint16_t *)buf)[i]);
    case ncclBfloat16: return fn_bf16_to_float(((const uint16_t *)buf)[i]);
    default: return -1;
    }
}

static const ncclDataType_t all_types[] = {ncclInt8, ncclInt32, ncclUint32, ncclInt64,
                                           ncclUint64, ncclFloat32, ncclFloat64,
                                           ncclFloat16, ncclBfloat16};

static int allreduce_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    size_t count = *(size_t *)arg;
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
        ncclDataType_t dt = all_types[t];
        int integer = dt <= ncclUint64;
        for (int op = ncclSum; op <= ncclAvg; op++) {
            size_t esz = fn_dtype_size(dt);
            char *send = malloc(count * esz), *recv = malloc(count * esz);
            for (size_t i = 0; i < count; i++)
                put(dt, send, i, input(rank, i));
            NCCLOK(ncclAllReduce(send, recv, count, dt, (ncclRedOp_t)op, comm, NULL));
            for (size_t i = 0; i < count; i++) {
                double want = expect_reduce((ncclRedOp_t)op, n, i, integer);
                FAIL_IF(get(dt, recv, i) != want, "type %d op %d [%zu]: %g want %g", dt, op, i,
                        get(dt, recv, i), want);
            }
            free(send);
            free(recv);
        }
    }
    return 0;
}

static void test_allreduce_every_type_and_op(void **state)
{
    (void)state;
    size_t count = 1000;
    assert_int_equal(run_ranks(3, allreduce_rank, &count), 0);
}

/* Many chunks per collective: 4 KiB slots and 100k elements. */
static void test_allreduce_spans_many_chunks(void **state)
{
    (void)state;
    setenv("FAKENCCL_SLOT_BYTES", "4096", 1);
    size_t count = 100000;
    int failed = run_ranks(4, allreduce_rank, &count);
    unsetenv("FAKENCCL_SLOT_BYTES");
    assert_int_equal(failed, 0);
}

/* ------------------------------------------------------ data movement */

static float fv(int rank, size_t i) { return (float)(rank * 100000 + (int)i); }

static int movement_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)arg;
    const size_t c = 3001; /* odd, to cross chunk edges unevenly */
    float *send = calloc(c * (size_t)n, sizeof(float));
    float *recv = calloc(c * (size_t)n, sizeof(float));
    FAIL_IF(!send || !recv, "out of memory");
    for (size_t i = 0; i < c * (size_t)n; i++)
        send[i] = fv(rank, i);

    NCCLOK(ncclAllGather(send, recv, c, ncclFloat32, comm, NULL));
    for (int s = 0; s < n; s++)
        for (size_t i = 0; i < c; i++)
            FAIL_IF(recv[(size_t)s * c + i] != fv(s, i), "AllGather [%d][%zu]", s, i);

    NCCLOK(ncclReduceScatter(send, recv, c, ncclFloat32, ncclSum, comm, NULL));
    for (size_t i = 0; i < c; i++) {
        float want = 0;
        for (int s = 0; s < n; s++)
            want += fv(s, (size_t)rank * c + i);
        FAIL_IF(recv[i] != want, "ReduceScatter [%zu] %g want %g", i, recv[i], want);
    }

    int root = n - 1;
    NCCLOK(ncclBroadcast(send, recv, c, ncclFloat32, root, comm, NULL));
    for (size_t i = 0; i < c; i++)
        FAIL_IF(recv[i] != fv(root, i), "Broadcast [%zu]", i);

    memcpy(recv, send, sizeof(float) * c);
    NCCLOK(ncclBcast(recv, c, ncclFloat32, 1, comm, NULL));
    for (size_t i = 0; i < c; i++)
        FAIL_IF(recv[i] != fv(1, i), "Bcast [%zu]", i);

    memset(recv, 0, sizeof(float) * c);
    NCCLOK(ncclReduce(send, recv, c, ncclFloat32, ncclMax, 1, comm, NULL));
    for (size_t i = 0; i < c; i++)
        FAIL_IF(recv[i] != (rank == 1 ? fv(n - 1, i) : 0.0f), "Reduce [%zu]", i);

    NCCLOK(ncclAlltoAll(send, recv, c, ncclFloat32, comm, NULL));
    for (int s = 0; s < n; s++)
        for (size_t i = 0; i < c; i++)
            FAIL_IF(recv[(size_t)s * c + i] != fv(s, (size_t)rank * c + i), "AlltoAll");

    memset(recv, 0, sizeof(float) * c * (size_t)n);
    NCCLOK(ncclGather(send, recv, c, ncclFloat32, 0, comm, NULL));
    if (rank == 0)
        for (int s = 0; s < n; s++)
            for (size_t i = 0; i < c; i++)
                FAIL_IF(recv[(size_t)s * c + i] != fv(s, i), "Gather");

    NCCLOK(ncclScatter(send, recv, c, ncclFloat32, 2, comm, NULL));
    for (size_t i = 0; i < c; i++)
        FAIL_IF(recv[i] != fv(2, (size_t)rank * c + i), "Scatter [%zu]", i);

    /* In place AllGather: each rank's input sits at its own block. */
    for (size_t i = 0; i < c; i++)
        recv[(size_t)rank * c + i] = fv(rank, i);
    NCCLOK(ncclAllGather(recv + (size_t)rank * c, recv, c, ncclFloat32, comm, NULL));
    for (int s = 0; s < n; s++)
        for (size_t i = 0; i < c; i++)
            FAIL_IF(recv[(size_t)s * c + i] != fv(s, i), "in-place AllGather");
    free(send);
    free(recv);
    return 0;
}

static void test_collectives_move_the_data(void **state)
{
    (void)state;
    setenv("FAKENCCL_SLOT_BYTES", "8192", 1);
    int failed = run_ranks(4, movement_rank, NULL);
    unsetenv("FAKENCCL_SLOT_BYTES");
    assert_int_equal(failed, 0);
}

/* ----------------------------------------------------------- send/recv */

static int ring_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)arg;
    /* Far larger than a mailbox: only concurrent progress avoids deadlock. */
    const size_t c = 300000;
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    int32_t *out = malloc(4 * c), *in = malloc(4 * c), *in2 = malloc(4 * c), *self = malloc(4 * c);
    for (size_t i = 0; i < c; i++)
        out[i] = rank * 1000003 + (int32_t)i;
    NCCLOK(ncclGroupStart());
    NCCLOK(ncclSend(out, c, ncclInt32, right, comm, NULL));
    NCCLOK(ncclSend(out, c, ncclInt32, left, comm, NULL));
    NCCLOK(ncclRecv(in, c, ncclInt32, left, comm, NULL));
    NCCLOK(ncclRecv(in2, c, ncclInt32, right, comm, NULL));
    NCCLOK(ncclSend(out, c, ncclInt32, rank, comm, NULL));
    NCCLOK(ncclRecv(self, c, ncclInt32, rank, comm, NULL));
    NCCLOK(ncclGroupEnd());
    for (size_t i = 0; i < c; i++) {
        FAIL_IF(in[i] != left * 1000003 + (int32_t)i, "from left [%zu]", i);
        FAIL_IF(in2[i] != right * 1000003 + (int32_t)i, "from right [%zu]", i);
        FAIL_IF(self[i] != out[i], "self [%zu]", i);
    }
    /* Ungrouped pair: even ranks send first, odd ranks receive first. */
    if (n % 2 == 0) {
        int peer = rank ^ 1;
        if (rank % 2 == 0) {
            NCCLOK(ncclSend(out, 1000, ncclInt32, peer, comm, NULL));
            NCCLOK(ncclRecv(in, 1000, ncclInt32, peer, comm, NULL));
        } else {
            NCCLOK(ncclRecv(in, 1000, ncclInt32, peer, comm, NULL));
            NCCLOK(ncclSend(out, 1000, ncclInt32, peer, comm, NULL));
        }
        FAIL_IF(in[999] != peer * 1000003 + 999, "ungrouped pair");
    }
    free(out), free(in), free(in2), free(self);
    return 0;
}

static void test_grouped_ring_larger_than_mailbox(void **state)
{
    (void)state;
    assert_int_equal(run_ranks(4, ring_rank, NULL), 0);
}

/* Collectives and p2p in one group, nested group calls. */
static int group_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)arg;
    int64_t a[100], b[100], c[100], got[100];
    for (int i = 0; i < 100; i++)
        a[i] = rank + i, b[i] = rank * 2, c[i] = 1;
    NCCLOK(ncclGroupStart());
    NCCLOK(ncclAllReduce(a, a, 100, ncclInt64, ncclSum, comm, NULL));
    NCCLOK(ncclGroupStart());
    NCCLOK(ncclAllReduce(b, b, 100, ncclInt64, ncclMax, comm, NULL));
    NCCLOK(ncclGroupEnd());
    FAIL_IF(b[0] != rank * 2, "inner GroupEnd ran the group early");
    NCCLOK(ncclSend(c, 100, ncclInt64, (rank + 1) % n, comm, NULL));
    NCCLOK(ncclRecv(got, 100, ncclInt64, (rank + n - 1) % n, comm, NULL));
    NCCLOK(ncclAllReduce(c, c, 100, ncclInt64, ncclSum, comm, NULL));
    NCCLOK(ncclGroupEnd());
    FAIL_IF(a[5] != n * (n - 1) / 2 + 5 * n, "grouped AllReduce a");
    FAIL_IF(b[5] != 2 * (n - 1), "grouped AllReduce b");
    FAIL_IF(c[5] != n, "grouped AllReduce c");
    FAIL_IF(got[5] != 1, "grouped recv (sent before the AllReduce changed it)");
    return 0;
}

static void test_group_defers_and_runs_in_order(void **state)
{
    (void)state;
    assert_int_equal(run_ranks(3, group_rank, NULL), 0);
}

/* --------------------------------------------------------------- split */

static int split_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)arg, (void)n;
    int color = rank == 4 ? -1 : rank % 2;
    ncclComm_t sub = (ncclComm_t)1;
    NCCLOK(ncclCommSplit(comm, color, -rank, &sub, NULL));
    if (rank == 4) {
        FAIL_IF(sub != NULL, "NOCOLOR must give NULL");
        return 0;
    }
    /* color 0: ranks {0,2}; color 1: {1,3}; key -rank reverses the order. */
    int cnt, ur;
    NCCLOK(ncclCommCount(sub, &cnt));
    NCCLOK(ncclCommUserRank(sub, &ur));
    FAIL_IF(cnt != 2, "count %d", cnt);
    FAIL_IF(ur != (rank < 2 ? 1 : 0), "user rank %d", ur);
    int32_t v = rank;
    NCCLOK(ncclAllReduce(&v, &v, 1, ncclInt32, ncclSum, sub, NULL));
    FAIL_IF(v != (rank % 2 == 0 ? 2 : 4), "sum on split %d", v);
    /* A second split of the parent makes a different communicator. */
    ncclComm_t sub2;
    NCCLOK(ncclCommSplit(comm, 0, rank, &sub2, NULL));
    NCCLOK(ncclCommCount(sub2, &cnt));
    FAIL_IF(cnt != 4, "second split count %d", cnt);
    v = 1;
    NCCLOK(ncclAllReduce(&v, &v, 1, ncclInt32, ncclSum, sub2, NULL));
    FAIL_IF(v != 4, "sum on second split %d", v);
    NCCLOK(ncclCommDestroy(sub2));
    NCCLOK(ncclCommDestroy(sub));
    return 0;
}

static int split_rank_wrapper(ncclComm_t comm, int rank, int n, void *arg)
{
    /* rank 4 takes part in both splits on the parent. */
    if (rank == 4) {
        ncclComm_t sub = (ncclComm_t)1, sub2 = NULL;
        NCCLOK(ncclCommSplit(comm, -1, 0, &sub, NULL));
        FAIL_IF(sub != NULL, "NOCOLOR must give NULL");
        NCCLOK(ncclCommSplit(comm, 1, 0, &sub2, NULL));
        FAIL_IF(sub2 == NULL, "second split");
        ncclCommDestroy(sub2);
        return 0;
    }
    return split_rank(comm, rank, n, arg);
}

static void test_split_color_key_nocolor(void **state)
{
    (void)state;
    assert_int_equal(run_ranks(5, split_rank_wrapper, NULL), 0);
}

/* ------------------------------------------------------- failure modes */

static void test_missing_rank_times_out_and_cleans_up(void **state)
{
    (void)state;
    setenv("FAKENCCL_TIMEOUT_S", "1", 1);
    ncclUniqueId id;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int failed = run_ranks_partial(2, 1, NULL, NULL, &id);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    unsetenv("FAKENCCL_TIMEOUT_S");
    assert_int_equal(failed, 1); /* exit code ncclSystemError */
    assert_true(t1.tv_sec - t0.tv_sec < 10);
    char path[256];
    snprintf(path, sizeof path, "/dev/shm%s", id.internal + 8);
    assert_int_not_equal(access(path, F_OK), 0);
}

static int mismatch_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)n, (void)arg;
    float buf[20] = {0};
    size_t count = rank == 0 ? 10 : 20;
    ncclResult_t rc = ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, comm, NULL);
    FAIL_IF(rc != ncclInvalidUsage, "mismatch gave %d", rc);
    return 0;
}

static void test_mismatched_collectives_fail_on_all_ranks(void **state)
{
    (void)state;
    assert_int_equal(run_ranks(2, mismatch_rank, NULL), 0);
}

static int abort_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)n, (void)arg;
    if (rank == 0) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        NCCLOK(ncclCommAbort(comm));
        _exit(0); /* comm is gone: skip the destroy in the caller */
    }
    float v = 1;
    ncclResult_t rc = ncclAllReduce(&v, &v, 1, ncclFloat32, ncclSum, comm, NULL);
    FAIL_IF(rc != ncclRemoteError, "peer of an aborted comm got %d", rc);
    ncclResult_t async;
    NCCLOK(ncclCommGetAsyncError(comm, &async));
    FAIL_IF(async != ncclRemoteError, "async error %d", async);
    return 0;
}

static void test_abort_releases_waiting_peer(void **state)
{
    (void)state;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(run_ranks(2, abort_rank, NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 10);
}

static int misc_rank(ncclComm_t comm, int rank, int n, void *arg)
{
    (void)arg;
    int v = 0, dev = -1;
    NCCLOK(ncclGetVersion(&v));
    FAIL_IF(v != 22809, "version %d", v);
    NCCLOK(ncclCommCuDevice(comm, &dev));
    FAIL_IF(dev != 3, "device %d (LOCAL_RANK is 3)", dev);
    NCCLOK(ncclCommCount(comm, &v));
    FAIL_IF(v != n, "count");
    ncclResult_t async = ncclInternalError;
    NCCLOK(ncclCommGetAsyncError(comm, &async));
    FAIL_IF(async != ncclSuccess, "async");
    FAIL_IF(ncclGroupEnd() != ncclInvalidUsage, "GroupEnd without GroupStart");
    float x = 0;
    FAIL_IF(ncclAllReduce(&x, &x, 1, ncclFloat8e4m3, ncclSum, comm, NULL) != ncclInvalidArgument,
            "fp8 reduction accepted");
    FAIL_IF(ncclSend(&x, 1, ncclFloat32, n, comm, NULL) != ncclInvalidArgument, "peer n");
    FAIL_IF(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, comm, NULL) != ncclInvalidArgument,
            "NULL buffers");
    FAIL_IF(strlen(ncclGetErrorString(ncclRemoteError)) == 0, "error string");
    FAIL_IF(ncclCommFinalize(comm) != ncclSuccess, "finalize");
    return rank < 0;
}

static void test_api_odds_and_ends(void **state)
{
    (void)state;
    setenv("LOCAL_RANK", "3", 1);
    int failed = run_ranks(2, misc_rank, NULL);
    unsetenv("LOCAL_RANK");
    assert_int_equal(failed, 0);
    ncclComm_t c;
    int devs[2] = {0, 1};
    assert_int_equal(ncclCommInitAll(&c, 2, devs), ncclInvalidUsage);
    ncclUniqueId junk;
    memset(&junk, 0x5a, sizeof junk);
    assert_int_equal(ncclCommInitRank(&c, 2, junk, 0), ncclInvalidArgument);
    ncclUniqueId a, b;
    assert_int_equal(ncclGetUniqueId(&a), ncclSuccess);
    assert_int_equal(ncclGetUniqueId(&b), ncclSuccess);
    assert_memory_not_equal(&a, &b, sizeof a);
}

static void test_half_and_bf16_conversions(void **state)
{
    (void)state;
    assert_int_equal(fn_float_to_half(1.0f), 0x3c00);
    assert_int_equal(fn_float_to_half(-2.5f), 0xc100);
    assert_int_equal(fn_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(fn_float_to_half(1e6f), 0x7c00);
    assert_int_equal(fn_float_to_half(5.960464477539063e-08f), 0x0001);
    assert_true(fn_half_to_float(0x3555) > 0.333f && fn_half_to_float(0x3555) < 0.3334f);
    assert_int_equal(fn_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(fn_float_to_bf16(3.0f), 0x4040);
    assert_true(fn_bf16_to_float(0x4049) == 3.140625f);
    for (unsigned h = 0; h < 0x7c00; h += 7)
        assert_int_equal(fn_float_to_half(fn_half_to_float((unsigned short)h)), h);
}

/* Like the real library: pncclX strong, ncclX a weak alias of it (so an
 * interposer's dlsym(RTLD_NEXT) finds it), and nothing internal exported. */
static void test_exports_match_the_real_abi(void **state)
{
    (void)state;
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    static const char *const names[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                        "Bcast", "Reduce", "AlltoAll", "Gather", "Scatter",
                                        "Send", "Recv", "GroupStart", "GroupEnd",
                                        "CommInitRank", "CommInitRankConfig", "CommSplit",
                                        "CommFinalize", "CommDestroy", "CommAbort",
                                        "GetVersion", "GetUniqueId", "CommGetAsyncError"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char n[64], p[64];
        snprintf(n, sizeof n, "nccl%s", names[i]);
        snprintf(p, sizeof p, "pnccl%s", names[i]);
        void *a = dlsym(h, n), *b = dlsym(h, p);
        assert_non_null(a);
        assert_ptr_equal(a, b);
    }
    assert_null(dlsym(h, "fn_comm_attach"));
    assert_null(dlsym(h, "fn_reduce"));
    dlclose(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exports_match_the_real_abi),
        cmocka_unit_test(test_half_and_bf16_conversions),
        cmocka_unit_test(test_allreduce_every_type_and_op),
        cmocka_unit_test(test_allreduce_spans_many_chunks),
        cmocka_unit_test(test_collectives_move_the_data),
        cmocka_unit_test(test_grouped_ring_larger_than_mailbox),
        cmocka_unit_test(test_group_defers_and_runs_in_order),
        cmocka_unit_test(test_split_color_key_nocolor),
        cmocka_unit_test(test_missing_rank_times_out_and_cleans_up),
        cmocka_unit_test(test_mismatched_collectives_fail_on_all_ranks),
        cmocka_unit_test(test_abort_releases_waiting_peer),
        cmocka_unit_test(test_api_odds_and_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
