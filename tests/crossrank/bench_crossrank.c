/* Benchmark of the cross-rank pass on an in-memory synthetic job:
 *   bench_crossrank [ranks] [steps] [collectives per step]
 * Prints the time of tsa_xrank_run and the peak memory before and after
 * it (the difference is what the pass added on top of the model). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "crossrank/crossrank.h"
#include "synth_job.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    synth_params p;
    synth_defaults(&p);
    p.n_ranks = argc > 1 ? atoi(argv[1]) : 1000;
    p.n_steps = argc > 2 ? atoi(argv[2]) : 1000;
    p.per_step = argc > 3 ? atoi(argv[3]) : 2;
    p.ranks_per_host = 8;
    p.max_offset_ns = 2000000000ll;
    if (p.n_ranks < 2 || p.n_steps < 1 || p.per_step < 1) {
        fprintf(stderr, "usage: bench_crossrank [ranks>=2] [steps>=1] [collectives>=1]\n");
        return 2;
    }
    double *sd = calloc((size_t)p.n_ranks, sizeof *sd);
    if (!sd)
        return 1;
    sd[p.n_ranks / 3] = 0.05;
    p.slowdown = sd;
    double t0 = now();
    tsa_job *job = synth_job(&p, NULL);
    if (!job) {
        fprintf(stderr, "out of memory building the job\n");
        return 1;
    }
    double t1 = now();
    long before = peak_kib();
    tsa_xrank_result r;
    tsa_findings f = {0};
    if (tsa_xrank_run(job, NULL, &r, &f)) {
        fprintf(stderr, "tsa_xrank_run: out of memory\n");
        return 1;
    }
    double t2 = now();
    long after = peak_kib();
    printf("ranks %d steps %d collectives/step %d calls %lld\n", p.n_ranks, p.n_steps,
           p.per_step, (long long)p.n_ranks * p.n_steps * p.per_step);
    printf("build job      %.3f s\n", t1 - t0);
    printf("crossrank pass %.3f s\n", t2 - t1);
    printf("peak RSS       %ld MiB before the pass, %ld MiB after (+%ld MiB)\n",
           before / 1024, after / 1024, (after - before) / 1024);
    printf("straggler      %d (truth %d), findings %zu, residual %.1f us\n",
           r.straggler ? r.straggler->rank : -1, p.n_ranks / 3, f.n,
           (double)r.clock_residual_ns / 1e3);
    tsa_findings_free(&f);
    tsa_xrank_free(&r);
    synth_job_free(job);
    free(sd);
    return 0;
}
