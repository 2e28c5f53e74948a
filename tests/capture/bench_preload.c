/* Added cost of one intercepted NCCL call.
 *
 * Runs itself as a child twice per thread count: once calling the stub
 * NCCL directly, once with libtscope_preload.so preloaded in front of it.
 * Each child times every ncclAllReduce call on each of N threads with
 * CLOCK_MONOTONIC and prints median and p99; the difference between the
 * two runs is what the interposition adds (the timer cost is in both).
 * The preloaded run's dump gives the bytes per event.
 *
 * Usage: bench_preload PRELOAD_SO [ITERS_PER_THREAD]
 *        bench_preload --child THREADS ITERS   (internal)
 */
#include <errno.h>
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

static tsc_nccl_comm_t comm;
static long iters;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
    uint32_t *lat = arg;
    /* Warm-up: first-call set-up, thread registration, interning. */
    for (int i = 0; i < 1000; i++)
        ncclAllReduce(NULL, NULL, 1024, tsc_ncclFloat32, tsc_ncclSum, comm, NULL);
    for (long i = 0; i < iters; i++) {
        uint64_t t0 = now_ns();
        /* Alternate two signatures, as a training step alternates buckets. */
        ncclAllReduce(NULL, NULL, (i & 1) ? 1024 : 4096, tsc_ncclBfloat16, tsc_ncclSum, comm,
                      NULL);
        uint64_t t1 = now_ns();
        lat[i] = (uint32_t)(t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0);
    }
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int child(int threads, long n)
{
    iters = n;
    tsc_nccl_unique_id id;
    memset(&id, 7, sizeof id);
    if (ncclCommInitRank(&comm, 1, id, 0) != tsc_ncclSuccess)
        return 1;
    uint32_t *lat = malloc(sizeof *lat * (size_t)n * (size_t)threads);
    pthread_t t[64];
    uint64_t t0 = now_ns();
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, lat + (size_t)i * (size_t)n);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    uint64_t wall = now_ns() - t0;
    size_t total = (size_t)n * (size_t)threads;
    qsort(lat, total, sizeof *lat, cmp_u32);
    printf("%u %u %.1f\n", lat[total / 2], lat[total * 99 / 100],
           (double)wall / (double)total);
    free(lat);
    return 0;
}

struct result {
    unsigned median, p99;
    double wall_per_call;
};

static int run(const char *self, const char *preload, const char *outdir, int threads,
               long n, struct result *r)
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
        char tb[16], nb[32];
        snprintf(tb, sizeof tb, "%d", threads);
        snprintf(nb, sizeof nb, "%ld", n);
        execl(self, self, "--child", tb, nb, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[256] = {0};
    ssize_t k = read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    int st;
    waitpid(p, &st, 0);
    if (k <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return sscanf(buf, "%u %u %lf", &r->median, &r->p99, &r->wall_per_call) == 3 ? 0 : -1;
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

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--child"))
        return child(atoi(argv[2]), atol(argv[3]));
    if (argc < 2) {
        fprintf(stderr, "usage: %s PRELOAD_SO [ITERS_PER_THREAD]\n", argv[0]);
        return 2;
    }
    const char *preload = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 200000;
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0)
        return 1;
    self[l] = '\0';
    printf("%-8s %-10s %10s %10s %14s\n", "threads", "mode", "median_ns", "p99_ns",
           "wall_ns/call");
    int threads[2] = {1, 8};
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        char outdir[] = "/tmp/tsc_bench_XXXXXX";
        if (!mkdtemp(outdir))
            return 1;
        struct result d, p;
        if (run(self, NULL, outdir, threads[i], n, &d) < 0 ||
            run(self, preload, outdir, threads[i], n, &p) < 0) {
            fprintf(stderr, "benchmark child failed\n");
            return 1;
        }
        printf("%-8d %-10s %10u %10u %14.1f\n", threads[i], "direct", d.median, d.p99,
               d.wall_per_call);
        printf("%-8d %-10s %10u %10u %14.1f\n", threads[i], "preload", p.median, p.p99,
               p.wall_per_call);
        printf("%-8d %-10s %10d %10d %14.1f\n", threads[i], "added", (int)p.median - (int)d.median,
               (int)p.p99 - (int)d.p99, p.wall_per_call - d.wall_per_call);
        long bytes, events, dropped;
        if (dump_stats(outdir, &bytes, &events, &dropped) == 0 && events > 0)
            printf("%-8d dump: %ld bytes, %ld events, %ld dropped, %.2f bytes/event\n",
                   threads[i], bytes, events, dropped, (double)bytes / (double)events);
        else
            rc = 1;
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf %s", outdir);
        if (system(cmd) != 0)
            rc = 1;
    }
    return rc;
}
