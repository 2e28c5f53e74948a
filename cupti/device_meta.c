/* Device metadata; see device_meta.h. */
#include "device_meta.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "recorder.h"

size_t tsc_cuda_version_text(int code, char *buf, size_t cap)
{
    int n = code > 0 ? snprintf(buf, cap, "%d.%d", code / 1000, (code % 1000) / 10)
                     : snprintf(buf, cap, "unknown");
    if (n < 0 || cap == 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

void tsc_device_meta_emit(int index, const tsc_device_info *d, int primary,
                          void (*set)(const char *key, const char *value))
{
    char key[64], val[160];
    struct {
        const char *suffix;
        const char *plain;
    } k[] = {
        {"name", "device_name"},       {"sm_count", "device_sm_count"},
        {"clock_khz", "device_clock_khz"}, {"mem_bytes", "device_mem_bytes"},
        {"mem_clock_khz", NULL},       {"compute_capability", NULL},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        switch (i) {
        case 0: snprintf(val, sizeof val, "%s", d->name); break;
        case 1: snprintf(val, sizeof val, "%d", d->sm_count); break;
        case 2: snprintf(val, sizeof val, "%d", d->clock_khz); break;
        case 3: snprintf(val, sizeof val, "%llu", (unsigned long long)d->mem_bytes); break;
        case 4: snprintf(val, sizeof val, "%d", d->mem_clock_khz); break;
        default: snprintf(val, sizeof val, "%d.%d", d->cc_major, d->cc_minor); break;
        }
        snprintf(key, sizeof key, "device.%d.%s", index, k[i].suffix);
        set(key, val);
        if (primary && k[i].plain != NULL)
            set(k[i].plain, val);
    }
}

typedef CUresult (*get_int_fn)(int *);
typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*dev_name_fn)(char *, int, CUdevice);
typedef CUresult (*dev_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*dev_mem_fn)(size_t *, CUdevice);
typedef int (*rt_version_fn)(int *);

int tsc_device_meta_collect(int primary_device)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == NULL)
        return -1;
    get_int_fn driver_version = (get_int_fn)dlsym(cuda, "cuDriverGetVersion");
    get_int_fn device_count = (get_int_fn)dlsym(cuda, "cuDeviceGetCount");
    dev_get_fn device_get = (dev_get_fn)dlsym(cuda, "cuDeviceGet");
    dev_name_fn device_name = (dev_name_fn)dlsym(cuda, "cuDeviceGetName");
    dev_attr_fn device_attr = (dev_attr_fn)dlsym(cuda, "cuDeviceGetAttribute");
    dev_mem_fn device_mem = (dev_mem_fn)dlsym(cuda, "cuDeviceTotalMem_v2");
    char text[32];
    int v = 0;
    if (driver_version && driver_version(&v) == CUDA_SUCCESS) {
        tsc_cuda_version_text(v, text, sizeof text);
        tsc_rec_meta(TSC_META_CUDA_DRIVER, text);
    }
    /* The runtime is whatever the application loaded (PyTorch: its own
     * libcudart); RTLD_DEFAULT finds it without loading another. */
    rt_version_fn rt_version = (rt_version_fn)dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
    if (rt_version && rt_version(&v) == 0) {
        tsc_cuda_version_text(v, text, sizeof text);
        tsc_rec_meta(TSC_META_CUDA_RUNTIME, text);
    }
    int n = 0;
    if (!device_count || !device_get || !device_name || !device_attr ||
        device_count(&n) != CUDA_SUCCESS) {
        dlclose(cuda);
        return -1;
    }
    if (primary_device < 0 || primary_device >= n)
        primary_device = 0;
    for (int i = 0; i < n && i < 64; i++) {
        CUdevice dev;
        tsc_device_info d;
        memset(&d, 0, sizeof d);
        if (device_get(&dev, i) != CUDA_SUCCESS)
            continue;
        if (device_name(d.name, (int)sizeof d.name - 1, dev) != CUDA_SUCCESS)
            snprintf(d.name, sizeof d.name, "unknown");
        device_attr(&d.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
        device_attr(&d.clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
        device_attr(&d.mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
        device_attr(&d.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        device_attr(&d.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        size_t mem = 0;
        if (device_mem && device_mem(&mem, dev) == CUDA_SUCCESS)
            d.mem_bytes = mem;
        tsc_device_meta_emit(i, &d, i == primary_device, tsc_rec_meta);
    }
    dlclose(cuda);
    return n;
}
