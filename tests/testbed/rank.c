/* tsc-testbed-rank: one rank of a training-like loop on the test NCCL.
 *
 * Reads torchrun's environment, exchanges NCCL unique ids through a file
 * in $TSC_TESTBED_RDZV, then per step: "compute" (sleep or spin), gradient
 * AllReduce buckets (the last few inside one group, as DDP's bucketing
 * does), an FSDP-like AllGather + ReduceScatter on a communicator split by
 * rank parity, and a ring of grouped send/recv.  Every result is checked
 * against the value it must have, and a checksum of all received data plus
 * a JSON account of every NCCL call is written for the tests. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_abi.h"
#include "rank_options.h"
#include "rank_pipe.h"
#include "rank_rdzv.h"
#include "rank_tally.h"

static tb_options opt;
static int g_rank, g_world;

static void die_nccl(const char *what, ncclResult_t r)
{
    fprintf(stderr, "tsc-testbed-rank %d: %s: %s (%s)\n", g_rank, what, ncclGetErrorString(r),
            ncclGetLastError(NULL));
    exit(3);
}

static void verify_failed(const char *what, size_t i, double got, double want)
{
    fprintf(stderr, "tsc-testbed-rank %d: wrong %s result at %zu: %g, want %g\n", g_rank, what,
            i, got, want);
    exit(4);
}

/* A call that is sequenced on a communicator (collective or send/recv). */
#define COLL(tally, opname, bytes, call)                   \
    do {                                                   \
        ncclResult_t r_ = (call);                          \
        if (r_ != ncclSuccess)                             \
            die_nccl(opname, r_);                          \
        tb_tally_call((tally), opname, (bytes), 1);        \
    } while (0)

/* Any other NCCL call that the preload records. */
#define CALL(tally, opname, call)                          \
    do {                                                   \
        ncclResult_t r_ = (call);                          \
        if (r_ != ncclSuccess)                             \
            die_nccl(opname, r_);                          \
        tb_tally_call((tally), opname, 0, 0);              \
    } while (0)

/* Multiples of 1/4 below 2^12: float sums over a few ranks are exact, so
 * results can be checked with ==. */
static float value(unsigned seed, size_t i)
{
    return (float)((seed * 31u + (unsigned)i * 7u) % 97u) * 0.25f;
}

static void fill(float *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = value(seed, i);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "tsc-testbed-rank: out of memory\n");
        exit(5);
    }
    return p;
}

static void add_ns(struct timespec *t, long long ns)
{
    t->tv_sec += ns / 1000000000LL;
    t->tv_nsec += ns % 1000000000LL;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

/* Spins until clock clk reads until. */
static void spin_until(clockid_t clk, const struct timespec *until)
{
    struct timespec now;
    do
        clock_gettime(clk, &now);
    while (now.tv_sec < until->tv_sec ||
           (now.tv_sec == until->tv_sec && now.tv_nsec < until->tv_nsec));
}

/* Spins until the calling thread has used ns more of CPU time. */
static void use_cpu(long long ns)
{
    struct timespec until;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &until);
    add_ns(&until, ns);
    spin_until(CLOCK_THREAD_CPUTIME_ID, &until);
}

/* Deterministic duration: absolute deadlines do not accumulate drift. */
static void compute(int rank, int step)
{
    if (opt.cpu_us > 0)
        use_cpu(opt.cpu_us * 1000LL);   /* --cpu-us: the same on every rank */
    long long ns = opt.compute_us * 1000LL;
    if (tb_is_slow(&opt, rank, step))
        ns = (long long)((double)ns * opt.slow_factor) + opt.slow_ms * 1000000LL;
    if (ns <= 0)
        return;
    /* --cpu-work counts the thread's own CPU time: a fixed amount of work
     * that CPU contention stretches, as real compute on the host is. */
    clockid_t clk = opt.spin == 2 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
    struct timespec until;
    clock_gettime(clk, &until);
    add_ns(&until, ns);
    if (!opt.spin) {
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
            ;
        return;
    }
    spin_until(clk, &until);
}

/* A stray busy thread (--burn-threads): spins until the process exits. */
static void *burner_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "burner", 0, 0, 0);
    volatile unsigned long x = 0;
    for (;;)
        x++;
    return NULL;
}

/* --pin-cpu and --burn-threads for this rank: host faults the telemetry
 * must name. */
static void host_faults(int rank)
{
    if (rank == opt.pin_rank) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(opt.pin_cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            perror("tsc-testbed-rank: sched_setaffinity");
    }
    if (rank == opt.nice_rank && setpriority(PRIO_PROCESS, 0, opt.nice) != 0)
        perror("tsc-testbed-rank: setpriority");
    for (int i = 0; rank == opt.burn_rank && i < opt.burn_threads; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, burner_main, NULL) == 0)
            pthread_detach(th);
    }
}

/* ------------------------------------------------------------ step parts */

static void gradient_buckets(ncclComm_t world, tb_comm_tally *t, int step)
{
    int first_grouped = opt.nbuckets - opt.grouped_buckets;
    float *bufs[TB_MAX_BUCKETS];
    for (int b = 0; b < opt.nbuckets; b++) {
        size_t n = opt.buckets[b] / 4;
        bufs[b] = xmalloc(n * 4);
        fill(bufs[b], n, (unsigned)(g_rank * 1000 + step * 10 + b));
        if (b == first_grouped)
            CALL(NULL, "GroupStart", ncclGroupStart());
        if (b == 0 && g_rank == opt.desync_rank && step == opt.desync_step) {
            /* The wrong collective where the others AllReduce: the test
             * NCCL sees the mismatch and fails it on every rank. */
            size_t shard = n / (size_t)g_world ? n / (size_t)g_world : 1;
            float *all = xmalloc(shard * 4 * (size_t)g_world);
            COLL(t, "AllGather", shard * 4,
                 ncclAllGather(bufs[b], all, shard, ncclFloat32, world, NULL));
            free(all);
            continue;
        }
        /* In place, as DDP does with its flat bucket. */
        COLL(t, "AllReduce", n * 4,
             ncclAllReduce(bufs[b], bufs[b], n, ncclFloat32, ncclSum, world, NULL));
    }
    if (opt.grouped_buckets > 0 && opt.nbuckets > 0)
        CALL(NULL, "GroupEnd", ncclGroupEnd());
    for (int b = 0; b < opt.nbuckets; b++) {
        size_t n = opt.buckets[b] / 4;
        for (size_t i = 0; i < n; i++) {
            float want = 0;
            for (int r = 0; r < g_world; r++)
                want += value((unsigned)(r * 1000 + step * 10 + b), i);
            if (bufs[b][i] != want)
                verify_failed("AllReduce", i, bufs[b][i], want);
        }
        tb_checksum_add(0, bufs[b], n * 4);
        free(bufs[b]);
    }
}

/* Members of the parity communicator are the global ranks parity, parity+2... */
static void fsdp_pair(ncclComm_t half, tb_comm_tally *t, int step)
{
    int hn = (g_world - g_rank % 2 + 1) / 2;
    size_t shard = opt.fsdp_bytes / 4;
    float *params = xmalloc(shard * 4), *full = xmalloc(shard * 4 * (size_t)hn);
    float *grads = xmalloc(shard * 4 * (size_t)hn), *mine = xmalloc(shard * 4);
    fill(params, shard, (unsigned)(g_rank * 7 + step));
    COLL(t, "AllGather", shard * 4,
         ncclAllGather(params, full, shard, ncclFloat32, half, NULL));
    for (int h = 0; h < hn; h++) {
        int global = g_rank % 2 + 2 * h;
        for (size_t i = 0; i < shard; i++)
            if (full[(size_t)h * shard + i] != value((unsigned)(global * 7 + step), i))
                verify_failed("AllGather", i, full[(size_t)h * shard + i],
                              value((unsigned)(global * 7 + step), i));
    }
    fill(grads, shard * (size_t)hn, (unsigned)(g_rank * 13 + step));
    COLL(t, "ReduceScatter", shard * 4,
         ncclReduceScatter(grads, mine, shard, ncclFloat32, ncclSum, half, NULL));
    int hr = g_rank / 2;
    for (size_t i = 0; i < shard; i++) {
        float want = 0;
        for (int h = 0; h < hn; h++)
            want += value((unsigned)((g_rank % 2 + 2 * h) * 13 + step), (size_t)hr * shard + i);
        if (mine[i] != want)
            verify_failed("ReduceScatter", i, mine[i], want);
    }
    tb_checksum_add(0, full, shard * 4 * (size_t)hn);
    tb_checksum_add(0, mine, shard * 4);
    free(params), free(full), free(grads), free(mine);
}

/* Pipeline-style neighbour exchange: both directions in one group. */
static void ring(ncclComm_t world, tb_comm_tally *t, int step)
{
    size_t n = opt.ring_bytes / 4;
    int right = (g_rank + 1) % g_world, left = (g_rank + g_world - 1) % g_world;
    float *out = xmalloc(n * 4), *in = xmalloc(n * 4);
    fill(out, n, (unsigned)(g_rank * 3 + step));
    CALL(NULL, "GroupStart", ncclGroupStart());
    COLL(t, "Send", n * 4, ncclSend(out, n, ncclFloat32, right, world, NULL));
    COLL(t, "Recv", n * 4, ncclRecv(in, n, ncclFloat32, left, world, NULL));
    CALL(NULL, "GroupEnd", ncclGroupEnd());
    for (size_t i = 0; i < n; i++)
        if (in[i] != value((unsigned)(left * 3 + step), i))
            verify_failed("Recv", i, in[i], value((unsigned)(left * 3 + step), i));
    tb_checksum_add(0, in, n * 4);
    free(out), free(in);
}

/* --upstream: the one message of a step from up_from to up_rank (the
 * receiver before its compute, the sender after its own), checked.  On a
 * communicator of the pair (split from the world, keyed by rank, so the
 * lower rank is 0): send/recv on the world would advance only the pair's
 * sequence numbers there, as no real job mixes them. */
static void upstream(ncclComm_t pair, tb_comm_tally *t, int step, int send)
{
    enum { N = 1024 };
    float *buf = xmalloc(N * 4);
    int peer = opt.up_rank < opt.up_from ? send == 0 : send != 0; /* the other's pair rank */
    if (send) {
        fill(buf, N, (unsigned)(g_rank * 7 + step));
        COLL(t, "Send", N * 4, ncclSend(buf, N, ncclFloat32, peer, pair, NULL));
    } else {
        COLL(t, "Recv", N * 4, ncclRecv(buf, N, ncclFloat32, peer, pair, NULL));
        for (size_t i = 0; i < N; i++)
            if (buf[i] != value((unsigned)(opt.up_from * 7 + step), i))
                verify_failed("Recv", i, buf[i], value((unsigned)(opt.up_from * 7 + step), i));
        tb_checksum_add(0, buf, N * 4);
    }
    free(buf);
}

/* One of each remaining collective, on other data types. */
static void extras(ncclComm_t world, tb_comm_tally *t)
{
    enum { N = 64 };
    int n = g_world;
    int32_t iv[N], ir[N];
    for (int i = 0; i < N; i++)
        iv[i] = g_rank * 100 + i;
    memset(ir, 0, sizeof ir);
    COLL(t, "Reduce", sizeof iv, ncclReduce(iv, ir, N, ncclInt32, ncclSum, 0, world, NULL));
    if (g_rank == 0)
        for (int i = 0; i < N; i++)
            if (ir[i] != 100 * n * (n - 1) / 2 + n * i)
                verify_failed("Reduce", (size_t)i, ir[i], 100 * n * (n - 1) / 2 + n * i);
    tb_checksum_add(0, ir, sizeof ir);

    float *a2a_in = xmalloc(sizeof(float) * N * (size_t)n);
    float *a2a_out = xmalloc(sizeof(float) * N * (size_t)n);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < N; i++)
            a2a_in[p * N + i] = (float)(g_rank * 1000 + p * 10) + (float)i * 0.5f;
    COLL(t, "AlltoAll", sizeof(float) * N,
         ncclAlltoAll(a2a_in, a2a_out, N, ncclFloat32, world, NULL));
    for (int p = 0; p < n; p++)
        for (int i = 0; i < N; i++)
            if (a2a_out[p * N + i] != (float)(p * 1000 + g_rank * 10) + (float)i * 0.5f)
                verify_failed("AlltoAll", (size_t)(p * N + i), a2a_out[p * N + i], 0);
    tb_checksum_add(0, a2a_out, sizeof(float) * N * (size_t)n);

    double dv[N], *gathered = xmalloc(sizeof(double) * N * (size_t)n);
    for (int i = 0; i < N; i++)
        dv[i] = g_rank + i / 8.0;
    int groot = n - 1;
    COLL(t, "Gather", sizeof dv, ncclGather(dv, gathered, N, ncclFloat64, groot, world, NULL));
    if (g_rank == groot) {
        for (int p = 0; p < n; p++)
            for (int i = 0; i < N; i++)
                if (gathered[p * N + i] != p + i / 8.0)
                    verify_failed("Gather", (size_t)i, gathered[p * N + i], p + i / 8.0);
        tb_checksum_add(0, gathered, sizeof(double) * N * (size_t)n);
    }
    /* Scatter back what was gathered (root's buffer is only read on root). */
    double back[N];
    COLL(t, "Scatter", sizeof back,
         ncclScatter(gathered, back, N, ncclFloat64, groot, world, NULL));
    for (int i = 0; i < N; i++)
        if (back[i] != g_rank + i / 8.0)
            verify_failed("Scatter", (size_t)i, back[i], g_rank + i / 8.0);
    tb_checksum_add(0, back, sizeof back);

    int64_t lv[N];
    for (int i = 0; i < N; i++)
        lv[i] = g_rank == 0 ? 7 * i : -1;
    COLL(t, "Bcast", sizeof lv, ncclBcast(lv, N, ncclInt64, 0, world, NULL));
    for (int i = 0; i < N; i++)
        if (lv[i] != 7 * i)
            verify_failed("Bcast", (size_t)i, (double)lv[i], 7 * i);
    tb_checksum_add(0, lv, sizeof lv);

    /* bf16 in place, max: exact whatever the order. */
    uint16_t hv[N];
    for (int i = 0; i < N; i++)
        hv[i] = (uint16_t)(0x3f80 + ((g_rank * 5 + i) % 17)); /* 1.0 .. ~1.13 */
    COLL(t, "AllReduce", sizeof hv,
         ncclAllReduce(hv, hv, N, ncclBfloat16, ncclMax, world, NULL));
    for (int i = 0; i < N; i++) {
        int best = 0;
        for (int r = 0; r < n; r++)
            best = (r * 5 + i) % 17 > best ? (r * 5 + i) % 17 : best;
        if (hv[i] != 0x3f80 + best)
            verify_failed("AllReduce bf16 max", (size_t)i, hv[i], 0x3f80 + best);
    }
    tb_checksum_add(0, hv, sizeof hv);
    free(a2a_in), free(a2a_out), free(gathered);
}

/* ---------------------------------------------------------------- threads */

typedef struct worker {
    int idx;
    ncclUniqueId id;
    pthread_t th;
} worker;

/* Each worker thread inits its own communicator and runs the steps on it,
 * concurrently with the main thread and the other workers. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    char key[32];
    snprintf(key, sizeof key, "thread%d", w->idx);
    ncclComm_t comm;
    tb_comm_tally *t = tb_tally_comm(key, g_world, g_rank);
    /* What ProcessGroupNCCL uses: InitRankConfig with the 2.28 defaults. */
    ncclConfig_t cfg = {.size = sizeof cfg, .magic = 0xcafebeef, .version = FN_NCCL_VERSION_CODE,
                        .blocking = 1, .cgaClusterSize = INT_MIN, .minCTAs = INT_MIN,
                        .maxCTAs = INT_MIN, .splitShare = INT_MIN, .trafficClass = INT_MIN,
                        .collnetEnable = INT_MIN, .CTAPolicy = INT_MIN, .shrinkShare = INT_MIN,
                        .nvlsCTAs = INT_MIN, .nChannelsPerNetPeer = INT_MIN,
                        .nvlinkCentricSched = INT_MIN};
    CALL(t, "CommInitRankConfig",
         ncclCommInitRankConfig(&comm, g_world, w->id, g_rank, &cfg));
    size_t n = opt.thread_bytes / 4;
    float *buf = xmalloc(n * 4);
    for (int s = 0; s < opt.steps; s++) {
        fill(buf, n, (unsigned)(g_rank * 17 + w->idx * 3 + s));
        COLL(t, "AllReduce", n * 4, ncclAllReduce(buf, buf, n, ncclFloat32, ncclSum, comm, NULL));
        for (size_t i = 0; i < n; i++) {
            float want = 0;
            for (int r = 0; r < g_world; r++)
                want += value((unsigned)(r * 17 + w->idx * 3 + s), i);
            if (buf[i] != want)
                verify_failed("thread AllReduce", i, buf[i], want);
        }
        tb_checksum_add(1 + w->idx, buf, n * 4);
    }
    free(buf);
    /* Odd workers tear down the way a failing job does. */
    if (w->idx % 2)
        CALL(t, "CommAbort", ncclCommAbort(comm));
    else
        CALL(t, "CommDestroy", ncclCommDestroy(comm));
    return NULL;
}

/* ------------------------------------------------------------------- main */

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

static void mark(int step_done)
{
    if (!opt.mark_file || step_done != opt.mark_after)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", opt.mark_file, g_rank);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

/* LeakSanitizer hook (ASan builds only; an ordinary function otherwise).
 * In a child forked from a multi-threaded process LSan cannot suspend the
 * parent's threads, so everything they referenced looks leaked: skip the
 * check there, and only there. */
static volatile int in_forked_child;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_forked_child; }

/* A child that never touches NCCL, like a DataLoader worker; exit() (not
 * _exit) so the preload's exit handlers run in it too. */
static pid_t fork_child(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        in_forked_child = 1;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        exit(0);
    }
    if (pid < 0)
        perror("tsc-testbed-rank: fork");
    return pid;
}

/* --usr2-count: the application's own SIGUSR2 handler, which a tool that
 * also uses SIGUSR2 must still run. */
static volatile sig_atomic_t g_usr2;
static void on_usr2(int sig)
{
    (void)sig;
    g_usr2++;
}

/* --term-exit CODE: an application that ends on SIGTERM by itself (as
 * training scripts that save a checkpoint do); a tool that also takes
 * SIGTERM must still run it. */
static void on_term(int sig)
{
    (void)sig;
    char msg[64];
    int n = snprintf(msg, sizeof msg, "rank %d got SIGTERM\n", g_rank);
    ssize_t w = write(STDOUT_FILENO, msg, (size_t)n);
    (void)w;
    _exit(opt.term_exit);
}

int main(int argc, char **argv)
{
    if (tb_parse_options(&opt, argc, argv) != 0)
        return 2;
    if (opt.usr2_count)
        signal(SIGUSR2, on_usr2);
    if (opt.term_exit >= 0)
        signal(SIGTERM, on_term);
    g_rank = env_int("RANK", 0);
    host_faults(g_rank); /* before any thread exists, as under taskset */
    g_world = env_int("WORLD_SIZE", 1);
    const char *rdzv = getenv("TSC_TESTBED_RDZV");
    if (g_world < 1 || g_rank < 0 || g_rank >= g_world || (g_world > 1 && !rdzv)) {
        fprintf(stderr, "tsc-testbed-rank: need RANK < WORLD_SIZE and TSC_TESTBED_RDZV\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    size_t nids = 1 + (size_t)opt.threads;
    ncclUniqueId *ids = xmalloc(sizeof *ids * nids);
    if (g_rank == 0)
        for (size_t i = 0; i < nids; i++)
            if (ncclGetUniqueId(&ids[i]) != ncclSuccess)
                die_nccl("ncclGetUniqueId", ncclSystemError);
    if (g_world > 1 && tb_rdzv_exchange(rdzv, g_rank, ids, sizeof *ids, nids, 60) != 0)
        return 3;

    ncclComm_t world, half = NULL;
    tb_comm_tally *tw = tb_tally_comm("world", g_world, g_rank);
    mark(0); /* --mark-after 0:FILE: every rank has reached communicator creation */
    if (g_rank == opt.stop_rank && opt.stop_step == TB_STOP_AT_INIT) {
        /* A rank that never joins: the others block creating the communicator. */
        fprintf(stderr, "tsc-testbed-rank %d: never creates its communicator\n", g_rank);
        for (;;)
            pause();
    }
    CALL(tw, "CommInitRank", ncclCommInitRank(&world, g_world, ids[0], g_rank));
    tb_comm_tally *th = NULL;
    if (opt.fsdp_bytes) {
        char key[16];
        snprintf(key, sizeof key, "parity%d", g_rank % 2);
        th = tb_tally_comm(key, (g_world - g_rank % 2 + 1) / 2, g_rank / 2);
        CALL(th, "CommSplit", ncclCommSplit(world, g_rank % 2, g_rank, &half, NULL));
        int cnt = 0, ur = -1;
        if (ncclCommCount(half, &cnt) != ncclSuccess ||
            ncclCommUserRank(half, &ur) != ncclSuccess ||
            cnt != (g_world - g_rank % 2 + 1) / 2 || ur != g_rank / 2) {
            fprintf(stderr, "tsc-testbed-rank %d: split gave rank %d of %d\n", g_rank, ur, cnt);
            return 4;
        }
    }

    /* --upstream: a communicator for the pair (the other ranks get one of
     * their own and leave it unused). */
    ncclComm_t pair = NULL;
    tb_comm_tally *tp = NULL;
    int up = opt.up_rank >= 0 && opt.up_rank < g_world && opt.up_from < g_world;
    if (up) {
        int member = g_rank == opt.up_rank || g_rank == opt.up_from;
        int lower = opt.up_rank < opt.up_from ? opt.up_rank : opt.up_from;
        tp = tb_tally_comm(member ? "upstream" : "upstream-others", member ? 2 : g_world - 2,
                           member ? g_rank != lower : g_rank - (g_rank > opt.up_rank) -
                                                          (g_rank > opt.up_from));
        CALL(tp, "CommSplit", ncclCommSplit(world, member ? 0 : 1, g_rank, &pair, NULL));
    }

    if (opt.bcast_bytes) {
        size_t n = opt.bcast_bytes / 4;
        float *w = xmalloc(n * 4), *r = xmalloc(n * 4);
        fill(w, n, 4242);
        COLL(tw, "Broadcast", n * 4, ncclBroadcast(w, r, n, ncclFloat32, 0, world, NULL));
        for (size_t i = 0; i < n; i++)
            if (r[i] != value(4242, i))
                verify_failed("Broadcast", i, r[i], value(4242, i));
        tb_checksum_add(0, r, n * 4);
        free(w), free(r);
    }

    worker *workers = xmalloc(sizeof *workers * (size_t)(opt.threads ? opt.threads : 1));
    for (int i = 0; i < opt.threads; i++) {
        workers[i].idx = i;
        workers[i].id = ids[1 + i];
        if (pthread_create(&workers[i].th, NULL, worker_main, &workers[i]) != 0) {
            fprintf(stderr, "tsc-testbed-rank: pthread_create failed\n");
            return 5;
        }
    }

    pid_t child = -1;
    if (tb_pipe_enabled()) { /* pipeline stages instead of the data-parallel step */
        int prc = tb_pipe_run(world, g_rank, g_world, opt.steps);
        if (prc)
            return prc;
        opt.steps = 0;
    }
    for (int s = 0; s < opt.steps; s++) {
        if (up && g_rank == opt.up_rank)
            upstream(pair, tp, s, 0);
        compute(g_rank, s);
        if (up && g_rank == opt.up_from)
            upstream(pair, tp, s, 1);
        /* After the step's compute, as a training step that crashes in
         * its forward pass: a slow rank (--slow-ms) fails after the others
         * have entered the step's first collective. */
        if (g_rank == opt.fail_rank && s == opt.fail_step) {
            fprintf(stderr, "tsc-testbed-rank %d: failing on purpose at step %d\n", g_rank, s);
            exit(opt.fail_code);
        }
        if (g_rank == opt.stop_rank && s == opt.stop_step) {
            /* A rank that never reaches the next collective (a dead data
             * loader, a deadlock elsewhere): the others block in it. */
            fprintf(stderr, "tsc-testbed-rank %d: stops calling NCCL at step %d\n", g_rank, s);
            for (;;)
                pause();
        }
        gradient_buckets(world, tw, s);
        if (half)
            fsdp_pair(half, th, s);
        if (opt.ring_bytes && g_world > 1)
            ring(world, tw, s);
        if (opt.fork_child && s == opt.steps / 2)
            child = fork_child();
        mark(s + 1);
    }
    for (int i = 0; i < opt.threads; i++)
        pthread_join(workers[i].th, NULL);
    if (opt.extras)
        extras(world, tw);

    if (pair) {
        CALL(tp, "CommFinalize", ncclCommFinalize(pair));
        CALL(tp, "CommDestroy", ncclCommDestroy(pair));
    }
    if (half) {
        CALL(th, "CommFinalize", ncclCommFinalize(half));
        CALL(th, "CommDestroy", ncclCommDestroy(half));
    }
    CALL(tw, "CommFinalize", ncclCommFinalize(world));
    CALL(tw, "CommDestroy", ncclCommDestroy(world));

    int forked = 0;
    if (child > 0) {
        int st;
        if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "tsc-testbed-rank %d: forked child failed\n", g_rank);
            return 6;
        }
        forked = 1;
    }
    printf("rank %d checksum %016llx\n", g_rank, (unsigned long long)tb_checksum_total());
    if (opt.usr2_count)
        printf("rank %d got %d SIGUSR2\n", g_rank, (int)g_usr2);
    if (opt.expect_file) {
        char path[4096];
        /* One file per rank: FILE gets ".<rank>" appended. */
        snprintf(path, sizeof path, "%s.%d", opt.expect_file, g_rank);
        if (tb_tally_write(path, g_rank, g_world, forked) != 0) {
            fprintf(stderr, "tsc-testbed-rank: cannot write %s\n", path);
            return 7;
        }
    }
    free(workers);
    free(ids);
    return 0;
}
