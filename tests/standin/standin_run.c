/* See standin_run.h. */
#include "standin_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/job_load.h"
#include "reader/dump_reader.h"

int sj_available(void)
{
    static const char *const need[] = {"PRELOAD", "LAUNCH", "STANDIN_JOB", "STANDIN_DIR",
                                       "FAKENCCL_DIR", "REPORT"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const char *p = tb_tool(need[i]);
        if (!p || access(p, F_OK) != 0) {
            fprintf(stderr, "SKIP: TB_%s not built (%s)\n", need[i], p ? p : "unset");
            return 0;
        }
    }
    return 1;
}

int sj_run_job(sj_run *r, int ranks, const char *const *args, const char *const *env)
{
    return sj_run_job_with(r, ranks, args, env, NULL);
}

int sj_run_job_with(sj_run *r, int ranks, const char *const *args, const char *const *env,
                    void (*prepare)(const char *out))
{
    memset(r, 0, sizeof *r);
    r->dir = tb_tempdir("standin");
    if (!r->dir)
        return -1;
    snprintf(r->out, sizeof r->out, "%s/out", r->dir);
    if (prepare) {
        mkdir(r->out, 0777);
        prepare(r->out);
    }
    static char store[12][4200];
    const char *e[32];
    size_t n = 0;
    const char *asan = tb_tool("ASAN_RUNTIME");
    snprintf(store[0], 4200, "LD_PRELOAD=%s%s%s", asan ? asan : "", asan ? " " : "",
             tb_tool("PRELOAD"));
    /* The stand-in's libcuda, libcupti and libcudart before any real one. */
    snprintf(store[1], 4200, "LD_LIBRARY_PATH=%s:%s", tb_tool("STANDIN_DIR"),
             tb_tool("FAKENCCL_DIR"));
    snprintf(store[2], 4200, "TSCOPE_OUT=%s", r->out);
    snprintf(store[3], 4200, "STANDIN_TRUTH=%s/cupti", r->dir);
    /* Under the sanitizers: the stand-in keeps what a driver keeps until
     * the process ends (device memory, handles), which is not a leak of
     * tscope's; the preload's own memory is checked by the capture tests. */
    snprintf(store[4], 4200, "ASAN_OPTIONS=detect_leaks=0");
    /* No budget unless the test sets one (later entries win): these jobs
     * count every kernel, and one that runs long (under the sanitizers)
     * would step down to light under the default (test_standin_budget.c). */
    snprintf(store[5], 4200, "TSCOPE_BUDGET_PCT=0");
    for (int i = 0; i < 6; i++)
        e[n++] = store[i];
    static const char *const clear[] = {"TSCOPE_DISABLE", "TSCOPE_RUN_ID", "TORCHELASTIC_RUN_ID",
                                        "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH",
                                        "TSCOPE_CUPTI", "TSCOPE_NVTX", "STANDIN_NESTED_CORR"};
    for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++)
        e[n++] = clear[i];
    for (size_t i = 0; env && env[i] && n + 1 < sizeof e / sizeof e[0]; i++)
        e[n++] = env[i];
    e[n] = NULL;

    const char *argv[48];
    size_t a = 0;
    static char nranks[16], truth[4200];
    snprintf(nranks, sizeof nranks, "%d", ranks);
    snprintf(truth, sizeof truth, "%s/job", r->dir);
    argv[a++] = tb_tool("LAUNCH");
    argv[a++] = "-n";
    argv[a++] = nranks;
    argv[a++] = "--";
    argv[a++] = tb_tool("STANDIN_JOB");
    argv[a++] = "--truth";
    argv[a++] = truth;
    for (size_t i = 0; args && args[i] && a + 1 < sizeof argv / sizeof argv[0]; i++)
        argv[a++] = args[i];
    argv[a] = NULL;
    if (tb_run(argv, e, 240, &r->res) != 0 || r->res.timed_out || r->res.status != 0) {
        fprintf(stderr, "stand-in job failed (status %d)\nstdout: %.2000s\nstderr: %.4000s\n",
                r->res.status, r->res.out ? r->res.out : "", r->res.err ? r->res.err : "");
        sj_free(r);
        return -1;
    }
    tsa_load_options opt = {.quiet = 1};
    char err[512];
    if (tsa_job_load_ex(r->out, &opt, &r->job, err, sizeof err) != 0) {
        fprintf(stderr, "loading %s: %s\n", r->out, err);
        sj_free(r);
        return -1;
    }
    return 0;
}

long long sj_truth(const sj_run *r, const char *who, int rank, const char *key)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.%d", r->dir, who, rank);
    char *text = tb_read_file(path);
    if (!text)
        return -1;
    long long v = -1;
    size_t klen = strlen(key);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, key, klen) && line[klen] == '=') {
            v = strtoll(line + klen + 1, NULL, 10);
            break;
        }
    free(text);
    return v;
}

const tsa_rank *sj_rank(const sj_run *r, int rank)
{
    for (size_t i = 0; r->job && i < r->job->n_ranks; i++)
        if (r->job->ranks[i].rank == rank)
            return &r->job->ranks[i];
    return NULL;
}

typedef struct meta_hunt {
    const char *key;
    char value[256];
    int found;
} meta_hunt;

static void on_meta(void *ctx, const tsr_file *f, const char *key, const char *value, int end)
{
    (void)f, (void)end;
    meta_hunt *h = ctx;
    if (strcmp(key, h->key) == 0) {
        snprintf(h->value, sizeof h->value, "%s", value);
        h->found = 1;
    }
}

const char *sj_meta(const sj_run *r, int rank, const char *key)
{
    static meta_hunt h;
    const tsa_rank *rk = sj_rank(r, rank);
    if (!rk || !rk->file)
        return NULL;
    memset(&h, 0, sizeof h);
    h.key = key;
    tsr_callbacks cb = {.on_meta = on_meta};
    tsr_stats st;
    tsr_read_file(rk->file, &cb, &h, &st);
    return h.found ? h.value : NULL;
}

void sj_free(sj_run *r)
{
    if (r->job)
        tsa_job_free(r->job);
    tb_result_free(&r->res);
    tb_rmtree(r->dir);
    free(r->dir);
    memset(r, 0, sizeof *r);
}
