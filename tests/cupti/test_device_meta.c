/* Pure parts of the device metadata: version text and key layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "device_meta.h"
#include "fake_recorder.h"
#include "recorder.h"

static void versions(void **state)
{
    (void)state;
    char buf[16];
    assert_int_equal(tsc_cuda_version_text(13000, buf, sizeof buf), 4);
    assert_string_equal(buf, "13.0");
    tsc_cuda_version_text(12080, buf, sizeof buf);
    assert_string_equal(buf, "12.8");
    tsc_cuda_version_text(13010, buf, sizeof buf);
    assert_string_equal(buf, "13.1");
    tsc_cuda_version_text(0, buf, sizeof buf);
    assert_string_equal(buf, "unknown");
    tsc_cuda_version_text(-5, buf, sizeof buf);
    assert_string_equal(buf, "unknown");
    char tiny[3];
    assert_int_equal(tsc_cuda_version_text(13000, tiny, sizeof tiny), 2);
    assert_string_equal(tiny, "13");
}

static void meta_keys(void **state)
{
    (void)state;
    fake_reset();
    tsc_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    d.sm_count = 132;
    d.clock_khz = 1980000;
    d.mem_clock_khz = 2619000;
    d.cc_major = 9;
    d.cc_minor = 0;
    d.mem_bytes = 85029158912ull;
    tsc_device_meta_emit(0, &d, 0, tsc_rec_meta);
    assert_null(fake_meta(TSC_META_DEVICE_NAME));
    assert_string_equal(fake_meta("device.0.name"), "NVIDIA H100 80GB HBM3");
    assert_string_equal(fake_meta("device.0.sm_count"), "132");
    tsc_device_meta_emit(3, &d, 1, tsc_rec_meta);
    assert_string_equal(fake_meta(TSC_META_DEVICE_NAME), "NVIDIA H100 80GB HBM3");
    assert_string_equal(fake_meta(TSC_META_DEVICE_SM_COUNT), "132");
    assert_string_equal(fake_meta(TSC_META_DEVICE_CLOCK_KHZ), "1980000");
    assert_string_equal(fake_meta(TSC_META_DEVICE_MEM_BYTES), "85029158912");
    assert_string_equal(fake_meta("device.3.mem_clock_khz"), "2619000");
    assert_string_equal(fake_meta("device.3.compute_capability"), "9.0");
    assert_int_equal(fake.n_meta, 6 + 6 + 4);
}

static void no_driver_here(void **state)
{
    (void)state;
    /* Without libcuda loaded, collection says so and writes nothing. */
    fake_reset();
    assert_int_equal(tsc_device_meta_collect(0), -1);
    assert_int_equal(fake.n_meta, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(versions),
        cmocka_unit_test(meta_keys),
        cmocka_unit_test(no_driver_here),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
