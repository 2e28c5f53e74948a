/* Test-bed jobs for the plugin's end-to-end tests (nprof_run.h). */
#include "nprof_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tsc_nccl_ops.h"

static char base[256];

int np_ready(void)
{
    const char *need[] = {"TB_PRELOAD", "TB_FAKENCCL_DIR", "TB_LAUNCH", "TB_RANK"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const char *p = getenv(need[i]);
        if (!p || !*p || access(p, F_OK) != 0)
            return 77;
    }
    return 0;
}

int np_begin(const char *name)
{
    snprintf(base, sizeof base, "/tmp/tsc_%s.%d", name, (int)getpid());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

int np_done(void)
{
    /* TSC_NP_KEEP=1 keeps the jobs' folders, to read a failed run's dumps */
    if (getenv("TSC_NP_KEEP"))
        return 0;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

int np_run(const char *tag, const char *env, char *dir, size_t cap)
{
    return np_run_with(tag, env, "", dir, cap);
}

/* The streaming report's lean ranks keep the plugin's records reduced
 * (load/nprof_lean.h): on every job the JSON and the text must be the
 * in-memory path's, byte for byte. */
static void same_streamed(const char *dir)
{
    const char *report = getenv("TB_REPORT");
    if (!report || !*report)
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "for f in --json --color=never; do '%s' '%s' $f --in-memory >'%s.mem' 2>&1; "
             "'%s' '%s' $f --stream-above 0 --jobs 2 >'%s.str' 2>&1; "
             "cmp -s '%s.mem' '%s.str' || { diff '%s.mem' '%s.str' | head -20 >&2; exit 1; }; "
             "done",
             report, dir, dir, report, dir, dir, dir, dir, dir, dir);
    if (system(cmd) != 0)
        fail_msg("%s: the streaming report differs from --in-memory", dir);
}

int np_run_with(const char *tag, const char *env, const char *rank_args, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/%s", base, tag);
    char cmd[8192];
    const char *asan = getenv("TB_ASAN_RUNTIME");
    snprintf(cmd, sizeof cmd,
             "env -u TSCOPE_DISABLE -u CUDA_INJECTION64_PATH -u NCCL_PROFILER_PLUGIN "
             "LD_PRELOAD='%s%s%s' LD_LIBRARY_PATH='%s' TSCOPE_OUT='%s' TSCOPE_RUN_ID=np "
             "FAKENCCL_TIMEOUT_S=20 FAKENCCL_CHANNELS=%d %s '%s' -n %d -- '%s' --steps 4 "
             "--compute-us 500 %s >'%s.log' 2>&1",
             asan && *asan ? asan : "", asan && *asan ? " " : "", getenv("TB_PRELOAD"),
             getenv("TB_FAKENCCL_DIR"), dir, NP_CHANNELS, env, getenv("TB_LAUNCH"), NP_RANKS,
             getenv("TB_RANK"), rank_args, dir);
    int rc = system(cmd);
    if (rc == 0)
        same_streamed(dir);
    return rc;
}

tsa_job *np_load(const char *dir)
{
    tsa_job *job = NULL;
    tsa_load_options lo = {.quiet = 1};
    assert_int_equal(tsa_job_load(dir, &lo, &job), 0);
    assert_int_equal(job->n_ranks, NP_RANKS);
    return job;
}

/* The first cap - 1 bytes of a command's output or a file. */
static char *slurp(FILE *f, size_t cap)
{
    char *buf = malloc(cap);
    size_t n = 0;
    while (buf && n < cap - 1) {
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        if (!got)
            break;
        n += got;
    }
    if (buf)
        buf[n] = 0;
    return buf;
}

int np_log_has(const char *dir, const char *needle)
{
    char path[512];
    snprintf(path, sizeof path, "%s.log", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *buf = slurp(f, 1 << 16);
    fclose(f);
    int hit = buf && strstr(buf, needle) != NULL;
    free(buf);
    return hit;
}

int np_meta_has(const char *dir, const char *key, const char *value)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cat '%s'/*.tsd", dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    size_t cap = 1 << 24, n = 0;
    char *buf = malloc(cap);
    while (buf && n < cap && (n += fread(buf + n, 1, cap - n, p)) && !feof(p))
        ;
    pclose(p);
    char want[256];
    int wl = snprintf(want, sizeof want, "%s%c%s", key, 0, value);
    int hit = buf && memmem(buf, n, want, (size_t)wl) != NULL;
    free(buf);
    return hit;
}

int np_report_has(const char *dir, const char *args, const char *needle)
{
    const char *report = getenv("TB_REPORT");
    if (!report || !*report)
        fail_msg("TB_REPORT is not set");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' '%s' %s 2>&1", report, dir, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char *out = slurp(p, 1 << 22);
    pclose(p);
    int hit = out && strstr(out, needle) != NULL;
    if (!hit)
        fprintf(stderr, "report %s of %s lacks \"%s\"\n", args, dir, needle);
    free(out);
    return hit;
}

int np_is_coll(uint8_t op) { return op >= TSC_NCCL_ALLREDUCE && op <= TSC_NCCL_SCATTER; }
int np_is_p2p(uint8_t op) { return op == TSC_NCCL_SEND || op == TSC_NCCL_RECV; }

uint32_t np_comm_size(const tsa_rank *r, uint64_t comm_id)
{
    for (size_t i = 0; i < r->n_nccl; i++)
        if (r->nccl[i].comm_id == comm_id)
            return r->nccl[i].comm_size;
    return 0;
}
