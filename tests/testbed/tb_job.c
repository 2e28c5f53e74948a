/* Launching test-bed jobs for the end-to-end tests. */
#include "tb_job.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tb_run_job(const tb_job *job, tb_result *r)
{
    const char *argv[64];
    size_t a = 0;
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", job->nranks);
    argv[a++] = tb_tool("LAUNCH");
    argv[a++] = "-n";
    argv[a++] = nbuf;
    for (size_t i = 0; job->launch_args && job->launch_args[i] && a < 40; i++)
        argv[a++] = job->launch_args[i];
    argv[a++] = "--";
    argv[a++] = tb_tool("RANK");
    if (job->expect_prefix) {
        argv[a++] = "--expect";
        argv[a++] = job->expect_prefix;
    }
    for (size_t i = 0; job->rank_args && job->rank_args[i] && a < 62; i++)
        argv[a++] = job->rank_args[i];
    argv[a] = NULL;

    const char *env[64];
    static char store[16][4200];
    size_t e = tb_preload_env(env, 48, store, job->out_dir, job->with_preload);
    if (!job->with_preload)
        env[e++] = "LD_PRELOAD";
    if (!job->out_dir)
        env[e++] = "TSCOPE_OUT";
    /* Keep a broken test from hanging for the fake NCCL's default 60 s. */
    env[e++] = "FAKENCCL_TIMEOUT_S=20";
    for (size_t i = 0; job->env && job->env[i] && e < 63; i++)
        env[e++] = job->env[i];
    env[e] = NULL;
    return tb_run_with(argv, env, job->timeout_s ? job->timeout_s : 30, job->hook, job->hook_arg,
                       r);
}

tb_fixture *tb_fixture_new(const char *tag)
{
    if (!tb_e2e_available())
        return NULL;
    tb_fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = tb_tempdir(tag))) {
        free(f);
        return NULL;
    }
    snprintf(f->out, sizeof f->out, "%s/tscope_out", f->dir);
    snprintf(f->exp, sizeof f->exp, "%s/expect", f->dir);
    snprintf(f->mark, sizeof f->mark, "%s/mark", f->dir);
    return f;
}

void tb_fixture_free(tb_fixture *f)
{
    if (!f)
        return;
    tb_rmtree(f->dir);
    free(f->dir);
    free(f);
}

int tb_fixture_setup(void **state)
{
    *state = tb_fixture_new("e2e");
    return 0;
}

int tb_fixture_teardown(void **state)
{
    tb_fixture_free(*state);
    *state = NULL;
    return 0;
}

int tb_signal_when_marked(int pid, void *arg)
{
    tb_signal_plan *p = arg;
    if (!p->seen) {
        for (int r = 0; r < p->nranks; r++) {
            char path[4300];
            snprintf(path, sizeof path, "%s.%d", p->mark, r);
            if (access(path, F_OK) != 0)
                return 0;
        }
        p->seen = 1;
        clock_gettime(CLOCK_MONOTONIC, &p->marked);
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (now.tv_sec - p->marked.tv_sec) * 1000 + (now.tv_nsec - p->marked.tv_nsec) / 1000000;
    if (ms < p->delay_ms)
        return 0;
    kill(p->whole_group ? -pid : pid, p->sig);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *tb_checksum_lines(const char *out)
{
    char *copy = strdup(out), *save = NULL;
    char *lines[1024];
    size_t n = 0, total = 1;
    for (char *l = strtok_r(copy, "\n", &save); l && n < 1024; l = strtok_r(NULL, "\n", &save))
        if (!strncmp(l, "rank ", 5) && strstr(l, " checksum ")) {
            lines[n++] = l;
            total += strlen(l) + 1;
        }
    qsort(lines, n, sizeof *lines, cmp_str);
    char *res = malloc(total);
    res[0] = 0;
    for (size_t i = 0; i < n; i++) {
        strcat(res, lines[i]);
        strcat(res, "\n");
    }
    free(copy);
    return res;
}
