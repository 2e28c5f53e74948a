/* Phase times of the streaming report (stream_timing.h). */
#include "stream_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void now(double *wall, double *cpu)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void stream_timing_start(stream_timing *t)
{
    memset(t, 0, sizeof *t);
    const char *e = getenv("TSCOPE_STREAM_TIMING");
    t->on = e && *e && strcmp(e, "0");
    if (t->on)
        now(&t->wall0, &t->cpu0);
}

void stream_phase_begin(stream_timing *t)
{
    if (t->on)
        now(&t->at_wall, &t->at_cpu);
}

void stream_phase_end(stream_timing *t, int phase)
{
    if (!t->on)
        return;
    double w, c;
    now(&w, &c);
    t->wall[phase] += w - t->at_wall;
    t->cpu[phase] += c - t->at_cpu;
}

void stream_timing_print(const stream_timing *t)
{
    if (!t->on)
        return;
    static const char *const name[STREAM_PHASES] = {"load", "stage 2 again", "stage 3",
                                                    "cause reads"};
    double w, c, rest_w, rest_c;
    now(&w, &c);
    rest_w = w - t->wall0;
    rest_c = c - t->cpu0;
    fprintf(stderr, "tscope-report: stream timing (wall s / CPU s):");
    for (int p = 0; p < STREAM_PHASES; p++) {
        fprintf(stderr, " %s %.2f / %.2f;", name[p], t->wall[p], t->cpu[p]);
        rest_w -= t->wall[p];
        rest_c -= t->cpu[p];
    }
    fprintf(stderr, " job-level passes and output %.2f / %.2f; total %.2f / %.2f\n", rest_w,
            rest_c, w - t->wall0, c - t->cpu0);
}
