/* Device properties and CUDA versions into the dump's metadata, through
 * the driver API resolved with dlsym once CUDA is initialised (the preload
 * links no CUDA library). */
#ifndef TSC_DEVICE_META_H
#define TSC_DEVICE_META_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsc_device_info {
    char name[128];
    int sm_count;
    int clock_khz;
    int mem_clock_khz;
    int cc_major, cc_minor;
    uint64_t mem_bytes;
} tsc_device_info;

/* Pure: "13000" -> "13.0", 12080 -> "12.8" (CUDA's 1000*major + 10*minor). */
size_t tsc_cuda_version_text(int code, char *buf, size_t cap);

/* Pure: the metadata pairs for one device.  primary: also write the
 * un-numbered keys (device_name, ...).  Calls set(key, value) per pair. */
void tsc_device_meta_emit(int index, const tsc_device_info *d, int primary,
                          void (*set)(const char *key, const char *value));

/* Query the driver (and the runtime if loaded) and write every device's
 * metadata; primary_device is the first context's device (-1: device 0).
 * Returns the number of devices written, -1 if the driver is not
 * reachable.  Must not run inside cuInit. */
int tsc_device_meta_collect(int primary_device);

#endif
