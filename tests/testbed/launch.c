/* tsc-testbed-launch: a small stand-in for torchrun on one node.
 *
 *   tsc-testbed-launch -n N [--run-id ID] [--rdzv DIR] [--env R:VAR=VALUE]...
 *                      [--] PROGRAM ARGS...
 *
 * Starts N copies of PROGRAM with torchrun's environment (RANK, LOCAL_RANK,
 * WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
 * TORCHELASTIC_RUN_ID, ...) plus TSC_TESTBED_RDZV, a directory the ranks
 * use to exchange NCCL ids; --env sets VAR for rank R only (a fault on one
 * rank's "host", such as its own fake sysfs tree).  Like torchrun it stops the other ranks when
 * one fails, forwards SIGTERM/SIGINT to all ranks, and exits non-zero if
 * any rank failed; when it was itself told to stop by a signal it ends by
 * that signal once the ranks are gone.  It never loads NCCL. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GRACE_S 10

typedef struct child { pid_t pid; int status; int done; } child;

static void usage(FILE *f)
{
    fprintf(f, "usage: tsc-testbed-launch -n N [--run-id ID] [--rdzv DIR] "
               "[--env R:VAR=VALUE]... [--] PROGRAM [ARGS...]\n");
}

/* --env R:VAR=VALUE: variables for one rank only. */
#define MAX_RANK_ENV 16
static struct { int rank; const char *kv; } g_env[MAX_RANK_ENV];
static int g_n_env;

static int add_rank_env(const char *arg)
{
    char *colon = strchr(arg, ':');
    if (!colon || colon == arg || !strchr(colon + 1, '=') || g_n_env == MAX_RANK_ENV)
        return -1;
    g_env[g_n_env].rank = atoi(arg);
    g_env[g_n_env++].kv = colon + 1;
    return 0;
}

static void setenv_int(const char *k, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(k, buf, 1);
}

static pid_t start_rank(int rank, int n, const char *run_id, const char *rdzv, char **argv,
                        const sigset_t *old_mask)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    setenv_int("RANK", rank);
    setenv_int("LOCAL_RANK", rank);
    setenv_int("GROUP_RANK", 0);
    setenv_int("ROLE_RANK", rank);
    setenv_int("WORLD_SIZE", n);
    setenv_int("LOCAL_WORLD_SIZE", n);
    setenv_int("ROLE_WORLD_SIZE", n);
    setenv_int("TORCHELASTIC_RESTART_COUNT", 0);
    setenv_int("TORCHELASTIC_MAX_RESTARTS", 0);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    if (!getenv("MASTER_PORT"))
        setenv("MASTER_PORT", "29500", 1);
    setenv("TORCHELASTIC_RUN_ID", run_id, 1);
    setenv("TSC_TESTBED_RDZV", rdzv, 1);
    for (int i = 0; i < g_n_env; i++)
        if (g_env[i].rank == rank)
            putenv((char *)g_env[i].kv);   /* argv outlives the exec */
    execvp(argv[0], argv);
    fprintf(stderr, "tsc-testbed-launch: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static void describe(int rank, const child *c)
{
    if (WIFEXITED(c->status) && WEXITSTATUS(c->status) != 0)
        fprintf(stderr, "tsc-testbed-launch: rank %d (pid %d) exited with %d\n", rank,
                (int)c->pid, WEXITSTATUS(c->status));
    else if (WIFSIGNALED(c->status))
        fprintf(stderr, "tsc-testbed-launch: rank %d (pid %d) killed by signal %d\n", rank,
                (int)c->pid, WTERMSIG(c->status));
}

static void signal_all(child *kids, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (!kids[i].done)
            kill(kids[i].pid, sig);
}

int main(int argc, char **argv)
{
    int n = 1;
    const char *run_id = getenv("TORCHELASTIC_RUN_ID");
    const char *rdzv = NULL;
    static const struct option lo[] = {
        {"nproc", 1, 0, 'n'}, {"run-id", 1, 0, 'r'}, {"rdzv", 1, 0, 'd'},
        {"env", 1, 0, 'e'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    /* '+': stop at the program name so its options stay its own. */
    while ((c = getopt_long(argc, argv, "+n:h", lo, NULL)) != -1) {
        switch (c) {
        case 'n': n = atoi(optarg); break;
        case 'r': run_id = optarg; break;
        case 'd': rdzv = optarg; break;
        case 'e':
            if (add_rank_env(optarg)) {
                usage(stderr);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc || n < 1 || n > 1024) {
        usage(stderr);
        return 2;
    }
    char idbuf[64];
    if (!run_id || !*run_id) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(idbuf, sizeof idbuf, "tb-%d-%llx", (int)getpid(),
                 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
        run_id = idbuf;
    }
    char dirbuf[4096];
    int own_rdzv = !rdzv;
    if (own_rdzv) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dirbuf, sizeof dirbuf, "%s/tsc-rdzv-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dirbuf)) {
            fprintf(stderr, "tsc-testbed-launch: mkdtemp %s: %s\n", dirbuf, strerror(errno));
            return 2;
        }
        rdzv = dirbuf;
    }

    /* Signals are taken synchronously with sigtimedwait: no handler races. */
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, &old);

    child *kids = calloc((size_t)n, sizeof *kids);
    if (!kids)
        return 2;
    int running = 0, failed = 0, got_signal = 0;
    for (int i = 0; i < n; i++) {
        kids[i].pid = start_rank(i, n, run_id, rdzv, argv + optind, &old);
        if (kids[i].pid < 0) {
            fprintf(stderr, "tsc-testbed-launch: fork: %s\n", strerror(errno));
            kids[i].done = 1;
            failed = 1;
            signal_all(kids, i, SIGTERM);
            break;
        }
        running++;
    }
    time_t kill_at = failed ? time(NULL) + GRACE_S : 0;
    while (running > 0) {
        struct timespec tick = {0, 100 * 1000 * 1000};
        int sig = sigtimedwait(&mask, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            got_signal = sig;
            signal_all(kids, n, sig);
            if (!kill_at)
                kill_at = time(NULL) + GRACE_S;
        }
        int st;
        pid_t pid;
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++) {
                if (kids[i].pid != pid || kids[i].done)
                    continue;
                kids[i].done = 1;
                kids[i].status = st;
                running--;
                if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
                    if (!got_signal)
                        describe(i, &kids[i]);
                    /* One rank down means the job is down (torchrun does the same). */
                    if (!failed && !got_signal) {
                        signal_all(kids, n, SIGTERM);
                        kill_at = time(NULL) + GRACE_S;
                    }
                    failed = 1;
                }
            }
        }
        if (kill_at && time(NULL) >= kill_at) {
            signal_all(kids, n, SIGKILL);
            kill_at = 0;
        }
    }
    if (got_signal)
        for (int i = 0; i < n; i++)
            describe(i, &kids[i]);
    if (own_rdzv) {
        char path[4200];
        snprintf(path, sizeof path, "%s/nccl_ids", rdzv);
        unlink(path);
        rmdir(rdzv);
    }
    free(kids);
    if (got_signal) {
        /* Report the stop the way a shell expects: killed by that signal. */
        signal(got_signal, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        raise(got_signal);
    }
    return failed ? 1 : 0;
}
