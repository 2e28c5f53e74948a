/* The few NVML entry points the telemetry sampler uses, declared here (no
 * nvml.h needed) and resolved by name from libnvidia-ml.so.1 at run time.
 * Only nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 and
 * nvmlDeviceGetHandleByIndex_v2 are required; each metric's function is
 * optional and its metric is simply absent when the library lacks it. */
#ifndef TSC_NVML_API_H
#define TSC_NVML_API_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

typedef struct tsc_nvml tsc_nvml; /* opaque: a loaded library and one device */

/* One sample: values in the units of enum tsc_gpu_metric; bit m of `have`
 * set when metric m was read. */
typedef struct tsc_gpu_sample {
    uint32_t have;
    uint64_t v[TSC_GPU_METRIC_COUNT];
} tsc_gpu_sample;

/* dlopen `lib`, resolve the entry points, nvmlInit_v2.  NULL with the
 * reason in why (for the nvml_status metadata line) on failure. */
tsc_nvml *tsc_nvml_open(const char *lib, char *why, size_t cap);

/* Choose the device of this process: the CUDA_VISIBLE_DEVICES entry at
 * local_rank (an index or a GPU UUID), else local_rank itself, else 0.
 * Fills name (may be empty); returns the NVML index or -1. */
int tsc_nvml_pick(tsc_nvml *n, int local_rank, const char *visible, char *name, size_t cap);

/* Maximum SM clock of the picked device in MHz, 0 unknown. */
unsigned tsc_nvml_max_sm_clock(const tsc_nvml *n);

/* Reads every metric of the picked device; XID events are counted in n.
 * with_health: also the health counters (metrics 17-28: NVLink, retired
 * pages, remapped rows, aggregate ECC), a dozen more NVML calls the caller
 * makes at a slower pace; without it they are not read (absent in s). */
void tsc_nvml_sample(tsc_nvml *n, tsc_gpu_sample *s, int with_health);

/* nvmlShutdown and dlclose. */
void tsc_nvml_close(tsc_nvml *n);

/* The metrics of cur worth recording against prev (all of cur's when prev
 * is NULL): exact for clocks, temperature, reasons, ECC and PCIe; power within
 * 5 W, utilisation within 5 points and memory within 64 MiB count as
 * unchanged, so the dump keeps only real changes.  Writes metric ids and
 * values, returns how many (at most TSC_GPU_METRIC_COUNT). */
size_t tsc_gpu_changes(const tsc_gpu_sample *prev, const tsc_gpu_sample *cur,
                       uint16_t *metric, uint64_t *value);

#endif
