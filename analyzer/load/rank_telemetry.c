/* Telemetry samples of a rank and their window summaries (rank_telemetry.h). */
#include "rank_telemetry.h"

#include <stdlib.h>
#include <string.h>

#include "rank_strings.h"
#include "util/vec.h"
#include "tsc_format.h"

static struct tsa_telemetry *get(tsa_rank *r)
{
    if (!r->telemetry) {
        r->telemetry = calloc(1, sizeof *r->telemetry);
        if (r->telemetry) {
            r->telemetry->nvml_device = -1;
            r->telemetry->cpu_online = -1;
            r->telemetry->cpu_affinity = -1;
            r->telemetry->quota_milli = -1;
            r->telemetry->workers_visible = -1;
            r->telemetry->cpu_stat = -1;
            r->telemetry->net_ports = -1;
        }
    }
    return r->telemetry;
}

/* Room for one more sample (job_build.h's growth helper); nonzero on OOM. */
#define RESERVE(arr, n, cap) tsa_grow((void **)&(arr), (n), &(cap), sizeof *(arr))

/* Sample times are CLOCK_REALTIME ns; beyond 2^62 they are not real. */
#define PLAUSIBLE(t) ((t) > 0 && (t) < (1ull << 62))

int tsa_telemetry_on_event(tsa_rank *r, uint8_t kind, uint8_t flags, uint16_t aux,
                           uint32_t desc_id, uint64_t t, uint64_t val, uint32_t task,
                           uint8_t role, const char *name, size_t name_len)
{
    struct tsa_telemetry *tm = get(r);
    if (!tm)
        return -1;
    if (!PLAUSIBLE(t))
        return 0;
    int counted = 0;
#define TSA_COUNT_SERIES_PUSH(field, k, slot)                               \
    if (kind == TSC_EV_##k) {                                               \
        if (RESERVE(tm->field, tm->n_##field, tm->cap_##field))             \
            return -1;                                                      \
        tm->field[tm->n_##field++] = (tsa_count_point){(int64_t)t, (slot)}; \
        counted = 1;                                                        \
    }
    TSA_COUNT_SERIES(TSA_COUNT_SERIES_PUSH)
#undef TSA_COUNT_SERIES_PUSH
    if (counted)
        return 0;
    switch (kind) {
    case TSC_EV_GPU_METRIC: {
        if (aux == 0 || aux >= TSC_GPU_METRIC_COUNT)
            return 0;
        if (RESERVE(tm->gpu, tm->n_gpu, tm->cap_gpu))
            return -1;
        tm->gpu[tm->n_gpu++] = (tsa_gpu_point){.t = (int64_t)t, .metric = aux, .value = val};
        if (tm->nvml_device < 0)
            tm->nvml_device = flags;
        return 0;
    }
    case TSC_EV_PROC_CPU: {
        if (RESERVE(tm->cpu, tm->n_cpu, tm->cap_cpu))
            return -1;
        tm->cpu[tm->n_cpu++] = (tsa_cpu_point){.t = (int64_t)t, .cpu_ns = val, .runnable = aux,
                                                .threads = desc_id};
        return 0;
    }
    case TSC_EV_TASK_CPU: {
        if (RESERVE(tm->task, tm->n_task, tm->cap_task))
            return -1;
        uint32_t idx = name ? tsa_rank_intern_n(r, name, name_len) : tsa_rank_intern(r, "?");
        if (idx == UINT32_MAX)
            return -1;
        tm->task[tm->n_task++] = (tsa_task_point){.t = (int64_t)t, .cpu_ns = val, .task = task,
                                                  .name = idx, .role = role};
        return 0;
    }
    case TSC_EV_HOST_LOAD:
        if ((double)val / 1000 > tm->load_max)
            tm->load_max = (double)val / 1000;
        return 0;
    case TSC_EV_NET_COUNTER: {
        if (!name || aux == 0 || aux >= TSA_NET_COUNTERS)
            return 0;
        if (RESERVE(tm->net, tm->n_net, tm->cap_net))
            return -1;
        uint32_t idx = tsa_rank_intern_n(r, name, name_len);
        if (idx == UINT32_MAX)
            return -1;
        tm->net[tm->n_net++] = (tsa_net_point){.t = (int64_t)t, .value = val, .port = idx,
                                               .counter = aux};
        return 0;
    }
    default:
        return 0; /* a later telemetry kind: not ours to read */
    }
}

static void copy_text(char *dst, size_t cap, const char *v)
{
    size_t l = strlen(v);
    if (l >= cap)
        l = cap - 1;
    memcpy(dst, v, l);
    dst[l] = 0;
}

int tsa_telemetry_on_meta(tsa_rank *r, const char *key, const char *value)
{
    static const char *const keys[] = {TSC_META_NVML_STATUS, TSC_META_NVML_DEVICE,
        TSC_META_NVML_DEVICE_NAME, TSC_META_GPU_MAX_SM_CLOCK, TSC_META_CPU_ONLINE,
        TSC_META_CPU_AFFINITY, TSC_META_CPU_QUOTA, TSC_META_OMP_THREADS,
        TSC_META_WORKERS_VISIBLE, TSC_META_CPU_STAT, TSC_META_NET_PORTS};
    size_t k = 0;
    while (k < sizeof keys / sizeof keys[0] && strcmp(key, keys[k]))
        k++;
    if (k == sizeof keys / sizeof keys[0])
        return 0;
    struct tsa_telemetry *tm = get(r);
    if (!tm)
        return -1;
    long v = strtol(value, NULL, 10);
    switch (k) {
    case 0: copy_text(tm->nvml_status, sizeof tm->nvml_status, value); break;
    case 1: tm->nvml_device = v >= 0 && v < 4096 ? (int)v : -1; break;
    case 2: copy_text(tm->gpu_name, sizeof tm->gpu_name, value); break;
    case 3: tm->max_sm_clock_mhz = v > 0 && v < 100000 ? (uint32_t)v : 0; break;
    case 4: tm->cpu_online = v > 0 && v < (1 << 20) ? (int)v : -1; break;
    case 5: tm->cpu_affinity = v > 0 && v < (1 << 20) ? (int)v : -1; break;
    case 6: {
        double q = strtod(value, NULL);
        tm->quota_milli = !strcmp(value, "max") ? 0 : q > 0 && q < 1e6 ? (int64_t)(q * 1000 + 0.5)
                                                                        : -1;
        break;
    }
    case 7: copy_text(tm->omp_threads, sizeof tm->omp_threads, value); break;
    case 8: tm->workers_visible = v == 0 || v == 1 ? (int)v : -1; break;
    case 9: tm->cpu_stat = strcmp(value, "none") != 0; break;
    default: tm->net_ports = v >= 0 && v < 4096 ? (int)v : -1; break;
    }
    return 0;
}

/* GPU and CPU points both start with their int64 time. */
static int by_time(const void *a, const void *b)
{
    int64_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}

static int by_task_t(const void *a, const void *b)
{
    const tsa_task_point *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

void tsa_telemetry_finish(tsa_rank *r)
{
    struct tsa_telemetry *tm = r->telemetry;
    if (!tm)
        return;
    /* qsort's array may not be NULL, even when empty. */
    if (tm->n_gpu > 1)
        qsort(tm->gpu, tm->n_gpu, sizeof *tm->gpu, by_time);
    if (tm->n_cpu > 1)
        qsort(tm->cpu, tm->n_cpu, sizeof *tm->cpu, by_time);
    if (tm->n_task > 1)
        qsort(tm->task, tm->n_task, sizeof *tm->task, by_task_t); /* grouped by task */
#define TSA_COUNT_SERIES_SORT(field, kind, slot) \
    if (tm->n_##field > 1)                          \
        qsort(tm->field, tm->n_##field, sizeof *tm->field, by_time);
    TSA_COUNT_SERIES(TSA_COUNT_SERIES_SORT)
#undef TSA_COUNT_SERIES_SORT
    if (tm->n_net > 1)
        qsort(tm->net, tm->n_net, sizeof *tm->net, by_time);
}

void tsa_telemetry_free(tsa_rank *r)
{
    if (!r->telemetry)
        return;
    free(r->telemetry->gpu);
    free(r->telemetry->cpu);
    free(r->telemetry->task);
#define TSA_COUNT_SERIES_FREE(field, kind, slot) free(r->telemetry->field);
    TSA_COUNT_SERIES(TSA_COUNT_SERIES_FREE)
#undef TSA_COUNT_SERIES_FREE
    free(r->telemetry->net);
    free(r->telemetry);
    r->telemetry = NULL;
}

/* ------------------------------------------------------------ windows */

int tsa_sampler_ticked(const struct tsa_telemetry *tm, int64_t w0, int64_t w1)
{
    /* the first tick after w0 (the series is in time order) */
    size_t lo = 0, hi = tm ? tm->n_cpu : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tm->cpu[mid].t <= w0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return tm && lo < tm->n_cpu && tm->cpu[lo].t <= w1;
}

double tsa_counter_delta(const tsa_count_point *p, size_t n, int64_t w0, int64_t w1, int ticked)
{
    long base = -1, last = -1;
    for (size_t i = 0; i < n && p[i].t <= w1; i++) {
        if (p[i].t <= w0 || base < 0)
            base = (long)i;
        last = (long)i;
    }
    if (base < 0 || last <= base || p[last].value < p[base].value)
        return ticked && base >= 0 && last == base && p[base].t <= w0 ? 0 : -1;
    return (double)(p[last].value - p[base].value);
}

/* Process CPU time at t, linear between the samples around it. */
static double cpu_at(const tsa_cpu_point *p, size_t n, int64_t t)
{
    size_t i = 0;
    while (i + 1 < n && p[i + 1].t <= t)
        i++;
    if (i + 1 >= n || p[i].t >= t)
        return (double)p[i].cpu_ns;
    double f = (double)(t - p[i].t) / (double)(p[i + 1].t - p[i].t);
    return (double)p[i].cpu_ns + f * ((double)p[i + 1].cpu_ns - (double)p[i].cpu_ns);
}

/* CPU time a task's samples [a, b) add inside [w0, w1]: from its last
 * sample at or before w0 (or its first inside) to its last before w1. */
static double task_delta(const tsa_task_point *p, size_t a, size_t b, int64_t w0, int64_t w1)
{
    size_t first = a, last = a;
    int any = 0;
    for (size_t i = a; i < b; i++) {
        if (p[i].t <= w0)
            first = i;
        if (p[i].t <= w1) {
            last = i;
            any = 1;
        }
    }
    if (!any || p[last].cpu_ns < p[first].cpu_ns)
        return 0;
    return (double)(p[last].cpu_ns - p[first].cpu_ns);
}

static void add_top(tsa_cpu_window *out, const char *name, uint8_t role, double cpus)
{
    size_t n = out->n_top;
    if (n == TSA_TELEMETRY_TOP && cpus <= out->top[n - 1].cpus)
        return;
    if (n < TSA_TELEMETRY_TOP)
        out->n_top++;
    size_t i = out->n_top - 1;
    while (i > 0 && out->top[i - 1].cpus < cpus) {
        out->top[i] = out->top[i - 1];
        i--;
    }
    out->top[i] = (tsa_task_use){.name = name, .role = role, .cpus = cpus};
}

void tsa_cpu_window_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_cpu_window *out)
{
    memset(out, 0, sizeof *out);
    const struct tsa_telemetry *tm = r->telemetry;
    if (!tm || tm->n_cpu < 2 || w1 <= w0)
        return;
    /* The part of the window the samples cover. */
    int64_t a = w0 > tm->cpu[0].t ? w0 : tm->cpu[0].t;
    int64_t b = w1 < tm->cpu[tm->n_cpu - 1].t ? w1 : tm->cpu[tm->n_cpu - 1].t;
    if (b <= a)
        return;
    double runnable = 0;
    for (size_t i = 0; i < tm->n_cpu; i++) {
        if (tm->cpu[i].t < a || tm->cpu[i].t > b)
            continue;
        out->samples++;
        runnable += tm->cpu[i].runnable;
        if (tm->cpu[i].threads > out->threads)
            out->threads = tm->cpu[i].threads;
    }
    if (!out->samples)
        return;
    out->have = 1;
    double span = (double)(b - a);
    out->busy_pct = 100.0 * (cpu_at(tm->cpu, tm->n_cpu, b) - cpu_at(tm->cpu, tm->n_cpu, a)) / span;
    out->runnable_mean = runnable / (double)out->samples;
    out->quota_cpus = tm->quota_milli > 0 ? (double)tm->quota_milli / 1000 : 0;
    out->affinity_cpus = tm->cpu_affinity;
    out->online_cpus = tm->cpu_online;
    double limit = tm->cpu_affinity > 0 ? tm->cpu_affinity : tm->cpu_online > 0 ? tm->cpu_online : 0;
    if (out->quota_cpus > 0 && (limit == 0 || out->quota_cpus < limit))
        limit = out->quota_cpus;
    out->limit_cpus = limit;
    double worker_cpus = 0;
    for (size_t i = 0; i < tm->n_task;) {
        size_t j = i;
        while (j < tm->n_task && tm->task[j].task == tm->task[i].task)
            j++;
        double cpus = task_delta(tm->task, i, j, a, b) / span;
        const tsa_task_point *last = &tm->task[j - 1];
        int inside = 0;
        for (size_t k = i; k < j && !inside; k++)
            inside = tm->task[k].t >= a && tm->task[k].t <= b;
        if (last->role == TSC_TASK_WORKER) {
            if (inside) {
                out->workers++;
                worker_cpus += cpus;
            }
        } else if (last->role != TSC_TASK_TSCOPE && cpus > 0) {
            add_top(out, tsa_rank_string(r, last->name), last->role, cpus);
        }
        i = j;
    }
    if (out->workers)
        out->worker_cpus_mean = worker_cpus / (double)out->workers;
}

/* A counter (ECC errors, PCIe replays, NVLink errors, ...) over a window:
 * its value at the window's start (the last sample before it, else the
 * first inside) and how far it grew since. */
typedef struct counter {
    uint64_t start, grown;
    int started;
} counter;

/* The GPU metrics that only grow: their growth in the window is what counts. */
static int is_counter(uint16_t m)
{
    switch (m) {
    case TSC_GPU_ECC_UNCORRECTED: case TSC_GPU_PCIE_REPLAYS: case TSC_GPU_NVLINK_REPLAYS:
    case TSC_GPU_NVLINK_RECOVERIES: case TSC_GPU_NVLINK_CRC: case TSC_GPU_RETIRED_PAGES:
    case TSC_GPU_REMAP_CORRECTABLE: case TSC_GPU_REMAP_UNCORRECTABLE:
    case TSC_GPU_ECC_CORRECTED_AGG: case TSC_GPU_ECC_UNCORRECTED_AGG:
        return 1;
    default:
        return 0;
    }
}

static void counter_at(counter *c, int before_window, uint64_t v)
{
    if (!c->started || before_window) {
        c->start = v;
        c->started = 1;
    } else if (v > c->start) {
        c->grown = v - c->start;
    }
}

/* The lowest plausible value of a metric seen, when `is` it. */
static void lowest(int is, uint64_t v, uint32_t *low)
{
    if (is && v > 0 && v < 1024 && (!*low || v < *low))
        *low = (uint32_t)v;
}

void tsa_gpu_window_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_gpu_window *out)
{
    memset(out, 0, sizeof *out);
    out->util_mean = -1;
    const struct tsa_telemetry *tm = r->telemetry;
    if (!tm || !tm->n_gpu || w1 <= w0 || tm->gpu[0].t >= w1)
        return;
    out->have = 1;
    out->device = tm->nvml_device;
    /* Walk the samples as step functions: each value holds until the
     * metric's next sample. */
    uint64_t cur[TSC_GPU_METRIC_COUNT] = {0};
    int known[TSC_GPU_METRIC_COUNT] = {0};
    int known_active = 0;
    int64_t from = w0;
    double sm_ns = 0, sm_time = 0, util_ns = 0, util_time = 0, throttled = 0;
    counter grow[TSC_GPU_METRIC_COUNT];
    memset(grow, 0, sizeof grow);
    uint32_t highest = 0;
    for (size_t i = 0; i <= tm->n_gpu; i++) {
        int64_t t = i < tm->n_gpu ? tm->gpu[i].t : w1;
        if (t > w1)
            t = w1;
        if (t > from) {
            double d = (double)(t - from);
            if (known[TSC_GPU_CLOCK_REASONS] && (cur[TSC_GPU_CLOCK_REASONS] & TSC_GPU_REASON_POWER_THERMAL)) {
                throttled += d;
                out->reasons |= cur[TSC_GPU_CLOCK_REASONS] & TSC_GPU_REASON_POWER_THERMAL;
            }
            if (known[TSC_GPU_SM_CLOCK_MHZ]) {
                sm_ns += d * (double)cur[TSC_GPU_SM_CLOCK_MHZ];
                sm_time += d;
                uint32_t c = (uint32_t)cur[TSC_GPU_SM_CLOCK_MHZ];
                if (!out->sm_clock_min || c < out->sm_clock_min)
                    out->sm_clock_min = c;
            }
            if (known[TSC_GPU_UTIL_PCT]) {
                util_ns += d * (double)cur[TSC_GPU_UTIL_PCT];
                util_time += d;
            }
            /* states held during the window: links down, memory repairs waiting */
            uint64_t act = cur[TSC_GPU_NVLINK_ACTIVE];
            if (known[TSC_GPU_NVLINK_ACTIVE] && act < 1024 &&
                (!known_active++ || act < out->nvlink_active_min))
                out->nvlink_active_min = (uint32_t)act;
            out->retired_pending |= known[TSC_GPU_RETIRED_PENDING] && cur[TSC_GPU_RETIRED_PENDING];
            out->remap_state |= cur[TSC_GPU_REMAP_STATE] & 3;
            if (known[TSC_GPU_TEMP_C] && cur[TSC_GPU_TEMP_C] > out->temp_max)
                out->temp_max = (uint32_t)cur[TSC_GPU_TEMP_C];
            if (known[TSC_GPU_POWER_MW] && cur[TSC_GPU_POWER_MW] / 1000.0 > out->power_max_w)
                out->power_max_w = cur[TSC_GPU_POWER_MW] / 1000.0;
            from = t;
        }
        if (i == tm->n_gpu || tm->gpu[i].t >= w1)
            break;
        uint16_t m = tm->gpu[i].metric;
        cur[m] = tm->gpu[i].value;
        known[m] = 1;
        if (m == TSC_GPU_SM_CLOCK_MHZ && cur[m] > highest && cur[m] < 100000)
            highest = (uint32_t)cur[m];
        if (is_counter(m))
            counter_at(&grow[m], tm->gpu[i].t <= w0, cur[m]);
        if (m == TSC_GPU_NVLINK_LINKS && cur[m] < 1024)
            out->nvlink_links = (uint32_t)cur[m];
        if (m == TSC_GPU_XID_EVENTS)
            out->xid_events = cur[m];
        if (m == TSC_GPU_XID_LAST)
            out->xid_last = cur[m];
        lowest(m == TSC_GPU_PCIE_WIDTH, cur[m], &out->pcie_width);
        lowest(m == TSC_GPU_PCIE_GEN, cur[m], &out->pcie_gen);
        if (m == TSC_GPU_PCIE_WIDTH_MAX && cur[m] < 1024)
            out->pcie_width_max = (uint32_t)cur[m];
        if (m == TSC_GPU_PCIE_GEN_MAX && cur[m] < 1024)
            out->pcie_gen_max = (uint32_t)cur[m];
    }
    double span = (double)(w1 - w0);
    out->throttled_share = throttled / span;
    out->sm_clock_mean = sm_time > 0 ? sm_ns / sm_time : 0;
    out->util_mean = util_time > 0 ? util_ns / util_time : -1;
    out->max_sm_clock = tm->max_sm_clock_mhz ? tm->max_sm_clock_mhz : highest;
    out->ecc_new = grow[TSC_GPU_ECC_UNCORRECTED].grown;
    out->pcie_replays_new = grow[TSC_GPU_PCIE_REPLAYS].grown;
    out->nvlink_replays_new = grow[TSC_GPU_NVLINK_REPLAYS].grown;
    out->nvlink_recoveries_new = grow[TSC_GPU_NVLINK_RECOVERIES].grown;
    out->nvlink_crc_new = grow[TSC_GPU_NVLINK_CRC].grown;
    out->retired_pages = cur[TSC_GPU_RETIRED_PAGES];
    out->retired_pages_new = grow[TSC_GPU_RETIRED_PAGES].grown;
    out->remapped_unc = cur[TSC_GPU_REMAP_UNCORRECTABLE];
    out->remapped_corr = cur[TSC_GPU_REMAP_CORRECTABLE];
    out->remapped_new = grow[TSC_GPU_REMAP_CORRECTABLE].grown +
                        grow[TSC_GPU_REMAP_UNCORRECTABLE].grown;
    out->ecc_agg_unc_new = grow[TSC_GPU_ECC_UNCORRECTED_AGG].grown;
    out->ecc_agg_corr_new = grow[TSC_GPU_ECC_CORRECTED_AGG].grown;
}

/* One port's values over a window. */
typedef struct port_acc {
    uint32_t port;
    counter c[TSA_NET_COUNTERS];
    uint64_t state, rate;        /* the value held at the window's start, 0 unknown */
    int down;                    /* a state other than ACTIVE held in the window */
    uint64_t rate_min;
} port_acc;

#define NET_WINDOW_PORTS 16      /* a host has a few; a dump may claim more */

static void port_value(port_acc *a, uint16_t c, uint64_t v, int before)
{
    if (c == TSC_NET_STATE) {
        if (before)
            a->state = v;
        else
            a->down |= v != 4;
    } else if (c == TSC_NET_RATE_MBPS) {
        if (before)
            a->rate = v;
        else if (v && (!a->rate_min || v < a->rate_min))
            a->rate_min = v;
    } else {
        counter_at(&a->c[c], before, v);
    }
}

void tsa_net_window_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_net_window *out)
{
    memset(out, 0, sizeof *out);
    const struct tsa_telemetry *tm = r->telemetry;
    if (!tm || !tm->n_net || w1 <= w0 || tm->net[0].t >= w1)
        return;
    port_acc acc[NET_WINDOW_PORTS];
    size_t np = 0;
    for (size_t i = 0; i < tm->n_net && tm->net[i].t < w1; i++) {
        const tsa_net_point *p = &tm->net[i];
        size_t k = 0;
        while (k < np && acc[k].port != p->port)
            k++;
        if (k == np) {
            if (np == NET_WINDOW_PORTS)
                continue;
            memset(&acc[np], 0, sizeof acc[np]);
            acc[np++].port = p->port;
        }
        port_value(&acc[k], p->counter, p->value, p->t <= w0);
    }
    out->have = 1;
    out->ports = np;
    uint64_t worst = 0;
    for (size_t k = 0; k < np; k++) {
        port_acc *a = &acc[k];
        /* the state and rate held when the window began count too */
        a->down |= a->state && a->state != 4;
        if (a->rate && (!a->rate_min || a->rate < a->rate_min))
            a->rate_min = a->rate;
        out->not_active |= a->down;
        if (a->rate_min && (!out->rate_min_mbps || a->rate_min < out->rate_min_mbps))
            out->rate_min_mbps = a->rate_min;
        uint64_t errors = 0;
        for (int c = 1; c < TSA_NET_COUNTERS; c++) {
            out->grown[c] += a->c[c].grown;
            if (c != TSC_NET_XMIT_WAIT)
                errors += a->c[c].grown;
        }
        out->errors_new += errors;
        if (errors + a->c[TSC_NET_XMIT_WAIT].grown > worst) {
            worst = errors + a->c[TSC_NET_XMIT_WAIT].grown;
            out->worst_port = tsa_rank_string(r, a->port);
        }
    }
}

const char *tsa_throttle_cause(uint64_t reasons)
{
    int thermal = (reasons & (TSC_GPU_REASON_SW_THERMAL | TSC_GPU_REASON_HW_THERMAL)) != 0;
    int power = (reasons & (TSC_GPU_REASON_SW_POWER_CAP | TSC_GPU_REASON_HW_POWER_BRAKE)) != 0;
    if (thermal && power)
        return "power and thermal limits";
    if (thermal)
        return "thermal limits";
    if (power)
        return "power limits";
    return reasons ? "a hardware slowdown" : "no reason given";
}
