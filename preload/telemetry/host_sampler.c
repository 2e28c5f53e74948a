/* Host sampling for the telemetry thread (host_sampler.h).  Only the
 * sampler thread calls in, so the task table needs no lock. */
#include "host_sampler.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_proc.h"
#include "rec_meta.h"
#include "recorder.h"
#include "recorder_internal.h"

typedef struct task_slot {
    uint32_t id;         /* tid, or pid of a worker process; 0 free */
    uint8_t role;
    uint8_t seen;        /* found in this sample */
    char state;
    uint64_t ticks;
    uint32_t desc;
    char comm[17];
} task_slot;

static task_slot g_tasks[TSC_HOST_MAX_TASKS];
static uint64_t g_last_load = UINT64_MAX;
static uint32_t g_last_running = UINT32_MAX;
static uint64_t g_last_switches = UINT64_MAX, g_last_faults = UINT64_MAX;
static uint64_t g_last_wait = UINT64_MAX, g_last_run = UINT64_MAX,
                g_last_throttled = UINT64_MAX;
/* cpu.stat of the cgroup whose limit applies ("" none), found with the
 * metadata: the process does not change cgroups under a training job. */
static char g_cpu_stat[1400];
static uint8_t g_cpu_stat_v1;

void tsc_host_reset(void)
{
    memset(g_tasks, 0, sizeof g_tasks);
    g_last_switches = g_last_faults = UINT64_MAX;
    g_last_wait = g_last_run = g_last_throttled = UINT64_MAX;
    g_last_load = UINT64_MAX;
    g_last_running = UINT32_MAX;
}

void tsc_host_write_meta(void)
{
    tsc_meta_set_int(TSC_META_CPU_ONLINE, sysconf(_SC_NPROCESSORS_ONLN));
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        tsc_meta_set_int(TSC_META_CPU_AFFINITY, CPU_COUNT(&set));
    char cg[4096], cg_root[600];
    int64_t milli = 0;
    const char *source = "none";
    snprintf(cg_root, sizeof cg_root, "%s/fs/cgroup", tsc_rec_config()->sysfs_root);
    g_cpu_stat[0] = 0;
    if (tsc_read_small("/proc/self/cgroup", cg, sizeof cg) > 0) {
        tsc_cgroup_cpu_limit(cg_root, cg, &milli, &source);
        int v1 = 0;
        if (tsc_cgroup_cpu_stat_path(cg_root, cg, g_cpu_stat, sizeof g_cpu_stat, &v1) != 0)
            g_cpu_stat[0] = 0;
        g_cpu_stat_v1 = (uint8_t)v1;
    }
    tsc_rec_meta(TSC_META_CPU_STAT, g_cpu_stat[0] ? g_cpu_stat : "none");
    char v[32];
    if (milli > 0)
        snprintf(v, sizeof v, "%lld.%03lld", (long long)(milli / 1000),
                 (long long)(milli % 1000));
    else
        snprintf(v, sizeof v, "max");
    tsc_rec_meta(TSC_META_CPU_QUOTA, v);
    tsc_rec_meta(TSC_META_CPU_QUOTA_SOURCE, source);
    /* Worker processes are found through this file (CONFIG_PROC_CHILDREN):
     * without it "no workers" would be a guess. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    tsc_meta_set_int(TSC_META_WORKERS_VISIBLE, access(path, R_OK) == 0);
    const char *omp = getenv("OMP_NUM_THREADS");
    tsc_rec_meta(TSC_META_OMP_THREADS, omp && *omp ? omp : "unset");
}

static task_slot *find_or_claim(uint32_t id, int role, uint64_t ticks)
{
    task_slot *free_slot = NULL;
    for (size_t i = 0; i < TSC_HOST_MAX_TASKS; i++) {
        if (g_tasks[i].id == id)
            return &g_tasks[i];
        if (!g_tasks[i].id && !free_slot)
            free_slot = &g_tasks[i];
    }
    /* Idle "other" threads are not worth a slot: most processes have many. */
    if (!free_slot || (role == TSC_TASK_OTHER && ticks == 0))
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->id = id;
    free_slot->ticks = UINT64_MAX; /* first sight is a change */
    return free_slot;
}

static void note_task(uint32_t id, const tsc_task_stat *st, int role, uint64_t now,
                      uint64_t ns_per_tick)
{
    task_slot *t = find_or_claim(id, role, st->cpu_ticks);
    if (!t)
        return;
    t->seen = 1;
    if (!t->desc || t->role != role || strcmp(t->comm, st->comm)) {
        unsigned char payload[sizeof(tsc_desc_task) + 16];
        tsc_desc_task d = {.tid = id, .role = (uint8_t)role,
                           .name_len = (uint32_t)strnlen(st->comm, 16)};
        memcpy(payload, &d, sizeof d);
        memcpy(payload + sizeof d, st->comm, d.name_len);
        t->desc = tsc_rec_intern(TSC_DESC_TASK, payload, (uint16_t)(sizeof d + d.name_len));
        t->role = (uint8_t)role;
        memcpy(t->comm, st->comm, sizeof t->comm);
    }
    if (t->ticks != st->cpu_ticks && t->desc)
        tsc_rec_event(TSC_EV_TASK_CPU, 0, (uint16_t)st->state, t->desc, now, now,
                      st->cpu_ticks * ns_per_tick);
    t->ticks = st->cpu_ticks;
    t->state = st->state;
}

/* Worker processes: the children of the main thread (where Python's
 * multiprocessing forks them).  Returns the runnable ones. */
static uint32_t sample_children(pid_t pid, uint64_t now, uint64_t ns_per_tick)
{
    char path[96], buf[2048], sbuf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)pid);
    if (tsc_read_small(path, buf, sizeof buf) <= 0)
        return 0;
    uint32_t runnable = 0;
    char *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(buf, " \n", &save); tok && n < TSC_HOST_MAX_TASKS;
         tok = strtok_r(NULL, " \n", &save), n++) {
        snprintf(path, sizeof path, "/proc/%s/stat", tok);
        long len = tsc_read_small(path, sbuf, sizeof sbuf);
        tsc_task_stat st;
        if (len <= 0 || tsc_parse_task_stat(sbuf, (size_t)len, &st) < 0 || st.ppid != pid)
            continue;
        runnable += st.state == 'R';
        note_task((uint32_t)strtoul(tok, NULL, 10), &st, TSC_TASK_WORKER, now, ns_per_tick);
    }
    return runnable;
}

static void sample_load(uint64_t now)
{
    char buf[256];
    uint64_t load;
    uint32_t running;
    if (tsc_read_small("/proc/loadavg", buf, sizeof buf) <= 0 ||
        tsc_parse_loadavg(buf, &load, &running) < 0)
        return;
    if (load == g_last_load && running == g_last_running)
        return;
    g_last_load = load;
    g_last_running = running;
    tsc_rec_event(TSC_EV_HOST_LOAD, 0, (uint16_t)(running > 65535 ? 65535 : running), 0, now,
                  now, load);
}

/* The main thread losing its CPU while runnable, and the process waiting
 * on pages from disk: host evidence a busy CPU alone does not show. */
static void sample_pressure(uint64_t now)
{
    char buf[2048];
    uint64_t switches;
    if (tsc_read_small("/proc/self/status", buf, sizeof buf) > 0 &&
        tsc_parse_status_nonvoluntary(buf, &switches) == 0 && switches != g_last_switches) {
        g_last_switches = switches;
        tsc_rec_event(TSC_EV_PROC_SWITCHES, 0, 0, 0, now, now, switches);
    }
    long len = tsc_read_small("/proc/self/stat", buf, sizeof buf);
    tsc_task_stat st;
    if (len > 0 && tsc_parse_task_stat(buf, (size_t)len, &st) == 0 &&
        st.majflt != g_last_faults) {
        g_last_faults = st.majflt;
        tsc_rec_event(TSC_EV_PROC_FAULTS, 0, 0, 0, now, now, st.majflt);
    }
}

/* Contention measured directly: the time the main thread waited for a CPU
 * while runnable (its schedstat), and the time the cgroup's CPU quota held
 * the whole process off the CPU (cpu.stat). */
static void sample_contention(pid_t pid, uint64_t now)
{
    char path[96], buf[1024];
    uint64_t run, wait;
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)pid);
    if (tsc_read_small(path, buf, sizeof buf) > 0 && tsc_parse_schedstat(buf, &run, &wait) == 0) {
        if (wait != g_last_wait)
            tsc_rec_event(TSC_EV_SCHED_WAIT, 0, 0, 0, now, now, wait);
        if (run != g_last_run)
            tsc_rec_event(TSC_EV_SCHED_RUN, 0, 0, 0, now, now, run);
        g_last_wait = wait;
        g_last_run = run;
    }
    uint64_t periods, throttled;
    if (g_cpu_stat[0] && tsc_read_small(g_cpu_stat, buf, sizeof buf) > 0 &&
        tsc_parse_cpu_stat(buf, &periods, &throttled) == 0 && throttled != g_last_throttled) {
        g_last_throttled = throttled;
        tsc_rec_event(TSC_EV_CPU_THROTTLE, g_cpu_stat_v1 ? 1 : 2, 0,
                      (uint32_t)(periods > UINT32_MAX ? UINT32_MAX : periods), now, now, throttled);
    }
}

void tsc_host_sample(uint32_t self_tid)
{
    uint64_t now = tsc_now_ns();
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t ns_per_tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
    pid_t pid = getpid();
    for (size_t i = 0; i < TSC_HOST_MAX_TASKS; i++)
        g_tasks[i].seen = 0;

    uint32_t threads = 0, runnable = 0;
    DIR *d = opendir("/proc/self/task");
    if (d) {
        char path[96], buf[1024];
        struct dirent *e;
        while ((e = readdir(d)) && threads < TSC_HOST_MAX_SCAN) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            threads++;
            uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
            snprintf(path, sizeof path, "/proc/self/task/%u/stat", tid);
            long len = tsc_read_small(path, buf, sizeof buf);
            tsc_task_stat st;
            if (len <= 0 || tsc_parse_task_stat(buf, (size_t)len, &st) < 0)
                continue;
            if (tid != self_tid)
                runnable += st.state == 'R';
            note_task(tid, &st, tsc_task_role(st.comm, tid == (uint32_t)pid), now,
                      ns_per_tick);
        }
        closedir(d);
    }
    runnable += sample_children(pid, now, ns_per_tick);
    /* Tasks that are gone free their slot. */
    for (size_t i = 0; i < TSC_HOST_MAX_TASKS; i++)
        if (g_tasks[i].id && !g_tasks[i].seen)
            g_tasks[i].id = 0;

    struct timespec ts;
    uint64_t cpu = 0;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    tsc_rec_event(TSC_EV_PROC_CPU, 0, (uint16_t)(runnable > 65535 ? 65535 : runnable), threads,
                  now, now, cpu);
    sample_load(now);
    sample_pressure(now);
    sample_contention(pid, now);
}
