/* Added cost of one intercepted NCCL call.
 *
 * Runs itself as a child twice per configuration: once calling the stub
 * NCCL directly, once with libtscope_preload.so preloaded in front of it.
 * Each child times every ncclAllReduce call on each of N threads with
 * CLOCK_MONOTONIC and prints median and p99; the difference between the
 * two runs is what the interposition adds (the timer cost is in both).
 *
 * With more threads than cores the threads time-share, so wall-clock
 * figures include waiting for a core.  Each child therefore also reports
 * CPU ns per call: the timed loops' CLOCK_THREAD_CPUTIME_ID summed over
 * all threads, divided by all calls.  That counts only the time a thread
 * ran, so it compares across thread counts on any number of cores.
 * Configurations: 1 thread; 8 threads on one shared communicator (all
 * bump its sequence counter); 8 threads with a communicator each.
 * The preloaded run's dump gives the bytes per event.
 *
 * On a shared machine one run is noisy: every configuration runs ROUNDS
 * times with the modes interleaved, and each figure is the median over
 * the rounds.  BASELINE_SO, another build of the library (say, before a
 * change), runs as a third mode in the same rounds for a side-by-side
 * comparison.
 *
 * Then the user's measure: one thread calling the same tiny all-reduce
 * two million times in a plain loop, no timer inside, the whole loop timed,
 * best of five loops per child.  It differs from the median above: the
 * loop's mean carries every slow call (a ring half full waking the writer,
 * a descriptor defined, the writer thread taking the other core), which a
 * median leaves out.  Where valgrind is installed, the same loop runs once
 * under callgrind per mode and the instructions of the loop function per
 * call are printed: the added instructions, unlike nanoseconds, do not
 * depend on the machine's load.
 *
 * Usage: bench_preload PRELOAD_SO [ITERS_PER_THREAD [ROUNDS [BASELINE_SO]]]
 *        bench_preload --child THREADS ITERS OWN_COMM   (internal)
 *        bench_preload --loop ITERS LOOPS               (internal)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_abi.h"

tsc_nccl_result_t ncclAllReduce(const void *, void *, size_t, tsc_nccl_dtype_t,
                                tsc_nccl_redop_t, tsc_nccl_comm_t, tsc_cuda_stream_t);
tsc_nccl_result_t ncclCommInitRank(tsc_nccl_comm_t *, int, tsc_nccl_unique_id, int);

static tsc_nccl_comm_t comms[64];
static long iters;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct work {
    uint32_t *lat;
    tsc_nccl_comm_t comm;
    uint64_t cpu_ns;   /* thread CPU time of the timed loop */
};

static void *worker(void *arg)
{
    struct work *w = arg;
    uint32_t *lat = w->lat;
    tsc_nccl_comm_t comm = w->comm;
    /* Warm-up: first-call set-up, thread registration, interning. */
    for (int i = 0; i < 1000; i++)
        ncclAllReduce(NULL, NULL, 1024, tsc_ncclFloat32, tsc_ncclSum, comm, NULL);
    uint64_t c0 = thread_cpu_ns();
    for (long i = 0; i < iters; i++) {
        uint64_t t0 = now_ns();
        /* Alternate two signatures, as a training step alternates buckets. */
        ncclAllReduce(NULL, NULL, (i & 1) ? 1024 : 4096, tsc_ncclBfloat16, tsc_ncclSum, comm,
                      NULL);
        uint64_t t1 = now_ns();
        lat[i] = (uint32_t)(t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0);
    }
    w->cpu_ns = thread_cpu_ns() - c0;
    return NULL;
}

/* The preload fits its clock to the counter in the first 200 ms (until
 * then each timestamp is a clock_gettime): a job runs for hours, so the
 * measures start after that. */
static void settle_clock(void)
{
    usleep(600000);
}

/* The user's loop: not inlined, so callgrind can count it alone. */
static void __attribute__((noinline)) call_loop(tsc_nccl_comm_t comm, long n)
{
    for (long i = 0; i < n; i++)
        ncclAllReduce(NULL, NULL, 256, tsc_ncclFloat32, tsc_ncclSum, comm, NULL);
}

/* Best ns per call over `loops` timed loops of n calls. */
static int loop_child(long n, int loops)
{
    tsc_nccl_unique_id id;
    memset(&id, 3, sizeof id);
    tsc_nccl_comm_t comm;
    if (ncclCommInitRank(&comm, 1, id, 0) != tsc_ncclSuccess)
        return 1;
    call_loop(comm, 1000);
    settle_clock();
    double best = 1e18;
    for (int k = 0; k < loops; k++) {
        uint64_t t0 = now_ns();
        call_loop(comm, n);
        double per = (double)(now_ns() - t0) / (double)n;
        if (per < best)
            best = per;
    }
    printf("%.2f\n", best);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int child(int threads, long n, int own_comm)
{
    iters = n;
    if (threads < 1 || threads > 64)
        return 1;
    tsc_nccl_unique_id id;
    memset(&id, 7, sizeof id);
    for (int i = 0; i < (own_comm ? threads : 1); i++) {
        id.internal[0] = (char)i;
        if (ncclCommInitRank(&comms[i], 1, id, 0) != tsc_ncclSuccess)
            return 1;
    }
    uint32_t *lat = malloc(sizeof *lat * (size_t)n * (size_t)threads);
    if (!lat)
        return 1;
    pthread_t t[64];
    struct work w[64];
    settle_clock();
    uint64_t t0 = now_ns();
    for (int i = 0; i < threads; i++) {
        w[i] = (struct work){.lat = lat + (size_t)i * (size_t)n,
                             .comm = comms[own_comm ? i : 0]};
        pthread_create(&t[i], NULL, worker, &w[i]);
    }
    uint64_t cpu = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        cpu += w[i].cpu_ns;
    }
    uint64_t wall = now_ns() - t0;
    size_t total = (size_t)n * (size_t)threads;
    qsort(lat, total, sizeof *lat, cmp_u32);
    printf("%u %u %.1f %.1f\n", lat[total / 2], lat[total * 99 / 100],
           (double)wall / (double)total, (double)cpu / (double)total);
    free(lat);
    return 0;
}

struct result {
    unsigned median, p99;
    double wall_per_call, cpu_per_call;
};

/* Runs `self ARGS...` (with the preload and its output folder when
 * preload is set; under callgrind, counting only call_loop, when cg_out
 * is set) and reads its stdout into buf.  0, or -1 when it failed. */
static int spawn(const char *self, const char *const *args, const char *preload,
                 const char *outdir, const char *cg_out, char *buf, size_t cap)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    pid_t p = fork();
    if (p == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        if (preload) {
            setenv("LD_PRELOAD", preload, 1);
            setenv("TSCOPE_OUT", outdir, 1);
        }
        const char *argv[16];
        size_t n = 0;
        char of[600];
        if (cg_out) {
            snprintf(of, sizeof of, "--callgrind-out-file=%s", cg_out);
            int devnull = open("/dev/null", O_WRONLY);
            dup2(devnull, 2);
            argv[n++] = "valgrind";
            argv[n++] = "--tool=callgrind";
            argv[n++] = of;
            argv[n++] = "--collect-atstart=no";
            argv[n++] = "--toggle-collect=call_loop";
        }
        argv[n++] = self;
        for (size_t i = 0; args[i] && n < 15; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    memset(buf, 0, cap);
    ssize_t k = read(fd[0], buf, cap - 1);
    close(fd[0]);
    int st;
    waitpid(p, &st, 0);
    return k > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int run(const char *self, const char *preload, const char *outdir, int threads,
               long n, int own_comm, struct result *r)
{
    char tb[16], nb[32], buf[256];
    snprintf(tb, sizeof tb, "%d", threads);
    snprintf(nb, sizeof nb, "%ld", n);
    const char *args[] = {"--child", tb, nb, own_comm ? "1" : "0", NULL};
    if (spawn(self, args, preload, outdir, NULL, buf, sizeof buf) < 0)
        return -1;
    return sscanf(buf, "%u %u %lf %lf", &r->median, &r->p99, &r->wall_per_call,
                  &r->cpu_per_call) == 4 ? 0 : -1;
}

/* File size and the "events" / "dropped_events" metadata of the only dump
 * in dir, read with a plain scan for the last occurrence of each key. */
static int dump_stats(const char *dir, long *bytes, long *events, long *dropped)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/*.tsd 2>/dev/null | head -1", dir);
    FILE *ls = popen(cmd, "r");
    char path[512] = "";
    if (!ls || !fgets(path, sizeof path, ls)) {
        if (ls)
            pclose(ls);
        return -1;
    }
    pclose(ls);
    path[strcspn(path, "\n")] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    *bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)*bytes);
    size_t got = fread(data, 1, (size_t)*bytes, f);
    fclose(f);
    *events = *dropped = -1;
    for (size_t i = 0; i + 16 < got; i++) {
        if (!memcmp(data + i, "events\0", 7) && (i == 0 || data[i - 1] == '\0'))
            *events = atol(data + i + 7);
        if (!memcmp(data + i, "dropped_events\0", 15) && (i == 0 || data[i - 1] == '\0'))
            *dropped = atol(data + i + 15);
    }
    free(data);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { MAX_ROUNDS = 64, MAX_MODES = 3 };

/* Per configuration and mode, what each round measured. */
struct series {
    double median[MAX_ROUNDS], p99[MAX_ROUNDS], wall[MAX_ROUNDS], cpu[MAX_ROUNDS];
};

static void print_row(const char *label, const char *mode, struct series *x, int rounds)
{
    double m = median_of(x->median, rounds), p = median_of(x->p99, rounds);
    double w = median_of(x->wall, rounds), c = median_of(x->cpu, rounds);
    printf("%-8s %-10s %10.0f %10.0f %14.1f %13.1f\n", label, mode, m, p, w, c);
}

static void print_dump(const char *label, const char *mode, const char *dir, int *rc)
{
    long bytes, events, dropped;
    if (dump_stats(dir, &bytes, &events, &dropped) == 0 && events > 0)
        printf("%-8s %-10s dump: %ld bytes, %ld events, %ld dropped, %.2f bytes/event\n",
               label, mode, bytes, events, dropped, (double)bytes / (double)events);
    else
        *rc = 1;
}

/* Runs `self --loop n loops` (see spawn); its best ns per call in *out. */
static int run_loop(const char *self, const char *preload, const char *outdir, long n,
                    int loops, const char *cg_out, double *out)
{
    char nb[32], lb[16], buf[128];
    snprintf(nb, sizeof nb, "%ld", n);
    snprintf(lb, sizeof lb, "%d", loops);
    const char *args[] = {"--loop", nb, lb, NULL};
    if (spawn(self, args, preload, outdir, cg_out, buf, sizeof buf) < 0)
        return -1;
    return sscanf(buf, "%lf", out) == 1 ? 0 : -1;
}

/* The "summary:" (or "totals:") count of a callgrind output file. */
static double callgrind_total(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    double total = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
            total = atof(strchr(line, ':') + 1);
    fclose(f);
    return total;
}

static int have_valgrind(void)
{
    return system("valgrind --version >/dev/null 2>&1") == 0;
}

/* The user's measure (see the top comment), all modes side by side. */
static int user_measure(const char *self, const char *const *libs, const char *const *names,
                        int modes, int rounds)
{
    const long n = 2000000;
    char dir[] = "/tmp/tsc_bench_loop_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    static struct series best[MAX_MODES];
    printf("\none thread, the same all-reduce %ld times in a loop, best of 5 loops per run, "
           "median over %d runs\n", n, rounds);
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < modes; m++)
            if (run_loop(self, libs[m], dir, n, 5, NULL, &best[m].wall[r]) < 0) {
                fprintf(stderr, "loop child failed\n");
                return 1;
            }
    double base = median_of(best[0].wall, rounds);
    for (int m = 0; m < modes; m++) {
        double v = median_of(best[m].wall, rounds);
        printf("%-10s %8.1f ns/call", names[m], v);
        if (m)
            printf("   added %6.1f ns", v - base);
        printf("\n");
    }
    if (!have_valgrind()) {
        printf("(valgrind not installed: no instruction counts)\n");
    } else {
        const long cg_n = 200000;
        printf("instructions per call (callgrind, the loop function, %ld calls):\n", cg_n);
        double ir0 = 0;
        for (int m = 0; m < modes; m++) {
            char out[128];
            snprintf(out, sizeof out, "%s/cg.%d", dir, m);
            double dummy;
            if (run_loop(self, libs[m], dir, cg_n, 1, out, &dummy) < 0) {
                printf("%-10s (callgrind run failed)\n", names[m]);
                continue;
            }
            double ir = callgrind_total(out) / (double)cg_n;
            if (m == 0)
                ir0 = ir;
            printf("%-10s %8.1f instructions/call", names[m], ir);
            if (m)
                printf("   added %6.1f", ir - ir0);
            printf("\n");
        }
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "--child"))
        return child(atoi(argv[2]), atol(argv[3]), atoi(argv[4]));
    if (argc >= 4 && !strcmp(argv[1], "--loop"))
        return loop_child(atol(argv[2]), atoi(argv[3]));
    if (argc < 2) {
        fprintf(stderr, "usage: %s PRELOAD_SO [ITERS_PER_THREAD [ROUNDS [BASELINE_SO]]]\n",
                argv[0]);
        return 2;
    }
    /* Modes run interleaved within each round (direct, preload, baseline),
     * so a shared machine's load changes hit all of them alike; each figure
     * is the median over the rounds, "added" the median of the per-round
     * differences to the direct run. */
    const char *libs[MAX_MODES] = {NULL, argv[1], argc > 4 ? argv[4] : NULL};
    const char *mode_name[MAX_MODES] = {"direct", "preload", "baseline"};
    int modes = libs[2] ? 3 : 2;
    long n = argc > 2 ? atol(argv[2]) : 200000;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    if (n < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bad ITERS_PER_THREAD or ROUNDS (1..%d)\n", MAX_ROUNDS);
        return 2;
    }
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0)
        return 1;
    self[l] = '\0';
    printf("%ld calls per thread, %d rounds; median over rounds\n", n, rounds);
    printf("%-8s %-10s %10s %10s %14s %13s\n", "threads", "mode", "median_ns", "p99_ns",
           "wall_ns/call", "cpu_ns/call");
    /* "8" shares one communicator between threads, which NCCL forbids; it
     * stays as a worst case for cache-line contention only (its sequence
     * numbers may repeat, as nothing orders the calls). */
    static const struct { int threads, own_comm; const char *label; } cfgs[] = {
        {1, 0, "1"}, {8, 0, "8"}, {8, 1, "8/own"},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        const char *lb = cfgs[i].label;
        static struct series ser[MAX_MODES], add[MAX_MODES];
        char outdir[MAX_MODES][32];
        for (int m = 0; m < modes; m++) {
            snprintf(outdir[m], sizeof outdir[m], "/tmp/tsc_bench_XXXXXX");
            if (!mkdtemp(outdir[m]))
                return 1;
        }
        for (int r = 0; r < rounds; r++) {
            struct result res[MAX_MODES];
            for (int m = 0; m < modes; m++) {
                /* Keep only the last round's dump per mode. */
                char cmd[600];
                snprintf(cmd, sizeof cmd, "rm -f %s/*.tsd", outdir[m]);
                if (system(cmd) != 0)
                    rc = 1;
                if (run(self, libs[m], outdir[m], cfgs[i].threads, n, cfgs[i].own_comm,
                        &res[m]) < 0) {
                    fprintf(stderr, "benchmark child failed\n");
                    return 1;
                }
                ser[m].median[r] = res[m].median;
                ser[m].p99[r] = res[m].p99;
                ser[m].wall[r] = res[m].wall_per_call;
                ser[m].cpu[r] = res[m].cpu_per_call;
                add[m].median[r] = (double)res[m].median - res[0].median;
                add[m].p99[r] = (double)res[m].p99 - res[0].p99;
                add[m].wall[r] = res[m].wall_per_call - res[0].wall_per_call;
                add[m].cpu[r] = res[m].cpu_per_call - res[0].cpu_per_call;
            }
        }
        for (int m = 0; m < modes; m++)
            print_row(lb, mode_name[m], &ser[m], rounds);
        for (int m = 1; m < modes; m++) {
            char name[32];
            snprintf(name, sizeof name, "added%s", m == 2 ? "(b)" : "");
            print_row(lb, name, &add[m], rounds);
        }
        for (int m = 1; m < modes; m++)
            print_dump(lb, mode_name[m], outdir[m], &rc);
        for (int m = 0; m < modes; m++) {
            char cmd[600];
            snprintf(cmd, sizeof cmd, "rm -rf %s", outdir[m]);
            if (system(cmd) != 0)
                rc = 1;
        }
    }
    if (user_measure(self, libs, mode_name, modes, rounds) != 0)
        rc = 1;
    return rc;
}
