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
       NVML_ERR_CORRECTED = 0, NVML_ERR_UNCORRECTED = 1, NVML_ECC_VOLATILE = 0,
       NVML_ECC_AGGREGATE = 1, NVML_INSUFFICIENT_SIZE = 7 };
/* nvmlNvLinkErrorCounter_t: replay, recovery, CRC (flit), CRC (data) */
enum { NVML_NVLINK_REPLAY = 0, NVML_NVLINK_RECOVERY = 1, NVML_NVLINK_CRC_FLIT = 2,
       NVML_NVLINK_CRC_DATA = 3 };
/* NVML_NVLINK_MAX_LINKS of recent drivers; older devices have fewer */
#define NVLINK_MAX 18
/* nvmlPageRetirementCause_t: multiple single-bit, double-bit ECC errors */
enum { NVML_RETIRED_SBE = 0, NVML_RETIRED_DBE = 1 };
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
    nvml_ret (*nvlink_state)(nvml_dev, unsigned, int *);   /* nvmlEnableState_t */
    nvml_ret (*nvlink_errors)(nvml_dev, unsigned, int, unsigned long long *);
    nvml_ret (*retired)(nvml_dev, int, unsigned *, unsigned long long *);
    nvml_ret (*retired_pending)(nvml_dev, int *);
    nvml_ret (*remapped)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
    uint32_t nvlinks;           /* bit l: link l of dev answers (found at pick) */
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
    RESOLVE(n, nvlink_state, "nvmlDeviceGetNvLinkState");
    RESOLVE(n, nvlink_errors, "nvmlDeviceGetNvLinkErrorCounter");
    RESOLVE(n, retired, "nvmlDeviceGetRetiredPages");
    RESOLVE(n, retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
    RESOLVE(n, remapped, "nvmlDeviceGetRemappedRows");
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

/* The NVLink links of the picked device: those whose state it reports
 * (probed once; each sample then reads only these). */
static void find_nvlinks(tsc_nvml *n)
{
    n->nvlinks = 0;
    int active;
    for (unsigned l = 0; n->nvlink_state && l < NVLINK_MAX; l++)
        if (n->nvlink_state(n->dev, l, &active) == NVML_OK)
            n->nvlinks |= 1u << l;
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
    find_nvlinks(n);
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

/* NVLink states and error counters summed over the links. */
static void sample_nvlinks(tsc_nvml *n, tsc_gpu_sample *s)
{
    static const int counters[4] = {NVML_NVLINK_REPLAY, NVML_NVLINK_RECOVERY,
                                    NVML_NVLINK_CRC_FLIT, NVML_NVLINK_CRC_DATA};
    static const int metric[4] = {TSC_GPU_NVLINK_REPLAYS, TSC_GPU_NVLINK_RECOVERIES,
                                  TSC_GPU_NVLINK_CRC, TSC_GPU_NVLINK_CRC};
    uint64_t links = 0, active = 0, sum[TSC_GPU_METRIC_COUNT] = {0};
    uint32_t read = 0;
    for (unsigned l = 0; l < NVLINK_MAX; l++) {
        int on;
        if (!(n->nvlinks >> l & 1) || n->nvlink_state(n->dev, l, &on) != NVML_OK)
            continue;
        links++;
        active += on == 1;
        for (int c = 0; c < 4 && n->nvlink_errors; c++) {
            unsigned long long v;
            if (n->nvlink_errors(n->dev, l, counters[c], &v) == NVML_OK) {
                sum[metric[c]] += v;
                read |= 1u << metric[c];
            }
        }
    }
    if (!links)
        return;
    put(s, TSC_GPU_NVLINK_LINKS, links);
    put(s, TSC_GPU_NVLINK_ACTIVE, active);
    for (int m = TSC_GPU_NVLINK_REPLAYS; m <= TSC_GPU_NVLINK_CRC; m++)
        if (read >> m & 1)
            put(s, m, sum[m]);
}

/* Memory health: retired pages, remapped rows, aggregate ECC counts. */
static void sample_health(tsc_nvml *n, tsc_gpu_sample *s)
{
    sample_nvlinks(n, s);
    unsigned long long ull, addr[1];
    uint64_t pages = 0;
    int causes = 0;
    for (int cause = NVML_RETIRED_SBE; n->retired && cause <= NVML_RETIRED_DBE; cause++) {
        unsigned count = 0;   /* 0: asks for the count only */
        nvml_ret rc = n->retired(n->dev, cause, &count, addr);
        if (rc == NVML_OK || rc == NVML_INSUFFICIENT_SIZE) {
            pages += count;
            causes++;
        }
    }
    if (causes)
        put(s, TSC_GPU_RETIRED_PAGES, pages);
    int pending;
    if (n->retired_pending && n->retired_pending(n->dev, &pending) == NVML_OK)
        put(s, TSC_GPU_RETIRED_PENDING, pending == 1);
    unsigned corr, unc, rpending, failed;
    if (n->remapped && n->remapped(n->dev, &corr, &unc, &rpending, &failed) == NVML_OK) {
        put(s, TSC_GPU_REMAP_CORRECTABLE, corr);
        put(s, TSC_GPU_REMAP_UNCORRECTABLE, unc);
        put(s, TSC_GPU_REMAP_STATE, (rpending ? 1u : 0u) | (failed ? 2u : 0u));
    }
    if (n->ecc && n->ecc(n->dev, NVML_ERR_CORRECTED, NVML_ECC_AGGREGATE, &ull) == NVML_OK)
        put(s, TSC_GPU_ECC_CORRECTED_AGG, ull);
    if (n->ecc && n->ecc(n->dev, NVML_ERR_UNCORRECTED, NVML_ECC_AGGREGATE, &ull) == NVML_OK)
        put(s, TSC_GPU_ECC_UNCORRECTED_AGG, ull);
}

void tsc_nvml_sample(tsc_nvml *n, tsc_gpu_sample *s, int with_health)
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
    if (with_health)
        sample_health(n, s);
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
