/* NVML through dlopen (nvml_api.h). */
#include "nvml_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nvml.h values used here (stable ABI). */
typedef int nvml_ret;
typedef void *nvml_dev;
enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMP_GPU = 0,
       NVML_ERR_UNCORRECTED = 1, NVML_ECC_VOLATILE = 0 };
typedef struct { unsigned gpu, memory; } nvml_util;
typedef struct { unsigned long long total, free, used; } nvml_memory;
/* nvmlEventData_t */
typedef struct {
    nvml_dev device;
    unsigned long long type, data;
    unsigned gpu_instance, compute_instance;
} nvml_event;
enum { NVML_EVENT_XID = 0x8 };   /* nvmlEventTypeXidCriticalError */

struct tsc_nvml {
    void *lib;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*by_index)(unsigned, nvml_dev *);
    nvml_ret (*by_uuid)(const char *, nvml_dev *);
    nvml_ret (*index_of)(nvml_dev, unsigned *);
    nvml_ret (*name)(nvml_dev, char *, unsigned);
    nvml_ret (*clock)(nvml_dev, int, unsigned *);
    nvml_ret (*max_clock)(nvml_dev, int, unsigned *);
    nvml_ret (*power)(nvml_dev, unsigned *);
    nvml_ret (*temp)(nvml_dev, int, unsigned *);
    nvml_ret (*reasons)(nvml_dev, unsigned long long *);
    nvml_ret (*util)(nvml_dev, nvml_util *);
    nvml_ret (*memory)(nvml_dev, nvml_memory *);
    nvml_ret (*ecc)(nvml_dev, int, int, unsigned long long *);
    nvml_ret (*pcie[5])(nvml_dev, unsigned *);   /* in the order of pcie_syms */
    nvml_ret (*set_create)(void **);
    nvml_ret (*set_free)(void *);
    nvml_ret (*register_events)(nvml_dev, unsigned long long, void *);
    nvml_ret (*set_wait)(void *, nvml_event *, unsigned);
    void *xid_set;              /* XID events of dev, NULL when unsupported */
    uint64_t xid_events, xid_last;
    nvml_dev dev;
};

#define RESOLVE(n, field, sym) (*(void **)&(n)->field = dlsym((n)->lib, sym))

/* The PCIe link's entry points, metric by metric (TSC_GPU_PCIE_GEN + i). */
static const char *const pcie_syms[5] = {
    "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetPcieReplayCounter"};

tsc_nvml *tsc_nvml_open(const char *lib, char *why, size_t cap)
{
    tsc_nvml *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        snprintf(why, cap, "%s not found (no NVIDIA driver)", lib);
        free(n);
        return NULL;
    }
    static const char *const required[] = {"nvmlInit_v2", "nvmlShutdown",
                                           "nvmlDeviceGetCount_v2",
                                           "nvmlDeviceGetHandleByIndex_v2"};
    void **slots[] = {(void **)&n->init, (void **)&n->shutdown, (void **)&n->count,
                      (void **)&n->by_index};
    for (size_t i = 0; i < 4; i++) {
        *slots[i] = dlsym(n->lib, required[i]);
        if (!*slots[i]) {
            snprintf(why, cap, "%s lacks %s", lib, required[i]);
            dlclose(n->lib);
            free(n);
            return NULL;
        }
    }
    RESOLVE(n, by_uuid, "nvmlDeviceGetHandleByUUID");
    RESOLVE(n, index_of, "nvmlDeviceGetIndex");
    RESOLVE(n, name, "nvmlDeviceGetName");
    RESOLVE(n, clock, "nvmlDeviceGetClockInfo");
    RESOLVE(n, max_clock, "nvmlDeviceGetMaxClockInfo");
    RESOLVE(n, power, "nvmlDeviceGetPowerUsage");
    RESOLVE(n, temp, "nvmlDeviceGetTemperature");
    /* Renamed "clock events" in CUDA 12.2; the old name stays exported. */
    if (!RESOLVE(n, reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        RESOLVE(n, reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    RESOLVE(n, util, "nvmlDeviceGetUtilizationRates");
    RESOLVE(n, memory, "nvmlDeviceGetMemoryInfo");
    RESOLVE(n, ecc, "nvmlDeviceGetTotalEccErrors");
    for (int i = 0; i < 5; i++)
        RESOLVE(n, pcie[i], pcie_syms[i]);
    RESOLVE(n, set_create, "nvmlEventSetCreate");
    RESOLVE(n, set_free, "nvmlEventSetFree");
    RESOLVE(n, register_events, "nvmlDeviceRegisterEvents");
    RESOLVE(n, set_wait, "nvmlEventSetWait_v2");
    nvml_ret rc = n->init();
    if (rc != NVML_OK) {
        snprintf(why, cap, "nvmlInit_v2 failed (%d)", rc);
        dlclose(n->lib);
        free(n);
        return NULL;
    }
    return n;
}

/* Critical XID events of the picked device, read without waiting at each
 * sample (the sampler thread must never block on NVML). */
static void watch_xids(tsc_nvml *n)
{
    if (n->xid_set && n->set_free)
        n->set_free(n->xid_set);
    n->xid_set = NULL;
    n->xid_events = n->xid_last = 0;
    if (!n->set_create || !n->register_events || !n->set_wait || !n->set_free ||
        n->set_create(&n->xid_set) != NVML_OK)
        return;
    if (n->register_events(n->dev, NVML_EVENT_XID, n->xid_set) != NVML_OK) {
        n->set_free(n->xid_set);
        n->xid_set = NULL;
    }
}

int tsc_nvml_pick(tsc_nvml *n, int local_rank, const char *visible, char *name, size_t cap)
{
    unsigned count = 0;
    if (n->count(&count) != NVML_OK || count == 0)
        return -1;
    int lr = local_rank >= 0 ? local_rank : 0;
    /* The local_rank-th entry of CUDA_VISIBLE_DEVICES, when set. */
    char entry[96] = "";
    if (visible && *visible) {
        const char *p = visible;
        for (int i = 0; i < lr && p; i++) {
            p = strchr(p, ',');
            if (p)
                p++;
        }
        if (p) {
            size_t l = strcspn(p, ",");
            if (l < sizeof entry) {
                memcpy(entry, p, l);
                entry[l] = 0;
            }
        }
    }
    n->dev = NULL;
    unsigned idx = (unsigned)lr;
    if (entry[0] >= '0' && entry[0] <= '9') {
        idx = (unsigned)strtoul(entry, NULL, 10);
    } else if (entry[0] && n->by_uuid && n->by_uuid(entry, &n->dev) == NVML_OK) {
        if (!n->index_of || n->index_of(n->dev, &idx) != NVML_OK)
            idx = 0;
    }
    if (!n->dev) {
        if (idx >= count)
            idx = 0;
        if (n->by_index(idx, &n->dev) != NVML_OK) {
            n->dev = NULL;
            return -1;
        }
    }
    watch_xids(n);
    if (cap) {
        name[0] = 0;
        if (n->name && n->name(n->dev, name, (unsigned)cap) != NVML_OK)
            name[0] = 0;
        name[cap - 1] = 0;
    }
    return (int)idx;
}

unsigned tsc_nvml_max_sm_clock(const tsc_nvml *n)
{
    unsigned mhz = 0;
    if (!n->dev || !n->max_clock || n->max_clock(n->dev, NVML_CLOCK_SM, &mhz) != NVML_OK)
        return 0;
    return mhz;
}

static void put(tsc_gpu_sample *s, int m, uint64_t v)
{
    s->have |= 1u << m;
    s->v[m] = v;
}

void tsc_nvml_sample(tsc_nvml *n, tsc_gpu_sample *s)
{
    memset(s, 0, sizeof *s);
    if (!n->dev)
        return;
    unsigned u;
    unsigned long long ull;
    if (n->clock && n->clock(n->dev, NVML_CLOCK_SM, &u) == NVML_OK)
        put(s, TSC_GPU_SM_CLOCK_MHZ, u);
    if (n->clock && n->clock(n->dev, NVML_CLOCK_MEM, &u) == NVML_OK)
        put(s, TSC_GPU_MEM_CLOCK_MHZ, u);
    if (n->power && n->power(n->dev, &u) == NVML_OK)
        put(s, TSC_GPU_POWER_MW, u);
    if (n->temp && n->temp(n->dev, NVML_TEMP_GPU, &u) == NVML_OK)
        put(s, TSC_GPU_TEMP_C, u);
    if (n->reasons && n->reasons(n->dev, &ull) == NVML_OK)
        put(s, TSC_GPU_CLOCK_REASONS, ull);
    nvml_util ut;
    if (n->util && n->util(n->dev, &ut) == NVML_OK) {
        put(s, TSC_GPU_UTIL_PCT, ut.gpu);
        put(s, TSC_GPU_MEM_UTIL_PCT, ut.memory);
    }
    nvml_memory mem;
    if (n->memory && n->memory(n->dev, &mem) == NVML_OK)
        put(s, TSC_GPU_MEM_USED_BYTES, mem.used);
    if (n->ecc && n->ecc(n->dev, NVML_ERR_UNCORRECTED, NVML_ECC_VOLATILE, &ull) == NVML_OK)
        put(s, TSC_GPU_ECC_UNCORRECTED, ull);
    for (int i = 0; i < 5; i++)
        if (n->pcie[i] && n->pcie[i](n->dev, &u) == NVML_OK)
            put(s, TSC_GPU_PCIE_GEN + i, u);
    if (n->xid_set) {
        nvml_event e;
        /* a bounded drain: a flood of events must not hold the sampler */
        for (int i = 0; i < 16 && n->set_wait(n->xid_set, &e, 0) == NVML_OK; i++)
            if (e.type & NVML_EVENT_XID) {
                n->xid_events++;
                n->xid_last = e.data;
            }
        put(s, TSC_GPU_XID_EVENTS, n->xid_events);
        if (n->xid_events)
            put(s, TSC_GPU_XID_LAST, n->xid_last);
    }
}

void tsc_nvml_close(tsc_nvml *n)
{
    if (!n)
        return;
    if (n->xid_set)
        n->set_free(n->xid_set);
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

static uint64_t deadband(int m)
{
    switch (m) {
    case TSC_GPU_POWER_MW: return 5000;
    case TSC_GPU_UTIL_PCT: case TSC_GPU_MEM_UTIL_PCT: return 5;
    case TSC_GPU_MEM_USED_BYTES: return 64ull << 20;
    default: return 0;
    }
}

size_t tsc_gpu_changes(const tsc_gpu_sample *prev, const tsc_gpu_sample *cur,
                       uint16_t *metric, uint64_t *value)
{
    size_t k = 0;
    for (int m = 1; m < TSC_GPU_METRIC_COUNT; m++) {
        if (!(cur->have & (1u << m)))
            continue;
        if (prev && (prev->have & (1u << m))) {
            uint64_t a = prev->v[m], b = cur->v[m];
            uint64_t d = a > b ? a - b : b - a;
            if (d == 0 || d < deadband(m))
                continue;
        }
        metric[k] = (uint16_t)m;
        value[k] = cur->v[m];
        k++;
    }
    return k;
}
