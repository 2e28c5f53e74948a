/* Pure parts of the telemetry capture: /proc and cgroup parsing on fixture
 * text, NVML loading and record decoding through the test
 * libnvidia-ml.so.1 (fakenvml/), and which GPU changes get recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "host_proc.h"
#include "net_ports.h"
#include "nvml_api.h"

static void test_task_stat(void **state)
{
    (void)state;
    /* A name with spaces and a ')' inside, as prctl allows. */
    const char *line = "4242 (pt_autograd) 0) R 4200 4242 4242 0 -1 4194560 100 0 7 0 "
                       "731 269 0 0 20 0 3 0 12345 1000000 200 18446744073709551615\n";
    tsc_task_stat st;
    assert_int_equal(tsc_parse_task_stat(line, strlen(line), &st), 0);
    assert_int_equal(st.state, 'R');
    assert_string_equal(st.comm, "pt_autograd) 0");
    assert_int_equal(st.ppid, 4200);
    assert_int_equal(st.cpu_ticks, 731 + 269);
    assert_int_equal(st.majflt, 7);
    /* /proc/<pid>/status: the involuntary switches, not the voluntary ones
     * the line before (whose name it ends). */
    const char *status = "Name:\tpython3\nState:\tR (running)\nvoluntary_ctxt_switches:\t912\n"
                         "nonvoluntary_ctxt_switches:\t37\n";
    uint64_t sw = 0;
    assert_int_equal(tsc_parse_status_nonvoluntary(status, &sw), 0);
    assert_int_equal(sw, 37);
    assert_int_equal(tsc_parse_status_nonvoluntary("Name:\tx\nvoluntary_ctxt_switches:\t3\n", &sw),
                     -1);
    assert_int_equal(tsc_parse_status_nonvoluntary("Name:\tx\nnonvoluntary_ctxt_switches:\tz\n",
                                                   &sw), -1);
    const char *cut = "4242 (x) S 1 2 3";
    assert_int_equal(tsc_parse_task_stat(cut, strlen(cut), &st), -1);
    assert_int_equal(tsc_parse_task_stat("garbage", 7, &st), -1);
    assert_int_equal(tsc_task_role("pt_autograd_0", 0), TSC_TASK_AUTOGRAD);
    assert_int_equal(tsc_task_role("NCCL Progress", 0), TSC_TASK_NCCL);
    assert_int_equal(tsc_task_role("python", 1), TSC_TASK_MAIN);
    assert_int_equal(tsc_task_role("tscope-writer", 0), TSC_TASK_TSCOPE);
    assert_int_equal(tsc_task_role("burner", 0), TSC_TASK_OTHER);
}

/* Contention read directly: schedstat's wait, cpu.stat's throttled time
 * in both cgroup versions' units. */
static void test_contention_text(void **state)
{
    (void)state;
    uint64_t run = 0, wait = 0;
    assert_int_equal(tsc_parse_schedstat("187903158 366752823 474\n", &run, &wait), 0);
    assert_int_equal(run, 187903158);
    assert_int_equal(wait, 366752823);
    assert_int_equal(tsc_parse_schedstat("12\n", &run, &wait), -1);
    assert_int_equal(tsc_parse_schedstat("", &run, &wait), -1);
    uint64_t periods = 0, ns = 0;
    const char *v2 = "usage_usec 489568965\nuser_usec 1\nsystem_usec 2\nnr_periods 40\n"
                     "nr_throttled 12\nthrottled_usec 3500\nnr_bursts 0\n";
    assert_int_equal(tsc_parse_cpu_stat(v2, &periods, &ns), 0);
    assert_int_equal(periods, 12);
    assert_int_equal(ns, 3500000);      /* usec -> ns */
    const char *v1 = "nr_periods 40\nnr_throttled 7\nthrottled_time 2500000\n";
    assert_int_equal(tsc_parse_cpu_stat(v1, &periods, &ns), 0);
    assert_int_equal(periods, 7);
    assert_int_equal(ns, 2500000);      /* already ns */
    /* "throttled_usec_x" is not "throttled_usec" */
    assert_int_equal(tsc_parse_cpu_stat("nr_throttled 1\nthrottled_usec_x 9\n", &periods, &ns),
                     -1);
    assert_int_equal(tsc_parse_cpu_stat("usage_usec 5\n", &periods, &ns), -1);
}

/* InfiniBand port state and rate as sysfs writes them. */
static void test_ib_text(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(tsc_parse_ib_state("4: ACTIVE\n", &v), 0);
    assert_int_equal(v, 4);
    assert_int_equal(tsc_parse_ib_state("1: DOWN\n", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(tsc_parse_ib_state("ACTIVE\n", &v), -1);
    assert_int_equal(tsc_parse_ib_rate("100 Gb/sec (4X EDR)\n", &v), 0);
    assert_int_equal(v, 100000);
    assert_int_equal(tsc_parse_ib_rate("2.5 Gb/sec (1X SDR)\n", &v), 0);
    assert_int_equal(v, 2500);
    assert_int_equal(tsc_parse_ib_rate("fast\n", &v), -1);
    assert_int_equal(tsc_parse_ib_rate("100 Mb/sec\n", &v), -1);
}

static void test_quota_text(void **state)
{
    (void)state;
    int64_t m = -5;
    assert_int_equal(tsc_parse_cpu_max("max 100000\n", &m), 0);
    assert_int_equal(m, 0);
    assert_int_equal(tsc_parse_cpu_max("150000 100000\n", &m), 0);
    assert_int_equal(m, 1500);
    assert_int_equal(tsc_parse_cpu_max("banana", &m), -1);
    assert_int_equal(tsc_parse_cpu_max("100 0", &m), -1);
    assert_int_equal(tsc_parse_cfs_v1("-1\n", "100000\n", &m), 0);
    assert_int_equal(m, 0);
    assert_int_equal(tsc_parse_cfs_v1("50000\n", "100000\n", &m), 0);
    assert_int_equal(m, 500);
    char path[256];
    const char *v2 = "0::/user.slice/job.scope\n";
    assert_int_equal(tsc_parse_proc_cgroup(v2, 0, path, sizeof path), 0);
    assert_string_equal(path, "/user.slice/job.scope");
    assert_int_equal(tsc_parse_proc_cgroup(v2, 1, path, sizeof path), -1);
    const char *v1 = "12:memory:/a\n4:cpuacct,cpu:/slurm/job_7\n1:name=systemd:/x\n";
    assert_int_equal(tsc_parse_proc_cgroup(v1, 1, path, sizeof path), 0);
    assert_string_equal(path, "/slurm/job_7");
    assert_int_equal(tsc_parse_proc_cgroup(v1, 0, path, sizeof path), -1);
    uint64_t load;
    uint32_t running;
    assert_int_equal(tsc_parse_loadavg("3.25 2.00 1.00 7/1234 5678\n", &load, &running), 0);
    assert_int_equal(load, 3250);
    assert_int_equal(running, 7);
}

static void put(const char *root, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void mk(const char *root, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    assert_int_equal(mkdir(p, 0755), 0);
}

/* The limit of an ancestor group applies to its children: the smallest
 * one on the way to the root wins. */
static void test_cgroup_tree(void **state)
{
    (void)state;
    char root[] = "/tmp/tsc_cg_XXXXXX";
    assert_non_null(mkdtemp(root));
    put(root, "/cpu.max", "max 100000\n");
    mk(root, "/job");
    put(root, "/job/cpu.max", "250000 100000\n");
    mk(root, "/job/step");
    put(root, "/job/step/cpu.max", "max 100000\n");
    int64_t m;
    const char *src;
    tsc_cgroup_cpu_limit(root, "0::/job/step\n", &m, &src);
    assert_int_equal(m, 2500);
    assert_string_equal(src, "cgroup2");
    tsc_cgroup_cpu_limit(root, "0::/\n", &m, &src);
    assert_int_equal(m, 0);
    assert_string_equal(src, "cgroup2");
    /* v1: cpu,cpuacct hierarchy. */
    mk(root, "/cpu,cpuacct");
    mk(root, "/cpu,cpuacct/slurm");
    put(root, "/cpu,cpuacct/slurm/cpu.cfs_quota_us", "100000\n");
    put(root, "/cpu,cpuacct/slurm/cpu.cfs_period_us", "100000\n");
    tsc_cgroup_cpu_limit(root, "4:cpu,cpuacct:/slurm\n", &m, &src);
    assert_int_equal(m, 1000);
    assert_string_equal(src, "cgroup1");
    tsc_cgroup_cpu_limit(root, "4:memory:/x\n", &m, &src);
    assert_int_equal(m, 0);
    assert_string_equal(src, "none");
    /* cpu.stat: where the limit is (v1 /slurm, not its child), else the
     * process's own group */
    mk(root, "/cpu,cpuacct/slurm/step");
    put(root, "/cpu,cpuacct/slurm/cpu.stat", "nr_throttled 3\nthrottled_time 9\n");
    put(root, "/cpu,cpuacct/slurm/step/cpu.stat", "nr_throttled 0\nthrottled_time 0\n");
    char path[600], want[600];
    int v1 = -1;
    assert_int_equal(tsc_cgroup_cpu_stat_path(root, "4:cpu,cpuacct:/slurm/step\n", path,
                                              sizeof path, &v1), 0);
    snprintf(want, sizeof want, "%s/cpu,cpuacct/slurm/cpu.stat", root);
    assert_string_equal(path, want);
    assert_int_equal(v1, 1);
    put(root, "/cpu.stat", "nr_throttled 0\nthrottled_usec 0\n");
    assert_int_equal(tsc_cgroup_cpu_stat_path(root, "0::/job/step\n", path, sizeof path, &v1),
                     -1);   /* the v2 group with the limit, /job, has no cpu.stat */
    put(root, "/job/cpu.stat", "nr_throttled 0\nthrottled_usec 0\n");
    assert_int_equal(tsc_cgroup_cpu_stat_path(root, "0::/job/step\n", path, sizeof path, &v1),
                     0);
    snprintf(want, sizeof want, "%s/job/cpu.stat", root);
    assert_string_equal(path, want);
    assert_int_equal(v1, 0);
    assert_int_equal(tsc_cgroup_cpu_stat_path(root, "0::/\n", path, sizeof path, &v1), 0);
    snprintf(want, sizeof want, "%s/cpu.stat", root);
    assert_string_equal(path, want);   /* no limit: its own group's */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static char fake_lib[512];

static void test_nvml_decode(void **state)
{
    (void)state;
    char why[256];
    setenv("RANK", "3", 1);
    setenv("FAKE_NVML_THROTTLE_RANK", "3", 1);
    setenv("FAKE_NVML_PCIE_RANK", "3", 1);
    setenv("FAKE_NVML_XID_RANK", "3", 1);
    setenv("FAKE_NVML_NVLINK_RANK", "3", 1);
    setenv("FAKE_NVML_MEMORY_RANK", "3", 1);
    tsc_nvml *n = tsc_nvml_open(fake_lib, why, sizeof why);
    assert_non_null(n);
    char name[64];
    /* local rank 0 -> CUDA_VISIBLE_DEVICES' first entry, NVML index 1. */
    assert_int_equal(tsc_nvml_pick(n, 0, "1,0", name, sizeof name), 1);
    assert_string_equal(name, "Fake GPU");
    assert_int_equal(tsc_nvml_pick(n, 1, NULL, name, sizeof name), 1);
    assert_int_equal(tsc_nvml_pick(n, 7, NULL, name, sizeof name), 0); /* out of range */
    assert_int_equal(tsc_nvml_max_sm_clock(n), 1980);
    tsc_gpu_sample s;
    tsc_nvml_sample(n, &s, 1);
    assert_int_equal(s.v[TSC_GPU_SM_CLOCK_MHZ], 1100);
    assert_int_equal(s.v[TSC_GPU_MEM_CLOCK_MHZ], 1593);
    assert_int_equal(s.v[TSC_GPU_POWER_MW], 450000);
    assert_int_equal(s.v[TSC_GPU_TEMP_C], 92);
    assert_int_equal(s.v[TSC_GPU_CLOCK_REASONS], 0x60);
    assert_int_equal(s.v[TSC_GPU_UTIL_PCT], 90);
    assert_int_equal(s.v[TSC_GPU_MEM_UTIL_PCT], 40);
    assert_int_equal(s.v[TSC_GPU_MEM_USED_BYTES], 1ull << 30);
    /* a down-trained PCIe link, retrying */
    assert_int_equal(s.v[TSC_GPU_PCIE_GEN], 3);
    assert_int_equal(s.v[TSC_GPU_PCIE_GEN_MAX], 4);
    assert_int_equal(s.v[TSC_GPU_PCIE_WIDTH], 8);
    assert_int_equal(s.v[TSC_GPU_PCIE_WIDTH_MAX], 16);
    assert_int_equal(s.v[TSC_GPU_PCIE_REPLAYS], 7);
    /* one XID 79 event, read without waiting */
    assert_int_equal(s.v[TSC_GPU_XID_EVENTS], 1);
    assert_int_equal(s.v[TSC_GPU_XID_LAST], 79);
    /* NVLink: 3 of 4 links up, link 0's error counters summed (CRC: flit
     * and data) */
    assert_int_equal(s.v[TSC_GPU_NVLINK_LINKS], 4);
    assert_int_equal(s.v[TSC_GPU_NVLINK_ACTIVE], 3);
    assert_int_equal(s.v[TSC_GPU_NVLINK_REPLAYS], 3);
    assert_int_equal(s.v[TSC_GPU_NVLINK_RECOVERIES], 1);
    assert_int_equal(s.v[TSC_GPU_NVLINK_CRC], 5);
    /* memory: 2 retired pages (double-bit), one row remapped and pending,
     * aggregate ECC counts */
    assert_int_equal(s.v[TSC_GPU_RETIRED_PAGES], 2);
    assert_int_equal(s.v[TSC_GPU_REMAP_UNCORRECTABLE], 1);
    assert_int_equal(s.v[TSC_GPU_REMAP_CORRECTABLE], 0);
    assert_int_equal(s.v[TSC_GPU_REMAP_STATE], 1);
    assert_int_equal(s.v[TSC_GPU_ECC_UNCORRECTED_AGG], 1);
    assert_int_equal(s.v[TSC_GPU_ECC_CORRECTED_AGG], 10);
    /* The volatile ECC counter answers "not supported" and the pending
     * retirement's entry point is missing: both metrics absent, not 0. */
    assert_false(s.have & (1u << TSC_GPU_ECC_UNCORRECTED));
    assert_false(s.have & (1u << TSC_GPU_RETIRED_PENDING));
    assert_int_equal(s.have, ((1u << TSC_GPU_METRIC_COUNT) - 2) &
                                 ~(1u << TSC_GPU_ECC_UNCORRECTED) &
                                 ~(1u << TSC_GPU_RETIRED_PENDING));
    setenv("RANK", "2", 1);
    tsc_gpu_sample t;
    tsc_nvml_sample(n, &t, 1);
    assert_int_equal(t.v[TSC_GPU_SM_CLOCK_MHZ], 1980);
    assert_int_equal(t.v[TSC_GPU_CLOCK_REASONS], 0);
    assert_int_equal(t.v[TSC_GPU_PCIE_WIDTH], 16);
    assert_int_equal(t.v[TSC_GPU_PCIE_REPLAYS], 7);   /* no new replays */
    assert_int_equal(t.v[TSC_GPU_XID_EVENTS], 1);      /* no new event */
    assert_int_equal(t.v[TSC_GPU_XID_LAST], 79);
    assert_int_equal(t.v[TSC_GPU_NVLINK_ACTIVE], 4);
    assert_int_equal(t.v[TSC_GPU_NVLINK_REPLAYS], 3);  /* no new errors */
    assert_int_equal(t.v[TSC_GPU_RETIRED_PAGES], 0);
    assert_int_equal(t.v[TSC_GPU_REMAP_STATE], 0);
    assert_int_equal(t.v[TSC_GPU_ECC_UNCORRECTED_AGG], 1);
    /* without the health counters (read at a slower pace) those are absent */
    tsc_gpu_sample u;
    tsc_nvml_sample(n, &u, 0);
    assert_true(u.have & (1u << TSC_GPU_SM_CLOCK_MHZ));
    assert_true(u.have & (1u << TSC_GPU_XID_EVENTS));
    for (int m = TSC_GPU_NVLINK_ACTIVE; m < TSC_GPU_METRIC_COUNT; m++)
        assert_false(u.have & (1u << m));
    tsc_nvml_close(n);
    unsetenv("FAKE_NVML_NVLINK_RANK");
    unsetenv("FAKE_NVML_MEMORY_RANK");
    unsetenv("FAKE_NVML_PCIE_RANK");
    unsetenv("FAKE_NVML_XID_RANK");

    setenv("FAKE_NVML_FAIL_INIT", "1", 1);
    assert_null(tsc_nvml_open(fake_lib, why, sizeof why));
    assert_non_null(strstr(why, "nvmlInit_v2 failed"));
    unsetenv("FAKE_NVML_FAIL_INIT");
    assert_null(tsc_nvml_open("/nonexistent/libnvidia-ml.so.1", why, sizeof why));
    assert_non_null(strstr(why, "not found"));
    /* A library without the required entry points is refused by name. */
    assert_null(tsc_nvml_open("libm.so.6", why, sizeof why));
    assert_non_null(strstr(why, "lacks nvmlInit_v2"));
}

static void test_gpu_changes(void **state)
{
    (void)state;
    tsc_gpu_sample a = {0}, b;
    a.have = (1u << TSC_GPU_SM_CLOCK_MHZ) | (1u << TSC_GPU_POWER_MW) |
             (1u << TSC_GPU_CLOCK_REASONS) | (1u << TSC_GPU_MEM_USED_BYTES);
    a.v[TSC_GPU_SM_CLOCK_MHZ] = 1980;
    a.v[TSC_GPU_POWER_MW] = 300000;
    a.v[TSC_GPU_MEM_USED_BYTES] = 1ull << 30;
    uint16_t m[TSC_GPU_METRIC_COUNT];
    uint64_t v[TSC_GPU_METRIC_COUNT];
    assert_int_equal(tsc_gpu_changes(NULL, &a, m, v), 4); /* first sample: everything */
    assert_int_equal(m[0], TSC_GPU_SM_CLOCK_MHZ);
    assert_int_equal(v[0], 1980);
    b = a;
    assert_int_equal(tsc_gpu_changes(&a, &b, m, v), 0);
    b.v[TSC_GPU_POWER_MW] = 304999;               /* inside the 5 W band */
    b.v[TSC_GPU_MEM_USED_BYTES] += 63ull << 20;   /* inside 64 MiB */
    assert_int_equal(tsc_gpu_changes(&a, &b, m, v), 0);
    b.v[TSC_GPU_POWER_MW] = 305000;
    b.v[TSC_GPU_CLOCK_REASONS] = 0x40;
    b.v[TSC_GPU_SM_CLOCK_MHZ] = 1979;             /* clocks: exact */
    assert_int_equal(tsc_gpu_changes(&a, &b, m, v), 3);
    assert_int_equal(m[0], TSC_GPU_SM_CLOCK_MHZ);
    assert_int_equal(m[1], TSC_GPU_POWER_MW);
    assert_int_equal(m[2], TSC_GPU_CLOCK_REASONS);
    assert_int_equal(v[2], 0x40);
    b.have &= ~(1u << TSC_GPU_SM_CLOCK_MHZ);      /* not read this time: nothing */
    assert_int_equal(tsc_gpu_changes(&a, &b, m, v), 2);
}

int main(void)
{
    const char *dir = getenv("TB_FAKENVML_DIR");
    snprintf(fake_lib, sizeof fake_lib, "%s/libnvidia-ml.so.1", dir ? dir : ".");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_stat), cmocka_unit_test(test_quota_text),
        cmocka_unit_test(test_contention_text), cmocka_unit_test(test_ib_text),
        cmocka_unit_test(test_cgroup_tree), cmocka_unit_test(test_nvml_decode),
        cmocka_unit_test(test_gpu_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
