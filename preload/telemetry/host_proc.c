/* Text parsers for /proc and cgroup files (host_proc.h). */
#include "host_proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsc_format.h"

long tsc_read_small(const char *path, char *buf, size_t cap)
{
    if (!cap)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = 0;
    return (long)got;
}

/* Unsigned decimal at *p, moving *p past it; -1 when there is none. */
static int next_u64(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    int neg = s < end && *s == '-';
    if (neg)
        s++;
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    uint64_t x = 0;
    while (s < end && *s >= '0' && *s <= '9')
        x = x * 10 + (uint64_t)(*s++ - '0');
    *v = neg ? 0 : x;
    *p = s;
    return 0;
}

int tsc_parse_task_stat(const char *text, size_t len, tsc_task_stat *out)
{
    const char *end = text + len;
    const char *open_p = memchr(text, '(', len);
    const char *close_p = NULL;
    for (const char *q = end; q > text; q--)
        if (q[-1] == ')') {
            close_p = q - 1;
            break;
        }
    if (!open_p || !close_p || close_p < open_p || end - close_p < 4)
        return -1;
    memset(out, 0, sizeof *out);
    size_t n = (size_t)(close_p - open_p - 1);
    if (n > 16)
        n = 16;
    memcpy(out->comm, open_p + 1, n);
    const char *p = close_p + 1;
    while (p < end && *p == ' ')
        p++;
    if (p >= end)
        return -1;
    out->state = *p++;
    /* Fields 4 (ppid) .. 15 (stime); 3 was the state. */
    uint64_t f[12];
    for (int i = 0; i < 12; i++)
        if (next_u64(&p, end, &f[i]) < 0)
            return -1;
    out->ppid = (int32_t)f[0];
    out->majflt = f[8];
    out->cpu_ticks = f[10] + f[11];
    return 0;
}

int tsc_parse_status_nonvoluntary(const char *text, uint64_t *switches)
{
    static const char key[] = "\nnonvoluntary_ctxt_switches:";
    const char *p = strstr(text, key);
    if (!p)
        return -1;
    p += sizeof key - 1;
    while (*p == '\t' || *p == ' ')
        p++;
    const char *end = p + strlen(p);
    return next_u64(&p, end, switches);
}

int tsc_parse_cpu_max(const char *text, int64_t *milli)
{
    while (*text == ' ')
        text++;
    const char *end = text + strlen(text);
    uint64_t period;
    if (!strncmp(text, "max", 3)) {
        const char *p = text + 3;
        if (next_u64(&p, end, &period) < 0)
            return -1;
        *milli = 0;
        return 0;
    }
    uint64_t quota;
    const char *p = text;
    if (next_u64(&p, end, &quota) < 0 || next_u64(&p, end, &period) < 0 || !period)
        return -1;
    *milli = (int64_t)(quota * 1000 / period);
    if (*milli < 1)
        *milli = 1; /* a tiny quota is still a limit */
    return 0;
}

int tsc_parse_cfs_v1(const char *quota, const char *period, int64_t *milli)
{
    char *e;
    long long q = strtoll(quota, &e, 10);
    if (e == quota)
        return -1;
    if (q < 0) {
        *milli = 0;
        return 0;
    }
    long long per = strtoll(period, &e, 10);
    if (e == period || per <= 0)
        return -1;
    *milli = (int64_t)(q * 1000 / per);
    if (*milli < 1)
        *milli = 1;
    return 0;
}

/* 1 when the comma-separated list has "cpu" as an entry. */
static int has_cpu_controller(const char *list, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && list[j] != ',')
            j++;
        if (j - i == 3 && !memcmp(list + i, "cpu", 3))
            return 1;
        i = j + 1;
    }
    return 0;
}

int tsc_parse_proc_cgroup(const char *text, int v1, char *path, size_t cap)
{
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            size_t clen = (size_t)(c2 - c1 - 1);
            int match = v1 ? has_cpu_controller(c1 + 1, clen)
                           : (c1 - line == 1 && line[0] == '0' && clen == 0);
            size_t plen = len - (size_t)(c2 + 1 - line);
            if (match && plen < cap) {
                memcpy(path, c2 + 1, plen);
                path[plen] = 0;
                return 0;
            }
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return -1;
}

/* Smallest positive limit of dir and its ancestors under base; v1 reads
 * two files per level.  best_rel (may be NULL) gets the group that sets it. */
static int64_t walk_limit(const char *base, const char *group, int v1, int *found,
                          char *best_rel, size_t best_cap)
{
    char rel[1024], path[2048], a[128], b[128];
    snprintf(rel, sizeof rel, "%s", group);
    int64_t best = 0;
    for (int depth = 0; depth < 32; depth++) {
        int64_t m = -1;
        if (v1) {
            snprintf(path, sizeof path, "%s%s/cpu.cfs_quota_us", base, rel);
            long ka = tsc_read_small(path, a, sizeof a);
            snprintf(path, sizeof path, "%s%s/cpu.cfs_period_us", base, rel);
            long kb = tsc_read_small(path, b, sizeof b);
            if (ka > 0 && kb > 0 && tsc_parse_cfs_v1(a, b, &m) < 0)
                m = -1;
        } else {
            snprintf(path, sizeof path, "%s%s/cpu.max", base, rel);
            if (tsc_read_small(path, a, sizeof a) > 0 && tsc_parse_cpu_max(a, &m) < 0)
                m = -1;
        }
        if (m >= 0)
            *found = 1;
        if (m > 0 && (best == 0 || m < best)) {
            best = m;
            if (best_rel)
                snprintf(best_rel, best_cap, "%s", rel);
        }
        char *slash = strrchr(rel, '/');
        if (!slash || !rel[0])
            break;
        *slash = 0; /* "/a/b" -> "/a" -> "" (the root) */
    }
    return best;
}

/* The hierarchy's base for this process's group: v2 at sys_root, v1 where
 * the cpu controller is mounted.  0, or -1 when /proc/self/cgroup names
 * no group of that version. */
static int cgroup_base(const char *sys_root, const char *proc_cgroup, int v1, char *base,
                       size_t base_cap, char *group, size_t group_cap)
{
    if (tsc_parse_proc_cgroup(proc_cgroup, v1, group, group_cap) != 0)
        return -1;
    if (!strcmp(group, "/"))
        group[0] = 0;
    if (!v1) {
        snprintf(base, base_cap, "%s", sys_root);
        return 0;
    }
    /* The cpu hierarchy is mounted as cpu,cpuacct or cpu. */
    static const char *const mounts[] = {"/cpu,cpuacct", "/cpu"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(base, base_cap, "%s%s", sys_root, mounts[i]);
        if (access(base, R_OK) == 0)
            return 0;
    }
    return -1;
}

void tsc_cgroup_cpu_limit(const char *sys_root, const char *proc_cgroup, int64_t *milli,
                          const char **source)
{
    char base[1200], group[1024];
    *milli = 0;
    *source = "none";
    for (int v1 = 0; v1 <= 1; v1++) {
        int found = 0;
        if (cgroup_base(sys_root, proc_cgroup, v1, base, sizeof base, group, sizeof group))
            continue;
        *milli = walk_limit(base, group, v1, &found, NULL, 0);
        if (found) {
            *source = v1 ? "cgroup1" : "cgroup2";
            return;
        }
    }
}

int tsc_cgroup_cpu_stat_path(const char *sys_root, const char *proc_cgroup, char *path,
                             size_t cap, int *v1)
{
    char base[1200], group[1024], best[1024];
    for (int version1 = 0; version1 <= 1; version1++) {
        if (cgroup_base(sys_root, proc_cgroup, version1, base, sizeof base, group,
                        sizeof group) != 0)
            continue;
        int found = 0;
        /* Throttling is counted where the limit is: the group that sets the
         * smallest one, else the process's own. */
        snprintf(best, sizeof best, "%s", group);
        walk_limit(base, group, version1, &found, best, sizeof best);
        snprintf(path, cap, "%s%s/cpu.stat", base, best);
        if (access(path, R_OK) == 0) {
            *v1 = version1;
            return 0;
        }
    }
    return -1;
}

/* The value after `key` at the start of a line of text, -1 when none. */
static int line_u64(const char *text, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    for (const char *line = text; *line;) {
        if (!strncmp(line, key, kl) && line[kl] == ' ') {
            const char *p = line + kl;
            return next_u64(&p, p + strcspn(p, "\n"), v);
        }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return -1;
}

int tsc_parse_cpu_stat(const char *text, uint64_t *nr_throttled, uint64_t *throttled_ns)
{
    uint64_t us;
    if (line_u64(text, "throttled_usec", &us) == 0)
        *throttled_ns = us * 1000;
    else if (line_u64(text, "throttled_time", throttled_ns) != 0)
        return -1;
    if (line_u64(text, "nr_throttled", nr_throttled) != 0)
        *nr_throttled = 0;
    return 0;
}

int tsc_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns)
{
    const char *p = text, *end = text + strlen(text);
    if (next_u64(&p, end, run_ns) < 0 || next_u64(&p, end, wait_ns) < 0)
        return -1;
    return 0;
}

int tsc_parse_loadavg(const char *text, uint64_t *load_milli, uint32_t *running)
{
    char *e;
    double l1 = strtod(text, &e);
    if (e == text || l1 < 0)
        return -1;
    *load_milli = (uint64_t)(l1 * 1000 + 0.5);
    /* "0.52 0.58 0.59 3/1234 5678": the running count is before '/'. */
    const char *slash = strchr(e, '/');
    *running = 0;
    if (slash) {
        const char *p = slash;
        while (p > e && p[-1] >= '0' && p[-1] <= '9')
            p--;
        *running = (uint32_t)strtoul(p, NULL, 10);
    }
    return 0;
}

int tsc_task_role(const char *comm, int is_main)
{
    if (is_main)
        return TSC_TASK_MAIN;
    if (!strncmp(comm, "pt_autograd", 11))
        return TSC_TASK_AUTOGRAD;
    if (!strncasecmp(comm, "nccl", 4))
        return TSC_TASK_NCCL;
    if (!strncmp(comm, "tscope-", 7))
        return TSC_TASK_TSCOPE;
    return TSC_TASK_OTHER;
}
