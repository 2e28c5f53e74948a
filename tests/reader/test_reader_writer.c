/* Round trip through the preload's real dump writer (preload/core/dump_file.c):
 * what the capture side writes is exactly what the reader hands back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "dump_file.h"

static void test_writer_round_trip(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tsr_writer_%d.tsd", (int)getpid());
    unlink(path);
    tsc_dump d;
    assert_int_equal(tsc_dump_open_path(&d, path, 777, 1700000000000000000ull), 0);

    const char *keys[] = {TSC_META_RANK, TSC_META_HOST};
    const char *vals[] = {"5", "gpu-node-7"};
    char meta[256];
    size_t mlen = tsc_meta_encode(meta, sizeof meta, keys, vals, 2);
    assert_true(mlen > 0);
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_META, 0, meta, (uint32_t)mlen), 0);

    tsc_event slots[64];
    size_t n = 0;
    /* a 100-byte kernel name spans head + 3 continuation slots */
    char name[101];
    memset(name, 'k', 100);
    name[100] = 0;
    n += tsc_encode_desc(slots + n, 64 - n, TSC_DESC_STRING, 1, name, 100);
    tsc_desc_kernel k = {.name = 1, .device = 2, .stream = 3, .grid = {4, 5, 6}};
    n += tsc_encode_desc(slots + n, 64 - n, TSC_DESC_KERNEL, 2, &k, sizeof k);
    tsc_desc_nccl_call c = {.op = TSC_NCCL_SEND, .dtype = TSC_DT_INT8, .peer = 3,
                            .count = 10, .bytes = 10, .comm_id = 42, .comm_size = 4,
                            .redop = TSC_REDOP_NONE};
    n += tsc_encode_desc(slots + n, 64 - n, TSC_DESC_NCCL_CALL, 3, &c, sizeof c);
    n += tsc_encode_event(slots + n, 64 - n, TSC_EV_KERNEL, 0, 0, 2, 100, 200, 9);
    n += tsc_encode_event(slots + n, 64 - n, TSC_EV_NCCL, 0, (7 << 8) | 0, 3, 50, 60, 11);
    assert_int_equal(n, 4 + 2 + 3 + 2); /* string, kernel, nccl descs; 2 events */
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_EVENTS, 31337, slots,
                                          (uint32_t)(n * TSC_SLOT_SIZE)),
                     0);
    const char *ek[] = {TSC_META_END_REASON};
    const char *ev[] = {"signal:15"};
    mlen = tsc_meta_encode(meta, sizeof meta, ek, ev, 1);
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_END, 0, meta, (uint32_t)mlen), 0);
    tsc_dump_close(&d);

    capture *cap = calloc(1, sizeof *cap);
    int st;
    tsr_file *f = tsr_open(path, &capture_callbacks, cap, &st);
    assert_non_null(f);
    assert_int_equal(tsr_read_all(f), TSR_OK);
    const tsr_stats *s = tsr_file_stats(f);
    assert_int_equal(s->pid, 777);
    assert_int_equal(s->created_realtime_ns, 1700000000000000000ull);
    assert_int_equal(s->chunks, 3);
    assert_int_equal(s->clean_end, 1);
    assert_int_equal(cap->n_ev, 2);
    assert_int_equal(cap->n_prob, 0);
    tsc_desc_kernel kk;
    assert_int_equal(tsr_decode_kernel(cap->ev[0].desc, &kk), 0);
    assert_int_equal(kk.grid[2], 6);
    assert_string_equal(tsr_string(f, kk.name), name);
    assert_int_equal(cap->ev[0].tid, 31337);
    assert_int_equal(cap->ev[0].val, 9);
    tsc_desc_nccl_call cc;
    assert_int_equal(tsr_decode_nccl_call(cap->ev[1].desc, &cc), 0);
    assert_int_equal(cc.op, TSC_NCCL_SEND);
    assert_int_equal(cc.peer, 3);
    assert_int_equal(cc.comm_id, 42);
    assert_int_equal(cap->ev[1].aux >> 8, 7);
    assert_string_equal(tsr_meta(f, TSC_META_HOST), "gpu-node-7");
    assert_string_equal(tsr_meta(f, TSC_META_END_REASON), "signal:15");
    tsr_close(f);
    free(cap);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_writer_round_trip)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
