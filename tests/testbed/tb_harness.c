/* Process, file and dump helpers for the end-to-end tests. */
#include "tb_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *tb_tool(const char *name)
{
    char var[64];
    snprintf(var, sizeof var, "TB_%s", name);
    const char *v = getenv(var);
    return v && *v ? v : NULL;
}

char *tb_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (len + 1 == cap) {
            char *n = realloc(buf, cap * 2);
            if (!n) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = n;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

static void apply_env(const char *const *env)
{
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        if (!eq) {
            unsetenv(env[i]);
            continue;
        }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - env[i]), env[i]);
        setenv(key, eq + 1, 1);
    }
}

int tb_run_with(const char *const *argv, const char *const *env, int timeout_s,
                int (*hook)(int pid, void *arg), void *arg, tb_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    char outp[] = "/tmp/tb-out-XXXXXX", errp[] = "/tmp/tb-err-XXXXXX";
    int ofd = mkstemp(outp), efd = mkstemp(errp);
    if (ofd < 0 || efd < 0) {
        if (ofd >= 0)
            close(ofd), unlink(outp);
        if (efd >= 0)
            close(efd), unlink(errp);
        return -1;
    }
    unlink(outp);
    unlink(errp);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* so a timeout can take down the whole job */
        apply_env(env);
        dup2(ofd, 1);
        dup2(efd, 2);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (pid < 0) {
        close(ofd);
        close(efd);
        return -1;
    }
    setpgid(pid, pid);
    struct timespec start, now, tick = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    int hooked = hook == NULL, st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (!hooked && hook(pid, arg))
            hooked = 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= timeout_s) {
            r->timed_out = 1;
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            break;
        }
        nanosleep(&tick, NULL);
    }
    /* Stragglers of the job (ranks orphaned by a killed launcher). */
    kill(-pid, SIGKILL);
    r->status = st;
    char path[64];
    lseek(ofd, 0, SEEK_SET);
    lseek(efd, 0, SEEK_SET);
    snprintf(path, sizeof path, "/proc/self/fd/%d", ofd);
    r->out = tb_read_file(path);
    snprintf(path, sizeof path, "/proc/self/fd/%d", efd);
    r->err = tb_read_file(path);
    close(ofd);
    close(efd);
    if (!r->out)
        r->out = strdup("");
    if (!r->err)
        r->err = strdup("");
    return 0;
}

int tb_run(const char *const *argv, const char *const *env, int timeout_s, tb_result *r)
{
    return tb_run_with(argv, env, timeout_s, NULL, NULL, r);
}

void tb_result_free(tb_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

char *tb_tempdir(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    char *p = malloc(4096);
    if (!p)
        return NULL;
    snprintf(p, 4096, "%s/tb-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (!mkdtemp(p)) {
        free(p);
        return NULL;
    }
    return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void tb_rmtree(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tb_count_dumps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".tsd"))
            n++;
    }
    closedir(d);
    return n;
}

cJSON *tb_dump_json(const char *dir, int *status)
{
    const char *report = tb_tool("REPORT");
    *status = -1;
    if (!report)
        return NULL;
    const char *argv[] = {report, "dump", "--json", dir, NULL};
    tb_result r;
    if (tb_run(argv, NULL, 60, &r) != 0)
        return NULL;
    *status = r.status;
    cJSON *arr = cJSON_CreateArray();
    char *save = NULL;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        if (o)
            cJSON_AddItemToArray(arr, o);
        else
            fprintf(stderr, "unparsable dump line: %.200s\n", line);
    }
    if (r.err && *r.err)
        fprintf(stderr, "tscope-report dump stderr: %.2000s\n", r.err);
    tb_result_free(&r);
    return arr;
}

size_t tb_preload_env(const char **env, size_t cap, char store[][4200], const char *out_dir,
                      int with_preload)
{
    size_t n = 0;
    const char *preload = tb_tool("PRELOAD"), *nccl = tb_tool("FAKENCCL_DIR");
    if (with_preload && preload && n + 1 < cap) {
        /* Under ASan the sanitizer runtime must come first in the process. */
        const char *asan = tb_tool("ASAN_RUNTIME");
        snprintf(store[n], 4200, "LD_PRELOAD=%s%s%s", asan ? asan : "", asan ? " " : "", preload);
        env[n] = store[n];
        n++;
    }
    if (nccl && n + 1 < cap) {
        snprintf(store[n], 4200, "LD_LIBRARY_PATH=%s", nccl);
        env[n] = store[n];
        n++;
    }
    if (out_dir && n + 1 < cap) {
        snprintf(store[n], 4200, "TSCOPE_OUT=%s", out_dir);
        env[n] = store[n];
        n++;
    }
    /* The tests must not depend on the person's own settings. */
    static const char *const clear[] = {"TSCOPE_DISABLE", "TSCOPE_RUN_ID", "TORCHELASTIC_RUN_ID",
                                        "CUDA_INJECTION64_PATH"};
    for (size_t i = 0; i < sizeof clear / sizeof clear[0] && n + 1 < cap; i++)
        env[n++] = clear[i];
    env[n] = NULL;
    return n;
}

int tb_e2e_available(void)
{
    static const char *const need[] = {"PRELOAD", "REPORT", "LAUNCH", "RANK", "FAKENCCL_DIR"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const char *p = tb_tool(need[i]);
        if (!p || access(p, F_OK) != 0) {
            fprintf(stderr, "SKIP: TB_%s not built yet (%s)\n", need[i], p ? p : "unset");
            return 0;
        }
    }
    return 1;
}
