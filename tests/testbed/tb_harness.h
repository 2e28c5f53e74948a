/* Helpers shared by the end-to-end tests: running a command with extra
 * environment and a time limit, temporary directories, and reading dumps
 * back through `tscope-report dump --json`.  Paths of the programs under
 * test come from the environment meson's test() sets (TB_*). */
#ifndef TB_HARNESS_H
#define TB_HARNESS_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct tb_result {
    int status;   /* waitpid status; -1 if it could not run */
    int timed_out;
    char *out;    /* captured stdout, NUL-terminated */
    char *err;    /* captured stderr */
} tb_result;

/* Path of a tool from TB_<NAME> in the environment, NULL when unset/empty. */
const char *tb_tool(const char *name);

/* Run argv (NULL-terminated; argv[0] a path) with `env` ("K=V" sets, "K"
 * alone unsets) applied on top of this process's environment, capturing
 * stdout and stderr.  The command gets its own process group, which is
 * killed after timeout_s and once the command has exited. */
int tb_run(const char *const *argv, const char *const *env, int timeout_s, tb_result *r);

/* Like tb_run, but calls hook(pid, arg) while the command runs, once the
 * hook's own condition is met (it returns 1 when it has done its job;
 * it is polled every 10 ms). */
int tb_run_with(const char *const *argv, const char *const *env, int timeout_s,
                int (*hook)(int pid, void *arg), void *arg, tb_result *r);
void tb_result_free(tb_result *r);

/* mkdtemp under $TMPDIR or /tmp; caller frees; tb_rmtree removes it. */
char *tb_tempdir(const char *tag);
void tb_rmtree(const char *path);

/* Number of *.tsd files directly in dir (-1 if it cannot be read). */
int tb_count_dumps(const char *dir);

/* Every JSON line `tscope-report dump --json dir` prints.  Returns a cJSON
 * array (caller deletes) or NULL, with the exit status in *status. */
cJSON *tb_dump_json(const char *dir, int *status);

/* Read a whole file (NULL on error); caller frees. */
char *tb_read_file(const char *path);

/* Environment for a launch under the preload: LD_PRELOAD, LD_LIBRARY_PATH
 * (fake NCCL), TSCOPE_OUT.  Writes into `env` (cap entries, NULL-terminated)
 * using `store` for the strings; returns the number of entries. */
size_t tb_preload_env(const char **env, size_t cap, char store[][4200], const char *out_dir,
                      int with_preload);

/* 1 when the pieces the end-to-end tests need were built (else the caller
 * skips with the message printed here). */
int tb_e2e_available(void);

#endif
