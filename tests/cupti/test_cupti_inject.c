/* The injection path on a machine without a GPU: the constructor hook's
 * handling of CUDA_INJECTION64_PATH, InitializeInjection degrading with
 * one message (whatever part of CUDA is missing) and never failing, the
 * hooks being harmless when CUPTI is not running, and the cuptiSubscribe
 * wrapper forwarding to the real CUPTI untouched. */
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cupti.h>

#include "cupti_control.h"
#include "fake_recorder.h"

int InitializeInjection(void);
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

static int setup(void **state)
{
    (void)state;
    fake_reset();
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("TSCOPE_CUPTI");
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("TSCOPE_NVTX");
    return 0;
}

static void sets_injection_path(void **state)
{
    (void)state;
    tsc_cupti_constructor_hook();
    const char *v = getenv("CUDA_INJECTION64_PATH");
    assert_non_null(v);
    /* dladdr of the hook: this test executable, as an absolute path. */
    char self[PATH_MAX];
    assert_non_null(realpath("/proc/self/exe", self));
    assert_string_equal(v, self);
    assert_string_equal(getenv("NVTX_INJECTION64_PATH"), self);
    assert_string_equal(fake_meta(TSC_META_CUPTI_MODE), "full");
    assert_int_equal(fake.warnings, 0);
    assert_int_equal(tsc_cupti_current_mode(), TSC_CUPTI_FULL);
}

static void leaves_foreign_injection(void **state)
{
    (void)state;
    setenv("CUDA_INJECTION64_PATH", "/opt/nsys/libToolsInjection64.so", 1);
    tsc_cupti_constructor_hook();
    assert_string_equal(getenv("CUDA_INJECTION64_PATH"), "/opt/nsys/libToolsInjection64.so");
    assert_null(getenv("NVTX_INJECTION64_PATH"));
    assert_int_equal(fake.warnings, 1);
    assert_string_equal(fake_meta(TSC_META_CUPTI_MODE), "off");
    assert_string_equal(fake_meta(TSC_META_CUPTI_STATUS), "another tool's injection");
}

static void off_and_light(void **state)
{
    (void)state;
    setenv("TSCOPE_CUPTI", "off", 1);
    tsc_cupti_constructor_hook();
    assert_null(getenv("CUDA_INJECTION64_PATH"));
    assert_null(getenv("NVTX_INJECTION64_PATH"));
    assert_string_equal(fake_meta(TSC_META_CUPTI_MODE), "off");
    assert_int_equal(tsc_cupti_current_mode(), TSC_CUPTI_OFF);
    setenv("TSCOPE_CUPTI", "light", 1);
    tsc_cupti_constructor_hook();
    assert_non_null(getenv("CUDA_INJECTION64_PATH"));
    assert_string_equal(fake_meta(TSC_META_CUPTI_MODE), "light");
    setenv("TSCOPE_CUPTI", "bogus", 1);
    unsetenv("CUDA_INJECTION64_PATH");
    tsc_cupti_constructor_hook();
    assert_int_equal(fake.warnings, 1);
    assert_string_equal(fake_meta(TSC_META_CUPTI_MODE), "full");
}

static void nvtx_opt_out_and_nsys(void **state)
{
    (void)state;
    setenv("TSCOPE_NVTX", "off", 1);
    tsc_cupti_constructor_hook();
    assert_non_null(getenv("CUDA_INJECTION64_PATH"));
    assert_null(getenv("NVTX_INJECTION64_PATH"));
    unsetenv("TSCOPE_NVTX");
    unsetenv("CUDA_INJECTION64_PATH");
    setenv("NVTX_INJECTION64_PATH", "/opt/nsys/libToolsInjection64.so", 1);
    tsc_cupti_constructor_hook();
    assert_string_equal(getenv("NVTX_INJECTION64_PATH"), "/opt/nsys/libToolsInjection64.so");
}

static void hooks_harmless_before_start(void **state)
{
    (void)state;
    tsc_cupti_flush_hook(0);
    tsc_cupti_flush_hook(1);
    tsc_cupti_push_extcorr(TSC_EXTCORR_ID(1, 1));
    tsc_cupti_pop_extcorr();
    tsc_cupti_pop_extcorr();
    tsc_cupti_exit_hook();
    /* NVTX asking without an export table is refused, not followed. */
    assert_int_equal(InitializeInjectionNvtx2(NULL), 0);
    assert_int_equal(tsc_cupti_running(), 0);
    assert_int_equal(fake.n_events, 0);
    assert_int_equal(fake.warnings, 0);
}

static void initialize_without_gpu(void **state)
{
    (void)state;
    tsc_cupti_constructor_hook();
    assert_int_equal(InitializeInjection(), 1);
    /* No driver here: CUPTI is either missing or refuses to subscribe;
     * either way one line, a status, and nothing running. */
    const char *status = fake_meta(TSC_META_CUPTI_STATUS);
    assert_non_null(status);
    print_message("cupti_status: %s\n", status);
    if (strcmp(status, "ok") != 0) {
        assert_int_equal(fake.warnings, 1);
        assert_int_equal(tsc_cupti_running(), 0);
    }
    /* Once per process. */
    int warnings = fake.warnings;
    assert_int_equal(InitializeInjection(), 1);
    assert_int_equal(fake.warnings, warnings);
    tsc_cupti_exit_hook();
    tsc_cupti_exit_hook();
}

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);

static void CUPTIAPI no_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c,
                                 const void *data)
{
    (void)u, (void)d, (void)c, (void)data;
}

static void subscribe_wrapper_forwards(void **state)
{
    (void)state;
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL)
        h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        /* No CUPTI at all: the wrapper reports it instead of crashing. */
        CUpti_SubscriberHandle s;
        assert_int_equal(cuptiSubscribe(&s, no_callback, NULL), CUPTI_ERROR_NOT_INITIALIZED);
        skip();
    }
    subscribe_fn real = (subscribe_fn)dlsym(h, "cuptiSubscribe");
    assert_non_null(real);
    assert_ptr_not_equal((void *)real, (void *)cuptiSubscribe);
    CUpti_SubscriberHandle s1 = NULL, s2 = NULL;
    CUptiResult through_wrapper = cuptiSubscribe(&s1, no_callback, NULL);
    typedef CUptiResult (*unsub_fn)(CUpti_SubscriberHandle);
    unsub_fn unsub = (unsub_fn)dlsym(h, "cuptiUnsubscribe");
    if (through_wrapper == CUPTI_SUCCESS)
        unsub(s1);
    CUptiResult direct = real(&s2, no_callback, NULL);
    if (direct == CUPTI_SUCCESS)
        unsub(s2);
    assert_int_equal(through_wrapper, direct);
    dlclose(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(sets_injection_path, setup),
        cmocka_unit_test_setup(leaves_foreign_injection, setup),
        cmocka_unit_test_setup(off_and_light, setup),
        cmocka_unit_test_setup(nvtx_opt_out_and_nsys, setup),
        cmocka_unit_test_setup(hooks_harmless_before_start, setup),
        cmocka_unit_test_setup(initialize_without_gpu, setup),
        cmocka_unit_test_setup(subscribe_wrapper_forwards, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
