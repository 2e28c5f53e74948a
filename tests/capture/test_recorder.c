/* The recorder driven directly (no LD_PRELOAD): long descriptors, intern
 * table resets seen in the file, drop accounting and metadata. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dump_scan.h"
#include "intern.h"
#include "recorder.h"
#include "recorder_internal.h"

static char dir[64];

static void test_recorder_end_to_end(void **state)
{
    (void)state;
    assert_int_equal(tsc_rec_active(), 1);

    /* A long string: 4096 bytes kept, the rest cut. */
    static char big[5000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    uint32_t sid = tsc_rec_string(big, sizeof big);
    assert_true(sid > 0);
    assert_int_equal(tsc_rec_string(big, 4096), sid); /* same content, interned */
    tsc_rec_event(TSC_EV_NVTX, 0, 0, sid, 10, 20, 0);

    /* More distinct signatures than the table holds: the first one, used
     * again afterwards, is defined again under a new id. */
    tsc_desc_nccl_call d;
    memset(&d, 0, sizeof d);
    d.op = TSC_NCCL_ALLREDUCE;
    d.count = 0;
    uint32_t first = tsc_rec_intern(TSC_DESC_NCCL_CALL, &d, sizeof d);
    assert_true(first > 0);
    for (uint32_t i = 1; i <= TSC_INTERN_MAX_USED + 10; i++) {
        d.count = i;
        assert_true(tsc_rec_intern(TSC_DESC_NCCL_CALL, &d, sizeof d) > 0);
    }
    d.count = 0;
    uint32_t again = tsc_rec_intern(TSC_DESC_NCCL_CALL, &d, sizeof d);
    assert_true(again > 0);
    assert_true(again != first);
    tsc_rec_event(TSC_EV_NCCL, 0, 0, again, 30, 40, 0);

    /* Drops: an event that needs a descriptor but has none, plus records
     * lost upstream. */
    tsc_rec_event(TSC_EV_KERNEL, 0, 0, 0, 1, 2, 3);
    tsc_rec_count_dropped(5);
    /* Kinds without a descriptor are fine with 0. */
    tsc_rec_event(TSC_EV_CLOCK, 0, 0, 0, 100, 0, 50);
    tsc_rec_meta("test_key", "test value");
    /* More keys than the store holds (as device.N.* keys of a many-GPU
     * node would be): the first ones kept, the rest counted. */
    enum { MANY_KEYS = 250 };
    char key[16];
    for (int i = 0; i < MANY_KEYS; i++) {
        snprintf(key, sizeof key, "many_%03d", i);
        tsc_rec_meta(key, "x");
    }

    tsc_rec_exit();
    assert_int_equal(tsc_rec_active(), 0); /* closed after exit */
    tsc_rec_stats st;
    tsc_rec_get_stats(&st);
    assert_int_equal(st.events_written, 3);
    assert_int_equal(st.dropped, 6);
    assert_int_equal(st.bytes_lost, 0);
    assert_int_equal(st.threads, 1);
    assert_true(st.bytes_written > 64);
    tsc_rec_event(TSC_EV_CLOCK, 0, 0, 0, 1, 0, 1); /* ignored, no crash */

    char path[512];
    assert_int_equal(dump_scan_count_files(dir, path, sizeof path), 1);
    assert_string_equal(st.path, path);
    static dump_scan s;
    assert_int_equal(dump_scan_load(&s, path), 0);
    assert_int_equal(s.bad_crc, 0);
    assert_int_equal(s.bad_layout, 0);
    assert_string_equal(dump_scan_meta(&s, "test_key"), "test value");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "3");
    assert_string_equal(dump_scan_meta(&s, TSC_META_DROPPED), "6");
    assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), "exit");
    assert_string_equal(dump_scan_meta(&s, TSC_META_RANK), "-1");
    int kept = 0;
    for (int i = 0; i < MANY_KEYS; i++) {
        snprintf(key, sizeof key, "many_%03d", i);
        if (dump_scan_meta(&s, key)) {
            assert_int_equal(kept, i); /* the first ones, in order */
            kept++;
        }
    }
    const char *dropped = dump_scan_meta(&s, TSC_META_KEYS_DROPPED);
    assert_non_null(dropped);
    assert_true(kept > 100);
    assert_int_equal(kept + atoi(dropped), MANY_KEYS);

    const scan_desc *str = dump_scan_desc(&s, sid);
    assert_non_null(str);
    assert_int_equal(str->len, 4096);
    assert_memory_equal(str->payload, big, 4096);
    const scan_desc *a = dump_scan_desc(&s, first), *b = dump_scan_desc(&s, again);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->len, 64);
    assert_memory_equal(a->payload, b->payload, 64);
    /* Events in order, each after its descriptor. */
    assert_int_equal(s.nevents, 3);
    assert_int_equal(s.events[0].ev.kind, TSC_EV_NVTX);
    assert_int_equal(s.events[0].ev.desc, sid);
    assert_int_equal(s.events[1].ev.desc, again);
    assert_int_equal(s.events[2].ev.kind, TSC_EV_CLOCK);
    assert_int_equal(s.events[2].ev.val, 50);
    assert_int_equal(s.events[0].tid, (uint32_t)gettid());
    dump_scan_free(&s);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/tsc_recorder_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    setenv("TSCOPE_OUT", dir, 1);
    unsetenv("RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorder_end_to_end),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 && rc == 0)
        rc = 1;
    return rc;
}
