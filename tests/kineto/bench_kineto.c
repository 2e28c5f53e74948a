/* Kineto parse speed: bench_kineto FILE [REPEAT] parses a trace REPEAT
 * times and prints JSON bytes/s, trace events/s and the peak RSS, so the
 * bounded-memory claim is measured too.  Make FILE with tsc-gen-kineto. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "load/job_build.h"
#include "load/kineto_load.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_kineto FILE [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    /* CPU time as well as wall time: on a shared machine the CPU figure is
     * the one that does not depend on the neighbours. */
    double best = 1e30, best_cpu = 1e30;
    tsa_kineto_stats st = {0};
    size_t kernels = 0;
    for (int i = 0; i < repeat; i++) {
        tsa_rank r;
        char err[512];
        double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (tsa_kineto_load_file(argv[1], &r, &st, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double dt = clock_s(CLOCK_MONOTONIC) - t0;
        double dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (dc < best_cpu)
            best_cpu = dc;
        kernels = r.n_kernels;
        tsa_rank_free_contents(&r);
        if (dt < best)
            best = dt;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("file %s\njson_bytes %llu\nevents %llu\nevents_whole %llu\nkernels %zu\n"
           "best_wall_s %.3f\n"
           "best_cpu_s %.3f\nMB_per_s %.1f\nevents_per_s %.0f\nMB_per_cpu_s %.1f\n"
           "events_per_cpu_s %.0f\nmax_rss_MB %.1f\n",
           argv[1], (unsigned long long)st.bytes, (unsigned long long)st.events,
           (unsigned long long)st.events_whole, kernels, best,
           best_cpu, st.bytes / best / 1e6, st.events / best, st.bytes / best_cpu / 1e6,
           st.events / best_cpu, ru.ru_maxrss / 1024.0);
    return 0;
}
