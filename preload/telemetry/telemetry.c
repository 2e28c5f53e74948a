/* The telemetry sampler thread (telemetry.h); TSCOPE_NVML_MS=0 means no
 * thread at all, just the nvml_status line.  It never blocks the job:
 * NVML is loaded and initialised on this thread, not in the set-up path;
 * the thread runs with every signal blocked; stopping it waits at most
 * TSC_TELEMETRY_JOIN_MS, after which exit goes on without it. */
#include "telemetry.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host_sampler.h"
#include "net_ports.h"
#include "nvml_api.h"
#include "parts.h"
#include "rec_meta.h"
#include "recorder.h"
#include "recorder_internal.h"
#include "self_cost.h"

#define TSC_TELEMETRY_JOIN_MS 2000
/* Counters that move slowly and cost a file or an NVML call each (GPU
 * health, network ports) are read at every this-many-th sample (every
 * second at the default period) and at the last: read at every sample, 8
 * ports took 5% of a CPU at a 10 ms period, against 2% for the rest. */
#define TSC_TELEMETRY_SLOW_EVERY 10

static pthread_t g_thread;
static int g_started;
static _Atomic int g_stop;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;

/* NVML part: the picked device and the last values recorded. */
typedef struct gpu_state {
    tsc_nvml *nvml;
    int index;
    int have_last;
    tsc_gpu_sample last;
} gpu_state;


static void gpu_open(gpu_state *g)
{
    char why[256];
    memset(g, 0, sizeof *g);
    g->index = -1;
    g->nvml = tsc_nvml_open("libnvidia-ml.so.1", why, sizeof why);
    if (!g->nvml) {
        tsc_rec_meta(TSC_META_NVML_STATUS, why);
        return;
    }
    const char *lr = getenv("LOCAL_RANK");
    char name[96];
    g->index = tsc_nvml_pick(g->nvml, lr ? atoi(lr) : 0, getenv("CUDA_VISIBLE_DEVICES"), name,
                             sizeof name);
    if (g->index < 0) {
        tsc_rec_meta(TSC_META_NVML_STATUS, "no NVML device");
        tsc_nvml_close(g->nvml);
        g->nvml = NULL;
        return;
    }
    tsc_rec_meta(TSC_META_NVML_STATUS, "ok");
    tsc_meta_set_int(TSC_META_NVML_DEVICE, g->index);
    if (name[0])
        tsc_rec_meta(TSC_META_NVML_DEVICE_NAME, name);
    unsigned mhz = tsc_nvml_max_sm_clock(g->nvml);
    if (mhz)
        tsc_meta_set_int(TSC_META_GPU_MAX_SM_CLOCK, mhz);
}

static void gpu_sample(gpu_state *g, int health)
{
    if (!g->nvml)
        return;
    tsc_gpu_sample s;
    tsc_nvml_sample(g->nvml, &s, health);
    uint64_t now = tsc_now_ns();
    uint16_t metric[TSC_GPU_METRIC_COUNT];
    uint64_t value[TSC_GPU_METRIC_COUNT];
    size_t k = tsc_gpu_changes(g->have_last ? &g->last : NULL, &s, metric, value);
    for (size_t i = 0; i < k; i++) {
        tsc_rec_event(TSC_EV_GPU_METRIC, (uint8_t)g->index, metric[i], 0, now, now, value[i]);
        /* Compared with what was recorded, so slow drifts still show. */
        g->last.have |= 1u << metric[i];
        g->last.v[metric[i]] = value[i];
    }
    g->have_last = 1;
}

static void *sampler_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "tscope-telemetry", 0, 0, 0);
    tsc_cost_thread_begin(TSC_COST_TELEMETRY);
    uint32_t self = (uint32_t)syscall(SYS_gettid);
    uint32_t period_ms = tsc_rec_config()->nvml_ms;
    tsc_meta_set_int(TSC_META_TELEMETRY_MS, period_ms);
    tsc_host_write_meta();
    tsc_net_open(tsc_rec_config()->sysfs_root);
    gpu_state g;
    gpu_open(&g);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (unsigned n = 0;; n++) {
        tsc_host_sample(self);
        int slow = n % TSC_TELEMETRY_SLOW_EVERY == 0 || atomic_load(&g_stop);
        if (slow)
            tsc_net_sample(tsc_now_ns());
        gpu_sample(&g, slow);
        if (atomic_load(&g_stop))
            break; /* that was the last sample: the window's end is covered */
        /* longer while the budget has stepped down (self_cost.h) */
        uint64_t p = (uint64_t)period_ms * tsc_cost_telemetry_factor();
        next.tv_nsec += (long)(p % 1000) * 1000000L;
        next.tv_sec += (time_t)(p / 1000) + next.tv_nsec / 1000000000L;
        next.tv_nsec %= 1000000000L;
        pthread_mutex_lock(&g_mu);
        while (!atomic_load(&g_stop) &&
               pthread_cond_timedwait(&g_cv, &g_mu, &next) != ETIMEDOUT)
            ;
        pthread_mutex_unlock(&g_mu);
    }
    tsc_nvml_close(g.nvml);
    tsc_cost_thread_end(TSC_COST_TELEMETRY);
    return NULL;
}

static void after_fork_child(void)
{
    /* The thread did not come along; the child starts its own if it
     * records.  The mutex may have been held by it: make a fresh one. */
    g_started = 0;
    atomic_store(&g_stop, 0);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    g_mu = fresh;
    tsc_host_reset();
    tsc_net_reset();
}

void tsc_telemetry_start(void)
{
    if (g_started)
        return;
    if (!tsc_rec_config()->nvml_ms) {
        tsc_rec_meta(TSC_META_NVML_STATUS, "off (TSCOPE_NVML_MS=0)");
        return; /* no sampler thread at all */
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_store(&g_stop, 0);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&g_thread, NULL, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        g_started = 1;
    else
        tsc_warn_once("telemetry", "cannot start the telemetry thread (%s); no GPU or host "
                      "samples", strerror(rc));
}

void tsc_telemetry_stop(void)
{
    if (!g_started)
        return;
    pthread_mutex_lock(&g_mu);
    atomic_store(&g_stop, 1);
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += (TSC_TELEMETRY_JOIN_MS % 1000) * 1000000L;
    deadline.tv_sec += TSC_TELEMETRY_JOIN_MS / 1000 + deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    if (pthread_timedjoin_np(g_thread, NULL, &deadline) == 0)
        g_started = 0;
}

const tsc_part tsc_telemetry_part = {
    .name = "telemetry",
    .start = tsc_telemetry_start,
    .exit = tsc_telemetry_stop,
    .fork_child = after_fork_child,
};
