/* Parsers for the host facts the telemetry sampler reads from /proc and
 * the cgroup file system.  Pure functions over text (and, for the cgroup
 * quota, files under a root directory) so tests can feed them fixtures. */
#ifndef TSC_HOST_PROC_H
#define TSC_HOST_PROC_H

#include <stddef.h>
#include <stdint.h>

/* One line of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat. */
typedef struct tsc_task_stat {
    char state;          /* 'R', 'S', 'D', ... */
    char comm[17];       /* the name between the parentheses, cut at 16 bytes */
    int32_t ppid;
    uint64_t cpu_ticks;  /* utime + stime, in clock ticks */
    uint64_t majflt;     /* major page faults (of all threads in /proc/<pid>/stat) */
} tsc_task_stat;

/* 0, or -1 when the text is not a stat line.  The name may contain spaces
 * and parentheses: the fields resume after the last ')'. */
int tsc_parse_task_stat(const char *text, size_t len, tsc_task_stat *out);

/* cgroup v2 cpu.max ("max 100000" or "150000 100000"): the limit in
 * milli-CPUs in *milli, 0 when unlimited.  0, or -1 on bad text. */
int tsc_parse_cpu_max(const char *text, int64_t *milli);

/* cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us (quota -1: unlimited). */
int tsc_parse_cfs_v1(const char *quota, const char *period, int64_t *milli);

/* The cgroup path of this process in /proc/self/cgroup text: the v2 entry
 * ("0::/path") when v1 is 0, else the v1 hierarchy whose controllers
 * include "cpu".  0, or -1 when there is none. */
int tsc_parse_proc_cgroup(const char *text, int v1, char *path, size_t cap);

/* The effective cgroup CPU limit of a process whose /proc/self/cgroup is
 * `proc_cgroup`, reading cpu.max (v2) or cpu.cfs_* (v1) files under
 * sys_root ("/sys/fs/cgroup" on a real host) from the process's own group
 * up to the root; the smallest limit wins, as the kernel enforces.  *milli
 * = 0 when no limit is set; *source = "cgroup2", "cgroup1" or "none". */
void tsc_cgroup_cpu_limit(const char *sys_root, const char *proc_cgroup, int64_t *milli,
                          const char **source);

/* The cpu.stat file whose throttling slows this process: the one of the
 * nearest cgroup (itself or an ancestor) with a CPU limit, else its own,
 * under sys_root as for tsc_cgroup_cpu_limit.  *v1 = 1 for cgroup v1.
 * 0, or -1 when there is none. */
int tsc_cgroup_cpu_stat_path(const char *sys_root, const char *proc_cgroup, char *path,
                             size_t cap, int *v1);

/* cpu.stat text: periods throttled and the time throttled in ns (v2
 * "throttled_usec", v1 "throttled_time" in ns).  0, or -1 when neither
 * time line is there. */
int tsc_parse_cpu_stat(const char *text, uint64_t *nr_throttled, uint64_t *throttled_ns);

/* /proc/<pid>/task/<tid>/schedstat: "run_ns wait_ns timeslices"; the time
 * spent on the CPU and runnable but waiting for it.  0, or -1 on bad text. */
int tsc_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns);

/* /proc/loadavg: 1-minute load x 1000 and the running-task count. */
int tsc_parse_loadavg(const char *text, uint64_t *load_milli, uint32_t *running);

/* /proc/<pid>/status: nonvoluntary_ctxt_switches of the (main) thread.
 * 0, or -1 when the line is missing or bad. */
int tsc_parse_status_nonvoluntary(const char *text, uint64_t *switches);

/* Role of a thread from its name (enum tsc_task_role). */
int tsc_task_role(const char *comm, int is_main);

/* Reads a small file into buf (NUL-terminated); bytes read, or -1. */
long tsc_read_small(const char *path, char *buf, size_t cap);

#endif
