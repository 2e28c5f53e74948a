/* Which API records are kept, per mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "cbid_filter.h"
#include "tsc_format.h"

static void cuda13_launches(void **state)
{
    (void)state;
    /* nvcc's <<<>>> in CUDA 13 and NCCL 2.28's launcher, by number too. */
    assert_int_equal(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 505);
    assert_int_equal(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, 506);
    assert_true(tsc_api_wanted(TSC_API_RUNTIME, 505, TSC_CUPTI_FULL));
    assert_true(tsc_api_wanted(TSC_API_RUNTIME, 506, TSC_CUPTI_FULL));
    const tsc_api_entry *e = tsc_api_lookup(TSC_API_RUNTIME, 505);
    assert_non_null(e);
    assert_string_equal(e->name, "__cudaLaunchKernel");
    assert_int_equal(e->cls, TSC_APICLASS_LAUNCH);
    e = tsc_api_lookup(TSC_API_RUNTIME, 506);
    assert_string_equal(e->name, "__cudaLaunchKernel_ptsz");

    e = tsc_api_lookup(TSC_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
    assert_non_null(e);
    assert_string_equal(e->name, "cuLaunchKernelEx");
    assert_int_equal(e->cls, TSC_APICLASS_NCCL_LAUNCH);
    assert_true(tsc_api_wanted(TSC_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                               TSC_CUPTI_FULL));
    assert_true(tsc_api_wanted(TSC_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                               TSC_CUPTI_LIGHT));
    assert_true(tsc_api_wanted(TSC_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                               TSC_CUPTI_FULL));
    assert_true(tsc_api_wanted(TSC_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                               TSC_CUPTI_FULL));
    assert_true(tsc_api_wanted(TSC_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
                               TSC_CUPTI_FULL));
}

static void modes(void **state)
{
    (void)state;
    /* Light drops plain launches but keeps copies, memsets and syncs. */
    assert_false(tsc_api_wanted(TSC_API_RUNTIME, 505, TSC_CUPTI_LIGHT));
    assert_false(tsc_api_wanted(TSC_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                TSC_CUPTI_LIGHT));
    assert_true(tsc_api_wanted(TSC_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                               TSC_CUPTI_LIGHT));
    assert_true(tsc_api_wanted(TSC_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                               TSC_CUPTI_LIGHT));
    assert_true(tsc_api_wanted(TSC_API_RUNTIME,
                               CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                               TSC_CUPTI_LIGHT));
    assert_true(tsc_api_wanted(TSC_API_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
                               TSC_CUPTI_LIGHT));
    /* Off keeps nothing. */
    assert_false(tsc_api_wanted(TSC_API_RUNTIME, 505, TSC_CUPTI_OFF));
    assert_false(tsc_api_wanted(TSC_API_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                                TSC_CUPTI_OFF));
}

static void excluded(void **state)
{
    (void)state;
    /* Getters and allocations stay out of the dump. */
    const uint32_t rt_out[] = {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
                               CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                               CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
                               CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
                               CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
                               CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, 0, 100000};
    for (size_t i = 0; i < sizeof rt_out / sizeof rt_out[0]; i++) {
        assert_false(tsc_api_wanted(TSC_API_RUNTIME, rt_out[i], TSC_CUPTI_FULL));
        assert_null(tsc_api_lookup(TSC_API_RUNTIME, rt_out[i]));
    }
    const uint32_t drv_out[] = {CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
                                CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
                                CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress, 0};
    for (size_t i = 0; i < sizeof drv_out / sizeof drv_out[0]; i++)
        assert_false(tsc_api_wanted(TSC_API_DRIVER, drv_out[i], TSC_CUPTI_FULL));
    /* Domains are not mixed up: runtime 505 is not a driver call. */
    const tsc_api_entry *e = tsc_api_lookup(TSC_API_DRIVER, 505);
    assert_true(e == NULL || strncmp(e->name, "cu", 2) == 0);
    assert_null(tsc_api_lookup(0, 505));
    assert_null(tsc_api_lookup(7, 505));
}

static void table_consistent(void **state)
{
    (void)state;
    size_t n;
    const tsc_api_entry *t = tsc_api_table(&n);
    assert_true(n > 150);
    size_t device_syncs = 0;
    for (size_t i = 0; i < n; i++) {
        /* Every entry is found again by lookup, names match the domain. */
        assert_ptr_equal(tsc_api_lookup(t[i].domain, t[i].cbid), &t[i]);
        if (t[i].domain == TSC_API_RUNTIME)
            assert_true(strncmp(t[i].name, "cuda", 4) == 0 ||
                        strncmp(t[i].name, "__cuda", 6) == 0);
        else
            assert_true(strncmp(t[i].name, "cu", 2) == 0 && t[i].name[2] != 'd');
        assert_true(t[i].cls >= TSC_APICLASS_LAUNCH && t[i].cls <= TSC_APICLASS_GRAPH_LAUNCH);
        /* Graph launches, and only they, are of the graph class. */
        assert_int_equal(t[i].cls == TSC_APICLASS_GRAPH_LAUNCH, strstr(t[i].name, "GraphLaunch") != NULL);
        /* No version suffix in runtime names. */
        assert_null(strstr(t[i].name, "_v3020"));
        device_syncs += t[i].is_device_sync;
        for (size_t j = i + 1; j < n; j++)
            assert_false(t[i].domain == t[j].domain && t[i].cbid == t[j].cbid);
    }
    /* cudaDeviceSynchronize and cudaThreadSynchronize (cuCtxSynchronize is a context sync). */
    assert_int_equal(device_syncs, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda13_launches),
        cmocka_unit_test(modes),
        cmocka_unit_test(excluded),
        cmocka_unit_test(table_consistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
