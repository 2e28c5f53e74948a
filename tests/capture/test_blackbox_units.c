/* Black-box mode's parts without processes: trigger files (parsing
 * untrusted text), the step tracker (opener, bounds, sums, the anomaly
 * rule) and the bounded record store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bb_stall.h"
#include "bb_steps.h"
#include "bb_store.h"
#include "bb_trigger.h"
#include "dump_file.h"

static int parse(const char *text, bb_trigger *t, char *why)
{
    memset(t, 0, sizeof *t);
    return bb_trigger_parse(text, strlen(text), t, why, 160);
}

static void test_trigger_parse(void **state)
{
    (void)state;
    bb_trigger t;
    char why[160];
    assert_int_equal(parse("steps=10-19\nseq=31\nreason=anomaly\nrank=2\nnow=1\nnote=x y\n", &t,
                           why), 0);
    assert_true(t.has_steps && t.first == 10 && t.last == 19);
    assert_true(t.has_seq && t.seq == 31 && t.rank == 2 && t.now);
    assert_string_equal(t.reason, "anomaly");
    assert_string_equal(t.note, "x y");
    assert_int_equal(parse("next=5\r\n# comment\nfuture=ignored\n", &t, why), 0);
    assert_true(!t.has_steps && t.next == 5 && t.rank == -1);
    assert_string_equal(t.reason, "ctl");
    /* each malformed file is refused with a reason */
    const char *bad[] = {"steps=9-x\n", "steps=5-3\n", "steps=\n", "garbage\n", "reason=ctl\n",
                         "next=0\n", "steps=1-2\nrank=abc\n", "steps=1-2\nnote=a\001b\n",
                         "steps=99999999999999999999-1\n", "steps=0-2000000\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        if (parse(bad[i], &t, why) != -1 || !why[0])
            fail_msg("accepted: %s", bad[i]);
    }
    /* what we write reads back */
    bb_trigger w = {.has_steps = 1, .first = 7, .last = 9, .has_seq = 1, .seq = 70, .rank = 3,
                    .now = 1};
    snprintf(w.reason, sizeof w.reason, "hang");
    snprintf(w.note, sizeof w.note, "stuck");
    char text[512];
    size_t n = bb_trigger_format(&w, text, sizeof text);
    assert_int_equal(bb_trigger_parse(text, n, &t, why, sizeof why), 0);
    assert_true(t.first == 7 && t.last == 9 && t.seq == 70 && t.rank == 3 && t.now);
    assert_string_equal(t.reason, "hang");
}

static void test_trigger_names_and_publish(void **state)
{
    (void)state;
    assert_true(bb_trigger_name_ok("anomaly-s12") && bb_trigger_name_ok("ctl-1.2_x"));
    assert_false(bb_trigger_name_ok(".hidden") || bb_trigger_name_ok("a/b") ||
                 bb_trigger_name_ok("x.tmp") || bb_trigger_name_ok("x.steps") ||
                 bb_trigger_name_ok(""));
    char dir[] = "/tmp/bbtrigXXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[64];
    snprintf(sub, sizeof sub, "%s/triggers", dir);
    assert_int_equal(bb_trigger_publish(sub, "w", "steps=1-2\n"), 0);
    assert_int_equal(bb_trigger_publish(sub, "w", "steps=3-4\n"), 1); /* first one wins */
    char path[128], buf[64] = "";
    snprintf(path, sizeof path, "%s/w", sub);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "steps=1-2\n");
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}

/* Slots for one NCCL call signature (AllReduce of `bytes` on comm 77). */
static size_t desc_slots(tsc_event *out, uint32_t id, uint64_t bytes)
{
    tsc_desc_nccl_call c = {.op = TSC_NCCL_ALLREDUCE, .dtype = TSC_DT_FLOAT32, .count = bytes / 4,
                            .bytes = bytes, .comm_id = 77, .comm_size = 4, .peer = TSC_NO_PEER};
    return tsc_encode_desc(out, 4, TSC_DESC_NCCL_CALL, id, &c, sizeof c);
}

static tsc_event call(uint32_t desc, uint64_t t0, uint64_t t1, uint64_t seq)
{
    return (tsc_event){.kind = TSC_EV_NCCL, .desc = desc, .start_ns = t0, .end_ns = t1,
                       .val = seq};
}

/* Step k: compute, then AllReduce 4 KiB (desc 1, the opener) and 16 KiB
 * (desc 2); times in microseconds from 1 s; step_us long. */
static void feed_steps(bb_steps *t, int from, int to, const uint64_t *step_us)
{
    static uint64_t clock_us = 1000000;
    for (int k = from; k < to; k++) {
        clock_us += step_us[k] - 200;
        tsc_event e[2] = {call(1, clock_us * 1000, (clock_us + 100) * 1000, 2 * (uint64_t)k),
                          call(2, (clock_us + 100) * 1000, (clock_us + 200) * 1000,
                               2 * (uint64_t)k + 1)};
        clock_us += 200;
        bb_steps_take(t, 9, e, 2);
    }
}

/* A tracker (keeping 64 steps, median of 10) that knows descriptors 1
 * (AllReduce 4 KiB) and 2 (16 KiB). */
static void tracker(bb_steps *t, uint32_t k_pct, uint32_t run)
{
    assert_int_equal(bb_steps_init(t, 64, 10, k_pct, run), 0);
    tsc_event d[8];
    size_t n = desc_slots(d, 1, 4096);
    n += desc_slots(d + n, 2, 16384);
    bb_steps_take(t, 9, d, n);
}

static void test_steps_opener_bounds_sums(void **state)
{
    (void)state;
    bb_steps t;
    tracker(&t, 200, 2);
    uint64_t us[100];
    for (int k = 0; k < 100; k++)
        us[k] = k == 30 || k == 31 ? 15000 : k == 40 ? 15000 : 5000;
    feed_steps(&t, 0, 100, us);
    /* desc 1 repeats first: each of its returns ends a step */
    assert_true(t.have_opener && t.opener_sequenced);
    assert_int_equal(t.closed, 100);
    uint64_t lo, hi, lo2, hi2;
    assert_int_equal(bb_steps_bounds(&t, 50, &lo, &hi), 0);
    assert_int_equal(bb_steps_bounds(&t, 51, &lo2, &hi2), 0);
    assert_true(hi == lo2 && hi2 - lo2 == 5000000); /* step 51: 5 ms */
    assert_int_equal(bb_steps_bounds(&t, 100, &lo, &hi), 0);
    assert_true(hi == UINT64_MAX); /* the open step */
    assert_int_equal(bb_steps_bounds(&t, 101, &lo, &hi), -1);
    assert_int_equal(bb_steps_by_seq(&t, 2 * 60), 60); /* matched by sequence number */
    assert_int_equal(bb_steps_seq(&t, 60), 120);
    /* sums: step k holds step k-1's 16 KiB call and its own 4 KiB one */
    tsc_step_summary s[128];
    bb_step_extra x[128];
    tsc_step_extra xr[128];
    size_t k = bb_steps_pop(&t, UINT64_MAX, s, x, 128);
    assert_int_equal(k, 100);
    /* no CUPTI copies, no GEMMs: nothing to write beside the summaries */
    assert_int_equal(bb_steps_extra_records(&t, s, x, k, xr), 0);
    assert_int_equal(s[50].step, 50);
    assert_int_equal(s[50].nccl_calls, 2);
    assert_int_equal(s[50].nccl_bytes, 4096 + 16384);
    assert_int_equal(s[50].nccl_ns, 200000);
    /* the anomaly: steps 30, 31 (two in a row at 3x); step 40 alone is not one */
    assert_true(t.anomaly_pending);
    assert_int_equal(t.anomaly_step, 30);
    assert_int_equal(t.anomaly_last, 31);
    assert_true(s[30].flags & TSC_STEP_F_ANOMALY);
    assert_true(s[40].flags & TSC_STEP_F_ANOMALY);
    assert_false(s[29].flags & TSC_STEP_F_ANOMALY);
    bb_steps_free(&t);
}

/* Two groups a step (ncclGroupEnd twice, around different calls) and no
 * call outside a group: GroupEnd opens steps, but only the GroupEnd of the
 * same group content repeats once per step. */
static void test_steps_two_groups_per_step(void **state)
{
    (void)state;
    bb_steps t;
    tracker(&t, 300, 1);
    tsc_event d[4];
    tsc_desc_nccl_call ge = {.op = TSC_NCCL_GROUP_END, .dtype = TSC_DT_NONE,
                             .peer = TSC_NO_PEER};
    size_t n = tsc_encode_desc(d, 4, TSC_DESC_NCCL_CALL, 3, &ge, sizeof ge);
    bb_steps_take(&t, 9, d, n);
    uint64_t ns = 1000000000;
    for (int k = 0; k < 20; k++) {
        tsc_event e[4];
        for (int g = 0; g < 2; g++) {
            e[2 * g] = call((uint32_t)(1 + g), ns, ns + 10, (uint64_t)(2 * k + g));
            e[2 * g].flags = TSC_NCCL_F_IN_GROUP;
            e[2 * g + 1] = call(3, ns + 10, ns + 1000, 0);
            ns += 5000;
        }
        bb_steps_take(&t, 9, e, 4);
    }
    assert_true(t.have_opener && !t.opener_sequenced);
    assert_int_equal(t.closed, 20); /* one step per iteration, not two */
    assert_int_equal(bb_steps_seq(&t, 5), -1); /* GroupEnd: no sequence number to match */
    bb_steps_free(&t);
}

/* GPU and GEMM figures: every iteration launches a kernel (2 us on the
 * GPU), copies the batch host-to-device 7 us after the kernel ended, calls
 * one bf16 cuBLAS GEMM of 1e12 FLOPs, then the two AllReduces.  The
 * copies come from the GPU stream after all the host's records (as
 * draining hands them over: separate runs), yet each summarized step has
 * a data stall of exactly 7 us.  On an "H100" (bf16 peak 989.5 TFLOP/s)
 * each step holds one GEMM of 1e12 / 989.5e12 s at peak; folded kernel
 * launches count as GPU busy time; every call is counted by op. */
static void test_steps_gpu_and_op_figures(void **state)
{
    (void)state;
    bb_steps t;
    bb_store store;
    tracker(&t, 300, 1);
    assert_int_equal(bb_store_init(&store, 1 << 20, 1 << 16), 0);
    bb_steps_set_device(&t, "NVIDIA H100 80GB HBM3");
    tsc_desc_gemm g = {.m = 1000, .n = 1000, .k = 1000, .batch = 1, .a_type = 14 /* bf16 */,
                       .c_type = 14, .flops = 1000000000000ull};
    tsc_desc_copy cp = {.dir = TSC_COPY_H2D, .bytes = 1 << 20};
    tsc_event d[8];
    size_t n = tsc_encode_desc(d, 8, TSC_DESC_GEMM, 5, &g, sizeof g);
    n += tsc_encode_desc(d + n, 8 - n, TSC_DESC_COPY, 6, &cp, sizeof cp);
    bb_steps_take(&t, 9, d, n);
    uint64_t T = 5000000000ull;
    tsc_event copies[30];
    for (int k = 0; k < 30; k++, T += 100000) {
        tsc_event e[4] = {
            {.kind = TSC_EV_KERNEL_LAUNCH, .desc = 7, .start_ns = T + 1000,
             .end_ns = TSC_PACK32(2000, 500), .val = 1},
            {.kind = TSC_EV_GEMM, .desc = 5, .start_ns = T + 12000, .end_ns = T + 12100},
            call(1, T + 20000, T + 20100, 2 * (uint64_t)k),
            call(2, T + 20100, T + 20200, 2 * (uint64_t)k + 1)};
        bb_steps_take(&t, 9, e, 4);
        bb_store_take(&store, 9, e, 4);
        copies[k] = (tsc_event){.kind = TSC_EV_MEMCPY, .desc = 6, .start_ns = T + 10000,
                                .end_ns = T + 11000};
    }
    bb_steps_take(&t, 0, copies, 30);
    bb_store_take(&store, 0, copies, 30);
    /* another thread's GEMM of step 1, drained once the opener is known:
     * step 1 still carries times only (its other GEMM was missed) */
    tsc_event late = {.kind = TSC_EV_GEMM, .desc = 5, .start_ns = 5000112000ull,
                      .end_ns = 5000112100ull};
    bb_steps_take(&t, 10, &late, 1);
    tsc_step_summary s[64];
    bb_step_extra x[64];
    size_t got = bb_steps_pop(&t, UINT64_MAX, s, x, 64);
    assert_int_equal(got, 30); /* steps 0-29 closed; 30 is open */
    bb_stall_fill(&store, &t, s, x, got, s[0].start_ns);
    for (size_t i = 2; i < got; i++) {
        assert_int_equal(x[i].gemm_flops, 1000000000000ull);
        assert_int_equal(x[i].gemm_peak_ns, 1010611); /* 1e12 / 989.5e12 s, rounded */
        assert_int_equal(x[i].gemm_no_peak, 0);
        assert_int_equal(x[i].data_stall_ns, 7000);
        assert_int_equal(x[i].h2d_copies, 1);
        assert_int_equal(s[i].gpu_busy_ns, 2000);
    }
    assert_int_equal(t.op_calls[TSC_NCCL_ALLREDUCE], 60); /* every call, steps 0-1 too */
    assert_int_equal(t.op_bytes[TSC_NCCL_ALLREDUCE], 30ull * (4096 + 16384));
    assert_int_equal(t.gemms, 31);
    assert_int_equal(t.gpu_copies, 30);
    /* as written: steps 2-29, all measured; steps 0 and 1 carry none */
    tsc_step_extra xr[64];
    assert_int_equal(x[0].gemm_flops + x[1].gemm_flops + x[1].data_stall_ns, 0);
    assert_int_equal(bb_steps_extra_records(&t, s, x, got, xr), got - 2);
    for (size_t i = 2; i < got; i++) {
        const tsc_step_extra *w = &xr[i - 2];
        assert_int_equal(w->step, i);
        assert_int_equal(w->flags, TSC_STEP_X_STALL | TSC_STEP_X_GEMM | TSC_STEP_X_PEAK);
        assert_true(w->data_stall_ns == 7000 && w->gemm_flops == 1000000000000ull &&
                    w->gemm_peak_ns == 1010611 && w->h2d_copies == 1 && w->gemm_no_peak == 0);
    }
    /* an unknown device: the FLOPs stay, the time at peak is unknown */
    bb_steps_set_device(&t, "Some Future GPU");
    tsc_event e = {.kind = TSC_EV_GEMM, .desc = 5, .start_ns = T + 12000, .end_ns = T + 12100};
    bb_steps_take(&t, 9, &e, 1);
    tsc_event c1 = call(1, T + 20000, T + 20100, 60);
    bb_steps_take(&t, 9, &c1, 1);
    assert_int_equal(bb_steps_pop(&t, UINT64_MAX, s, x, 64), 1);
    assert_int_equal(x[0].gemm_flops, 1000000000000ull);
    assert_int_equal(x[0].gemm_no_peak, 1);
    assert_int_equal(x[0].gemm_peak_ns, 0);
    assert_int_equal(bb_steps_extra_records(&t, s, x, 1, xr), 1);
    assert_int_equal(xr[0].flags, TSC_STEP_X_STALL | TSC_STEP_X_GEMM); /* no time at peak */
    assert_int_equal(xr[0].gemm_no_peak, 1);
    bb_steps_free(&t);
    bb_store_free(&store);
}

static void test_store_bounded_and_range(void **state)
{
    (void)state;
    bb_store s;
    assert_int_equal(bb_store_init(&s, 1024 * 32, 4096), 0); /* 1024 slots */
    tsc_event d[4];
    size_t nd = desc_slots(d, 1, 4096);
    assert_int_equal(bb_store_take(&s, 11, d, nd), 0); /* a descriptor is no event */
    for (uint64_t i = 0; i < 3000; i += 10) {
        tsc_event ev[10];
        for (int j = 0; j < 10; j++)
            ev[j] = call(1, (i + (uint64_t)j + 1) * 1000, (i + (uint64_t)j + 1) * 1000 + 500,
                         i + (uint64_t)j);
        assert_int_equal(bb_store_take(&s, 11, ev, 10), 10);
    }
    /* 1024 slots of 11-slot blocks: the newest 93 blocks stay */
    assert_true(s.head - s.tail <= 1024);
    assert_int_equal(s.oldest_ns, (3000 - 93 * 10 + 1) * 1000);
    bb_store_evict_before(&s, 2500 * 1000);
    assert_int_equal(s.oldest_ns, 2491 * 1000); /* the block holding 2500 stays */
    char path[] = "/tmp/bbstoreXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path); /* the writer creates its file exclusively */
    tsc_dump dump = {.fd = -1};
    assert_int_equal(tsc_dump_open_path(&dump, path, 1, 1), 0);
    /* events that started in (2600 us, 2700 us] */
    assert_int_equal(bb_store_write_range(&s, &dump, 2600 * 1000, 2700 * 1000), 100);
    tsc_dump_close(&dump);
    unlink(path);
    bb_store_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trigger_parse),
        cmocka_unit_test(test_trigger_names_and_publish),
        cmocka_unit_test(test_steps_opener_bounds_sums),
        cmocka_unit_test(test_steps_two_groups_per_step),
        cmocka_unit_test(test_steps_gpu_and_op_figures),
        cmocka_unit_test(test_store_bounded_and_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
