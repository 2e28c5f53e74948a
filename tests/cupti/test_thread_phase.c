/* Thread-name phase hints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "thread_phase.h"

static tsc_thread_phase of(const char *name, uint32_t tid, uint32_t pid, int *dev)
{
    return tsc_thread_phase_of(name, name ? strlen(name) : 0, tid, pid, dev);
}

static void autograd_threads(void **state)
{
    (void)state;
    int dev = 99;
    assert_int_equal(of("pt_autograd_0", 5, 1, &dev), TSC_PHASE_BACKWARD);
    assert_int_equal(dev, 0);
    assert_int_equal(of("pt_autograd_7", 5, 1, &dev), TSC_PHASE_BACKWARD);
    assert_int_equal(dev, 7);
    assert_int_equal(of("pt_autograd_123", 5, 1, &dev), TSC_PHASE_BACKWARD);
    assert_int_equal(dev, 123);
    /* Trailing newline as read from /proc. */
    assert_int_equal(of("pt_autograd_3\n", 5, 1, &dev), TSC_PHASE_BACKWARD);
    assert_int_equal(dev, 3);
    /* Not a device suffix. */
    assert_int_equal(of("pt_autograd_", 5, 1, &dev), TSC_PHASE_OTHER);
    assert_int_equal(dev, -1);
    assert_int_equal(of("pt_autograd_x", 5, 1, &dev), TSC_PHASE_OTHER);
    assert_int_equal(of("pt_autograd_1a", 5, 1, &dev), TSC_PHASE_OTHER);
    /* The main thread is forward even if its name looked like autograd's
     * prefix only partially. */
    assert_int_equal(of("pt_autograd", 5, 5, &dev), TSC_PHASE_FORWARD_OPTIMIZER);
}

static void main_and_python(void **state)
{
    (void)state;
    assert_int_equal(of("python", 10, 1, NULL), TSC_PHASE_FORWARD_OPTIMIZER);
    assert_int_equal(of("python3.12", 10, 1, NULL), TSC_PHASE_FORWARD_OPTIMIZER);
    assert_int_equal(of("pt_main_thread", 10, 1, NULL), TSC_PHASE_FORWARD_OPTIMIZER);
    /* Any name on the process's main thread (tid == pid). */
    assert_int_equal(of("train.py", 42, 42, NULL), TSC_PHASE_FORWARD_OPTIMIZER);
    assert_int_equal(of("train.py", 43, 42, NULL), TSC_PHASE_OTHER);
    /* Unknown tids do not match each other. */
    assert_int_equal(of("worker", 0, 0, NULL), TSC_PHASE_OTHER);
}

static void others(void **state)
{
    (void)state;
    assert_int_equal(of("pt_nccl_watchdg", 9, 1, NULL), TSC_PHASE_COMM);
    assert_int_equal(of("NCCL Progress", 9, 1, NULL), TSC_PHASE_COMM);
    assert_int_equal(of("ncclProxy", 9, 1, NULL), TSC_PHASE_COMM);
    assert_int_equal(of("pt_pin_memory", 9, 1, NULL), TSC_PHASE_DATA);
    assert_int_equal(of("cuda-EvtHandlr", 9, 1, NULL), TSC_PHASE_OTHER);
    assert_int_equal(of("", 9, 1, NULL), TSC_PHASE_OTHER);
    assert_int_equal(of(NULL, 9, 1, NULL), TSC_PHASE_OTHER);
    /* Length-bounded: the name is not NUL-terminated within name_len. */
    char raw[16];
    memcpy(raw, "pt_autograd_2XYZ", 16);
    int dev = -5;
    assert_int_equal(tsc_thread_phase_of(raw, 13, 5, 1, &dev), TSC_PHASE_BACKWARD);
    assert_int_equal(dev, 2);
}

static void names(void **state)
{
    (void)state;
    assert_string_equal(tsc_thread_phase_name(TSC_PHASE_BACKWARD), "backward");
    assert_string_equal(tsc_thread_phase_name(TSC_PHASE_FORWARD_OPTIMIZER), "forward_optimizer");
    assert_string_equal(tsc_thread_phase_name(TSC_PHASE_COMM), "comm");
    assert_string_equal(tsc_thread_phase_name(TSC_PHASE_DATA), "data");
    assert_string_equal(tsc_thread_phase_name(TSC_PHASE_OTHER), "other");
    assert_string_equal(tsc_thread_phase_name((tsc_thread_phase)77), "other");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(autograd_threads),
        cmocka_unit_test(main_and_python),
        cmocka_unit_test(others),
        cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
