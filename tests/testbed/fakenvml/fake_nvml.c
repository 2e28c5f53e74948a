/* A test libnvidia-ml.so.1: the NVML entry points tscope's sampler
 * resolves, answering from the environment so a test bed job can have a
 * throttled GPU on one rank.
 *   FAKE_NVML_THROTTLE_RANK=R   the process with RANK=R reports thermal
 *                               slowdown (clock-event reasons 0x60), SM
 *                               clock 1100 MHz and 92 C; others 1980 MHz,
 *                               no reasons, 60 C.
 *   FAKE_NVML_PCIE_RANK=R       the process with RANK=R has a down-trained
 *                               PCIe link: gen 3 x8 of gen 4 x16, its replay
 *                               counter growing by 7 a call; others gen 4
 *                               x16, no replays.
 *   FAKE_NVML_XID_RANK=R        the process with RANK=R gets one critical
 *                               XID event, code 79 (fallen off the bus),
 *                               at its first event wait.
 *   FAKE_NVML_NVLINK_RANK=R     the process with RANK=R has NVLink trouble:
 *                               link 3 of its 4 inactive, and every call
 *                               adds 3 replays, 1 recovery and 5 CRC errors
 *                               (link 0); others: 4 active links, no errors.
 *   FAKE_NVML_MEMORY_RANK=R     the process with RANK=R has failing memory:
 *                               2 pages retired for double-bit errors, one
 *                               row remapped for an uncorrectable error with
 *                               a remapping pending, and every call adds 1
 *                               uncorrected and 10 corrected aggregate ECC
 *                               errors; others: none.
 *   FAKE_NVML_FAIL_INIT=1       nvmlInit_v2 fails.
 * Two devices named "Fake GPU", maximum SM clock 1980 MHz, 1 GiB used,
 * power 300 W (450 W when throttled).  The volatile ECC counters answer
 * "not supported" (only the aggregate ones are kept), and
 * nvmlDeviceGetRetiredPagesPendingStatus is deliberately missing: an
 * optional entry point the sampler must live without. */
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef struct { unsigned gpu, memory; } fake_util;
typedef struct { unsigned long long total, free, used; } fake_memory;

static int g_devices[2];

/* Is this process the rank the variable names? */
static int named_rank(const char *var)
{
    const char *t = getenv(var), *r = getenv("RANK");
    return t && r && *t && atoi(t) == atoi(r);
}

static int throttled(void) { return named_rank("FAKE_NVML_THROTTLE_RANK"); }
static int down_trained(void) { return named_rank("FAKE_NVML_PCIE_RANK"); }

static int valid(void *dev) { return dev == &g_devices[0] || dev == &g_devices[1]; }

API int nvmlInit_v2(void)
{
    const char *f = getenv("FAKE_NVML_FAIL_INIT");
    return f && *f == '1' ? 999 : 0;
}

API int nvmlShutdown(void) { return 0; }

API int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = 2;
    return 0;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
    if (i >= 2)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &g_devices[i];
    return 0;
}

API int nvmlDeviceGetName(void *dev, char *name, unsigned len)
{
    if (!valid(dev) || len < 9)
        return 2;
    strcpy(name, "Fake GPU");
    return 0;
}

API int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
    if (!valid(dev))
        return 2;
    *mhz = type == 2 ? 1593 : throttled() ? 1100 : 1980;
    return 0;
}

API int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
    if (!valid(dev))
        return 2;
    *mhz = type == 2 ? 1593 : 1980;
    return 0;
}

API int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw)
{
    if (!valid(dev))
        return 2;
    *mw = throttled() ? 450000 : 300000;
    return 0;
}

API int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c)
{
    if (!valid(dev) || sensor != 0)
        return 2;
    *c = throttled() ? 92 : 60;
    return 0;
}

API int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *r)
{
    if (!valid(dev))
        return 2;
    *r = throttled() ? 0x60 : 0;
    return 0;
}

API int nvmlDeviceGetUtilizationRates(void *dev, fake_util *u)
{
    if (!valid(dev))
        return 2;
    u->gpu = 90;
    u->memory = 40;
    return 0;
}

API int nvmlDeviceGetMemoryInfo(void *dev, fake_memory *m)
{
    if (!valid(dev))
        return 2;
    m->total = 80ull << 30;
    m->used = 1ull << 30;
    m->free = m->total - m->used;
    return 0;
}

/* The PCIe link: what a down-trained rank reports, and the others. */
#define PCIE_LINK(fn, bad, good)                  \
    API int fn(void *dev, unsigned *v)            \
    {                                             \
        if (!valid(dev))                          \
            return 2;                             \
        *v = down_trained() ? (bad) : (good);     \
        return 0;                                 \
    }
PCIE_LINK(nvmlDeviceGetCurrPcieLinkGeneration, 3, 4)
PCIE_LINK(nvmlDeviceGetMaxPcieLinkGeneration, 4, 4)
PCIE_LINK(nvmlDeviceGetCurrPcieLinkWidth, 8, 16)
PCIE_LINK(nvmlDeviceGetMaxPcieLinkWidth, 16, 16)

API int nvmlDeviceGetPcieReplayCounter(void *dev, unsigned *n)
{
    static unsigned replays;
    if (!valid(dev))
        return 2;
    if (down_trained())
        replays += 7;
    *n = replays;
    return 0;
}

/* nvmlEventData_t */
typedef struct {
    void *device;
    unsigned long long type, data;
    unsigned gpu_instance, compute_instance;
} fake_event;

static int g_set;
static void *g_watched;
static int g_xid_sent;

API int nvmlEventSetCreate(void **set)
{
    *set = &g_set;
    return 0;
}

API int nvmlEventSetFree(void *set) { return set == &g_set ? 0 : 2; }

API int nvmlDeviceRegisterEvents(void *dev, unsigned long long types, void *set)
{
    if (!valid(dev) || set != &g_set || !(types & 0x8))
        return 2;
    g_watched = dev;
    return 0;
}

API int nvmlEventSetWait_v2(void *set, fake_event *e, unsigned timeout_ms)
{
    (void)timeout_ms;
    if (set != &g_set)
        return 2;
    if (g_xid_sent || !g_watched || !named_rank("FAKE_NVML_XID_RANK"))
        return 10; /* NVML_ERROR_TIMEOUT: nothing happened */
    g_xid_sent = 1;
    *e = (fake_event){.device = g_watched, .type = 0x8, .data = 79};
    return 0;
}

/* NVLink: 4 links; on the named rank link 3 is down and link 0 errs. */
static int nvlink_trouble(void) { return named_rank("FAKE_NVML_NVLINK_RANK"); }
static int bad_memory(void) { return named_rank("FAKE_NVML_MEMORY_RANK"); }

API int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
    if (!valid(dev) || link >= 4)
        return 2;
    *active = !(nvlink_trouble() && link == 3);
    return 0;
}

API int nvmlDeviceGetNvLinkErrorCounter(void *dev, unsigned link, int counter,
                                        unsigned long long *v)
{
    static unsigned long long grown[4];
    static const unsigned step[4] = {3, 1, 5, 0}; /* replay, recovery, CRC flit, CRC data */
    if (!valid(dev) || link >= 4 || counter < 0 || counter > 4)
        return 2;
    if (counter == 4 || link != 0) {
        *v = 0;
        return 0;
    }
    if (nvlink_trouble())
        grown[counter] += step[counter];
    *v = grown[counter];
    return 0;
}

API int nvmlDeviceGetRetiredPages(void *dev, int cause, unsigned *count, unsigned long long *addr)
{
    if (!valid(dev) || !count || !addr || cause < 0 || cause > 1)
        return 2;
    unsigned have = bad_memory() && cause == 1 ? 2 : 0;
    if (*count < have) {
        *count = have;
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    }
    for (unsigned i = 0; i < have; i++)
        addr[i] = 0x1000u * (i + 1);
    *count = have;
    return 0;
}

API int nvmlDeviceGetRemappedRows(void *dev, unsigned *corr, unsigned *unc, unsigned *pending,
                                  unsigned *failed)
{
    if (!valid(dev))
        return 2;
    *corr = 0;
    *unc = bad_memory() ? 1 : 0;
    *pending = bad_memory() ? 1 : 0;
    *failed = 0;
    return 0;
}

API int nvmlDeviceGetTotalEccErrors(void *dev, int type, int counter, unsigned long long *n)
{
    static unsigned long long corrected, uncorrected;
    if (!valid(dev) || type < 0 || type > 1)
        return 2;
    if (counter != 1)
        return 3; /* NVML_ERROR_NOT_SUPPORTED: the volatile counters */
    if (bad_memory()) {
        if (type)
            uncorrected += 1;
        else
            corrected += 10;
    }
    *n = type ? uncorrected : corrected;
    return 0;
}
