/* A stand-in for a training process: calls NCCL (the stub) in the patterns
 * the capture tests check, run by test_preload under LD_PRELOAD.
 * Usage: nccl_driver MODE.  Exit 0 when its own checks pass. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nccl_abi.h"

tsc_nccl_result_t ncclGetUniqueId(tsc_nccl_unique_id *id);
tsc_nccl_result_t ncclAllReduce(const void *, void *, size_t, tsc_nccl_dtype_t,
                                tsc_nccl_redop_t, tsc_nccl_comm_t, tsc_cuda_stream_t);
tsc_nccl_result_t ncclAllGather(const void *, void *, size_t, tsc_nccl_dtype_t,
                                tsc_nccl_comm_t, tsc_cuda_stream_t);
tsc_nccl_result_t ncclBroadcast(const void *, void *, size_t, tsc_nccl_dtype_t, int,
                                tsc_nccl_comm_t, tsc_cuda_stream_t);
tsc_nccl_result_t ncclSend(const void *, size_t, tsc_nccl_dtype_t, int, tsc_nccl_comm_t,
                           tsc_cuda_stream_t);
tsc_nccl_result_t ncclRecv(void *, size_t, tsc_nccl_dtype_t, int, tsc_nccl_comm_t,
                           tsc_cuda_stream_t);
tsc_nccl_result_t ncclGroupStart(void);
tsc_nccl_result_t ncclGroupEnd(void);
tsc_nccl_result_t ncclCommInitRank(tsc_nccl_comm_t *, int, tsc_nccl_unique_id, int);
tsc_nccl_result_t ncclCommInitAll(tsc_nccl_comm_t *, int, const int *);
tsc_nccl_result_t ncclCommSplit(tsc_nccl_comm_t, int, int, tsc_nccl_comm_t *,
                                tsc_nccl_config_t *);
tsc_nccl_result_t ncclCommDestroy(tsc_nccl_comm_t);

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "nccl_driver: check failed: %s (line %d)\n",    \
                    #cond, __LINE__);                                       \
            exit(10);                                                       \
        }                                                                   \
    } while (0)

static tsc_nccl_comm_t world;
static int rank;

static void init_world(void)
{
    const char *r = getenv("RANK");
    rank = r ? atoi(r) : 0;
    tsc_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    /* What rank 0 would broadcast: the same bytes on every rank. */
    snprintf(id.internal, sizeof id.internal, "driver-%s", getenv("DRIVER_JOB") ?
             getenv("DRIVER_JOB") : "job");
    CHECK(ncclCommInitRank(&world, 4, id, rank) == tsc_ncclSuccess);
}

static void allreduces(tsc_nccl_comm_t c, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(ncclAllReduce(NULL, NULL, (size_t)(i % 2 ? 1024 : 256), tsc_ncclFloat32,
                            tsc_ncclSum, c, NULL) == tsc_ncclSuccess);
}

static void mode_basic(void)
{
    init_world();
    allreduces(world, 10);
    CHECK(ncclAllGather(NULL, NULL, 100, tsc_ncclBfloat16, world, NULL) == tsc_ncclSuccess);
    CHECK(ncclBroadcast(NULL, NULL, 8, tsc_ncclInt64, 0, world, NULL) == tsc_ncclSuccess);
    CHECK(ncclGroupStart() == tsc_ncclSuccess);
    CHECK(ncclSend(NULL, 16, tsc_ncclUint8, (rank + 1) % 4, world, NULL) == tsc_ncclSuccess);
    CHECK(ncclRecv(NULL, 16, tsc_ncclUint8, (rank + 3) % 4, world, NULL) == tsc_ncclSuccess);
    CHECK(ncclGroupEnd() == tsc_ncclSuccess);
    tsc_nccl_comm_t half;
    CHECK(ncclCommSplit(world, rank % 2, rank, &half, NULL) == tsc_ncclSuccess);
    allreduces(half, 3);
    /* errno and results pass through untouched. */
    errno = 0;
    CHECK(ncclAllReduce(NULL, NULL, 4242, tsc_ncclFloat32, tsc_ncclSum, world, NULL) == 0);
    CHECK(errno == 4242);
    errno = 77;
    CHECK(ncclAllReduce(NULL, NULL, 7777, tsc_ncclFloat32, tsc_ncclSum, world, NULL) ==
          tsc_ncclInvalidArgument);
    CHECK(errno == 77);
    CHECK(ncclCommDestroy(half) == tsc_ncclSuccess);
    CHECK(ncclCommDestroy(world) == tsc_ncclSuccess);
}

/* NCCL forbids using one communicator from two threads at once: threads
 * sharing one take turns, one call at a time, as a correct program must
 * (tscope's per-communicator sequence counter relies on it). */
static pthread_mutex_t world_turn = PTHREAD_MUTEX_INITIALIZER;

static void shared_world_allreduces(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&world_turn);
        allreduces(world, 1);
        pthread_mutex_unlock(&world_turn);
    }
}

static void *thread_calls(void *arg)
{
    (void)arg;
    shared_world_allreduces(500);
    return NULL;
}

/* Bursts of 32 calls with 2 ms pauses: a ring of 256 slots only survives
 * 500 calls if the half-full wake-ups drain it in between. */
static void *thread_paced_calls(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; i += 32) {
        shared_world_allreduces(i + 32 <= 500 ? 32 : 500 - i);
        usleep(2000);
    }
    return NULL;
}

static void mode_threads(int paced)
{
    init_world();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, paced ? thread_paced_calls : thread_calls, NULL) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

static volatile sig_atomic_t got_term;
static void app_handler(int sig) { got_term = sig; }

static void mode_sigterm_handler(void)
{
    init_world(); /* the recorder is set up now and owns SIGTERM */
    allreduces(world, 5);
    CHECK(signal(SIGTERM, app_handler) == SIG_DFL); /* what the app had */
    struct sigaction old;
    CHECK(sigaction(SIGTERM, NULL, &old) == 0);
    CHECK(old.sa_handler == app_handler);
    raise(SIGTERM);
    CHECK(got_term == SIGTERM);    /* the application's handler ran */
    allreduces(world, 2);          /* and the process goes on */
    exit(3);
}

/* A communicator destroyed and another created (the allocator usually
 * hands back the same address): calls on the new one carry its identity,
 * not the one the thread's call cache saw at that address. */
static void mode_comm_reuse(void)
{
    tsc_nccl_comm_t c[2];
    for (int k = 0; k < 2; k++) {
        tsc_nccl_unique_id id;
        memset(&id, 0, sizeof id);
        snprintf(id.internal, sizeof id.internal, "reuse-%d", k);
        CHECK(ncclCommInitRank(&c[k], 2, id, k) == tsc_ncclSuccess);
        allreduces(c[k], 3);
        CHECK(ncclCommDestroy(c[k]) == tsc_ncclSuccess);
    }
    /* Same address: the case this mode exists for (exit 6 says it did not
     * happen, so the test knows it proved nothing). */
    exit(c[0] == c[1] ? 0 : 6);
}

/* What Python's subprocess does: vfork, reset every handler to SIG_DFL in
 * the child, exec.  The child shares the parent's memory; the parent must
 * keep its handler. */
static void mode_sigterm_vfork(void)
{
    init_world();
    allreduces(world, 2);
    CHECK(signal(SIGTERM, app_handler) == SIG_DFL);
    pid_t p = vfork();
    if (p == 0) {
        struct sigaction dfl, old;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        int ok = sigaction(SIGTERM, &dfl, &old) == 0 && old.sa_handler == app_handler;
        _exit(ok ? 0 : 1);
    }
    CHECK(p > 0);
    int st;
    CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    raise(SIGTERM);
    CHECK(got_term == SIGTERM);
    exit(5);
}

/* Handlers installed before the recorder set up (Python installs its
 * SIGINT handler at start-up, long before the first NCCL call). */
static volatile sig_atomic_t info_signo;
static void info_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    info_signo = si->si_signo;
}

static void mode_sigterm_early(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = info_handler;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
    CHECK(signal(SIGINT, SIG_IGN) == SIG_DFL);
    init_world();
    allreduces(world, 1);
    CHECK(sigaction(SIGTERM, NULL, &old) == 0);
    CHECK((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == info_handler);
    raise(SIGINT); /* ignored by the application: no flush, no END */
    raise(SIGTERM);
    CHECK(info_signo == SIGTERM);
    exit(4);
}

static void mode_fork(int child_records)
{
    init_world();
    allreduces(world, 4);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        if (child_records)
            allreduces(world, 2);
        exit(0);
    }
    int st;
    CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    allreduces(world, 1);
}

static void mode_init_all(void)
{
    tsc_nccl_comm_t comms[3];
    CHECK(ncclCommInitAll(comms, 3, NULL) == tsc_ncclSuccess);
    for (int i = 0; i < 3; i++)
        allreduces(comms[i], 2);
}

/* PyTorch names its autograd threads after they start. */
static void *renamed_thread(void *arg)
{
    (void)arg;
    allreduces(world, 1);
    prctl(PR_SET_NAME, "pt_autograd_0", 0, 0, 0);
    usleep(300000); /* several periodic flushes (TSCOPE_FLUSH_MS=20) */
    allreduces(world, 1);
    return NULL;
}

static void mode_rename(void)
{
    init_world();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, renamed_thread, NULL) == 0);
    pthread_join(t, NULL);
}

/* A file-size limit: writes fail with EFBIG like a full disk. */
static void mode_fsize(void)
{
    struct rlimit rl = {4096, 4096};
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    signal(SIGXFSZ, SIG_IGN);
    init_world();
    allreduces(world, 300);
}

/* Short-lived threads one after another, each making a few calls: with
 * TSCOPE_MAX_THREADS=2 they only all get recorded if the slots of ended
 * threads are reused (the pause lets the writer drain them first). */
static void *short_lived(void *arg)
{
    (void)arg;
    allreduces(world, 10);
    return NULL;
}

static void mode_churn(void)
{
    init_world();
    for (int i = 0; i < 20; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, short_lived, NULL) == 0);
        pthread_join(t, NULL);
        usleep(200000); /* ten writer periods at TSCOPE_FLUSH_MS=20: a slow (ASan,
                            loaded) writer still drains the ended thread */
    }
}

static void mode_exec(void)
{
    init_world();
    allreduces(world, 3);
    char *const argv[] = {"true", NULL};
    execv("/bin/true", argv);
    exit(11); /* exec failed */
}

/* Every other way to replace the image: 3 AllReduce, then `how`
 * runs /bin/true (exit status 0). */
static void mode_exec_variant(const char *how)
{
    init_world();
    allreduces(world, 3);
    char *const argv[] = {"true", NULL};
    char *const envp[] = {"A=1", NULL};
    if (!strcmp(how, "execl"))
        execl("/bin/true", "true", (char *)NULL);
    else if (!strcmp(how, "execlp"))
        execlp("true", "true", (char *)NULL);
    else if (!strcmp(how, "execle"))
        execle("/bin/true", "true", (char *)NULL, envp);
    else if (!strcmp(how, "execvpe"))
        execvpe("true", argv, envp);
    else if (!strcmp(how, "fexecve")) {
        int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            fexecve(fd, argv, envp);
    } else if (!strcmp(how, "_exit"))
        _exit(7);
    else if (!strcmp(how, "_Exit"))
        _Exit(8);
    exit(11); /* exec failed */
}

/* A crash after 3 AllReduce: abort(), a real segmentation fault, SIGBUS. */
static void mode_crash(const char *how)
{
    init_world();
    allreduces(world, 3);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (!strcmp(how, "abort"))
        abort();
    if (!strcmp(how, "segv")) {
        volatile int *volatile bad = NULL; /* hidden from the compiler */
        bad[2] = 1;
    }
    raise(SIGBUS);
    exit(12);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (!strcmp(mode, "basic"))
        mode_basic();
    else if (!strcmp(mode, "threads"))
        mode_threads(0);
    else if (!strcmp(mode, "threads-paced"))
        mode_threads(1);
    else if (!strcmp(mode, "sigterm")) {
        init_world();
        allreduces(world, 5);
        raise(SIGTERM); /* default action: killed by signal 15 */
        return 20;
    } else if (!strcmp(mode, "sigterm-handler"))
        mode_sigterm_handler();
    else if (!strcmp(mode, "comm-reuse"))
        mode_comm_reuse();
    else if (!strcmp(mode, "sigterm-vfork"))
        mode_sigterm_vfork();
    else if (!strcmp(mode, "sigterm-early"))
        mode_sigterm_early();
    else if (!strcmp(mode, "fork"))
        mode_fork(0);
    else if (!strcmp(mode, "fork-record"))
        mode_fork(1);
    else if (!strcmp(mode, "init-all"))
        mode_init_all();
    else if (!strcmp(mode, "rename"))
        mode_rename();
    else if (!strcmp(mode, "churn"))
        mode_churn();
    else if (!strcmp(mode, "fsize"))
        mode_fsize();
    else if (!strcmp(mode, "exec"))
        mode_exec();
    else if (!strncmp(mode, "exec-", 5))
        mode_exec_variant(mode + 5);
    else if (!strncmp(mode, "crash-", 6))
        mode_crash(mode + 6);
    else if (!strcmp(mode, "no-nccl"))
        return 0;
    else if (!strcmp(mode, "exit-code")) {
        init_world();
        allreduces(world, 1);
        return 42;
    } else
        return 2;
    return 0;
}
