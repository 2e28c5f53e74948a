/* GPU and host telemetry of one rank (format 1.1 kinds 0x40-0x43 and the
 * telemetry metadata), as loaded, and its summary over an analysis window.
 * docs/report.md defines the figures; findings/telemetry.c uses them. */
#ifndef TSA_TELEMETRY_H
#define TSA_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct tsa_gpu_point {
    int64_t t;
    uint16_t metric;     /* enum tsc_gpu_metric */
    uint64_t value;
} tsa_gpu_point;

typedef struct tsa_cpu_point {
    int64_t t;
    uint64_t cpu_ns;     /* process CPU time so far */
    uint32_t runnable, threads;
} tsa_cpu_point;

/* A counter that only grows (format kinds 0x44, 0x45), sampled when it
 * changed. */
#define TSA_NET_COUNTERS 8   /* > TSC_NET_COUNTER_COUNT's values */

typedef struct tsa_count_point {
    int64_t t;
    uint64_t value;
} tsa_count_point;

/* One InfiniBand/RoCE port value (format 1.4 kind 0x48). */
typedef struct tsa_net_point {
    int64_t t;
    uint64_t value;
    uint32_t port;       /* index into the rank's strings: "mlx5_0:1" */
    uint16_t counter;    /* enum tsc_net_counter */
} tsa_net_point;

typedef struct tsa_task_point {
    int64_t t;
    uint64_t cpu_ns;     /* the task's CPU time so far */
    uint32_t task;       /* tid, or pid of a worker process */
    uint32_t name;       /* index into the rank's strings */
    uint8_t role;        /* enum tsc_task_role */
} tsa_task_point;

/* The telemetry kinds kept as series of (time, count) points, one line
 * each: the struct's arrays below, tsa_telemetry_on_event, its sort and
 * free (rank_telemetry.c) and the share packing (share_pack.c) expand it.
 *   C(FIELD, KIND, SLOT)
 *   FIELD  the array in struct tsa_telemetry (n_FIELD, cap_FIELD)
 *   KIND   the record kind, TSC_EV_<KIND> (format/tsc_event_kinds.h)
 *   SLOT   what is counted: the record's val or desc_id
 * switches, faults: the main thread's involuntary context switches, the
 * process's major page faults (format 1.3); sched_wait, sched_run: the
 * main thread's run-queue wait and time on a CPU; throttled,
 * throttled_periods: the cgroup's throttled time and periods (1.4). */
#define TSA_COUNT_SERIES(C)                    \
    C(switches, PROC_SWITCHES, val)            \
    C(faults, PROC_FAULTS, val)                \
    C(sched_wait, SCHED_WAIT, val)             \
    C(sched_run, SCHED_RUN, val)               \
    C(throttled, CPU_THROTTLE, val)            \
    C(throttled_periods, CPU_THROTTLE, desc_id)

struct tsa_telemetry {
    tsa_gpu_point *gpu;   size_t n_gpu, cap_gpu;
    tsa_cpu_point *cpu;   size_t n_cpu, cap_cpu;
    tsa_task_point *task; size_t n_task, cap_task;
    double load_max;               /* highest 1-minute load average seen */
    /* metadata; -1 / 0 when absent */
    char nvml_status[160];
    int nvml_device;
    char gpu_name[96];
    uint32_t max_sm_clock_mhz;
    int cpu_online, cpu_affinity;
    int64_t quota_milli;           /* cgroup CPU limit, 0 none, -1 unknown */
    char omp_threads[24];
    int workers_visible;           /* 1 yes, 0 no (no worker can be seen), -1 unknown */
    /* --- appended: the counter series (TSA_COUNT_SERIES), then (format
     * 1.4) network port values (0x49), in time order --- */
#define TSA_COUNT_SERIES_FIELD(field, kind, slot) \
    tsa_count_point *field;                       \
    size_t n_##field, cap_##field;
    TSA_COUNT_SERIES(TSA_COUNT_SERIES_FIELD)
#undef TSA_COUNT_SERIES_FIELD
    tsa_net_point *net;          size_t n_net, cap_net;
    int cpu_stat;                  /* 1: a cgroup cpu.stat was sampled, 0: none, -1 unknown */
    int net_ports;                 /* ports sampled, -1 unknown */
};

/* 1 when the sampler ticked inside (w0, w1]: it writes the process's CPU
 * time at every tick, and the counters only when they change, so a
 * counter's silence over a window says "unchanged" only where the sampler
 * was running then (a starved one writes nothing either). */
int tsa_sampler_ticked(const struct tsa_telemetry *tm, int64_t w0, int64_t w1);

/* How much counter p grew over [w0, w1): from its last sample at or before
 * w0 (else its first inside the window) to its last at or before w1; 0
 * when it has a sample at or before w0 and none inside while the sampler
 * ticked inside (ticked, tsa_sampler_ticked).  -1 when not recorded. */
double tsa_counter_delta(const tsa_count_point *p, size_t n, int64_t w0, int64_t w1, int ticked);

/* Loader hooks (job_load.c): each returns 0, or -1 when out of memory.
 * on_event takes the kinds 0x40-0x4f; names of task samples come from the
 * task descriptor (NULL: "?"). */
int tsa_telemetry_on_event(tsa_rank *r, uint8_t kind, uint8_t flags, uint16_t aux,
                           uint32_t desc_id, uint64_t t, uint64_t val, uint32_t task,
                           uint8_t role, const char *name, size_t name_len);
int tsa_telemetry_on_meta(tsa_rank *r, const char *key, const char *value);
/* Sorts the samples by time (tsa_rank_finish). */
void tsa_telemetry_finish(tsa_rank *r);
void tsa_telemetry_free(tsa_rank *r);

#define TSA_TELEMETRY_TOP 3

typedef struct tsa_task_use {
    const char *name;    /* borrowed from the rank */
    uint8_t role;
    double cpus;         /* CPU time / window */
} tsa_task_use;

typedef struct tsa_cpu_window {
    int have;                    /* host samples cover the window */
    size_t samples;
    double busy_pct;             /* process CPU time / wall x 100 */
    uint32_t threads;            /* most threads seen */
    double runnable_mean;        /* runnable threads (+ workers), mean of samples */
    double quota_cpus;           /* cgroup limit, 0 none */
    int affinity_cpus, online_cpus;
    double limit_cpus;           /* min(quota, affinity), the CPUs it may use */
    size_t workers;              /* worker processes seen in the window */
    double worker_cpus_mean;     /* CPU use per worker (1 = one CPU busy) */
    tsa_task_use top[TSA_TELEMETRY_TOP]; size_t n_top; /* busiest threads */
} tsa_cpu_window;

typedef struct tsa_gpu_window {
    int have;                    /* NVML samples cover the window */
    int device;
    double throttled_share;      /* of the window with power/thermal reasons set */
    uint64_t reasons;            /* power/thermal reason bits seen in the window */
    double sm_clock_mean;        /* time-weighted, MHz; 0 unknown */
    uint32_t sm_clock_min, max_sm_clock; /* max: the device's (metadata) or highest seen */
    uint32_t temp_max;           /* deg C */
    double power_max_w;
    double util_mean;            /* time-weighted, percent; -1 unknown */
    uint64_t ecc_new;            /* uncorrected ECC errors during the window */
    uint32_t pcie_width, pcie_width_max; /* narrowest link seen, its maximum; 0 unknown */
    uint32_t pcie_gen, pcie_gen_max;     /* lowest generation seen, its maximum; 0 unknown */
    uint64_t pcie_replays_new;   /* PCIe replays during the window */
    uint64_t xid_events;         /* critical XID events from the start to the
                                  * window's end (one before the window still
                                  * marks the device) */
    uint64_t xid_last;           /* the last one's code, 0 none */
    /* --- GPU health (format 1.4 metrics 17-28) --- */
    uint32_t nvlink_links;       /* links the device reports, 0 unknown */
    uint32_t nvlink_active_min;  /* fewest active links seen */
    uint64_t nvlink_replays_new, nvlink_recoveries_new, nvlink_crc_new; /* in the window */
    uint64_t retired_pages;      /* retired pages at the window's end */
    uint64_t retired_pages_new;  /* ... of which retired during it */
    int retired_pending;         /* a page waited for retirement in the window */
    uint64_t remapped_unc, remapped_corr; /* rows remapped at the window's end */
    uint64_t remapped_new;       /* rows remapped during it (both kinds) */
    uint64_t remap_state;        /* bits seen: 1 remapping pending, 2 a remapping failed */
    uint64_t ecc_agg_unc_new, ecc_agg_corr_new; /* aggregate ECC errors during it */
} tsa_gpu_window;

/* The host's network ports over a window: how far their error and
 * congestion counters grew, and whether a port was down or slower. */
typedef struct tsa_net_window {
    int have;                    /* port samples cover the window */
    size_t ports;                /* ports sampled */
    uint64_t grown[TSA_NET_COUNTERS]; /* by enum tsc_net_counter, summed over ports */
    uint64_t errors_new;         /* symbol, link downed, recovery, receive errors */
    int not_active;              /* a port was seen in a state other than ACTIVE */
    uint64_t rate_min_mbps;      /* slowest rate seen, 0 unknown */
    const char *worst_port;      /* the port whose errors grew most (borrowed), NULL none */
} tsa_net_window;

/* Summaries over [w0, w1) on the rank's clock; have = 0 when the rank has
 * no samples there. */
void tsa_cpu_window_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_cpu_window *out);
void tsa_gpu_window_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_gpu_window *out);
void tsa_net_window_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_net_window *out);

/* "thermal", "power", "power and thermal" for reason bits. */
const char *tsa_throttle_cause(uint64_t reasons);

#endif
