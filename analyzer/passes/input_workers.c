/* DataLoader workers' CPU around a step-start gap (input_workers.h).  The
 * sampler writes a worker's CPU time only when it changed, so its value at
 * a tick is its last sample at or before the tick; the process samples
 * (TSC_EV_PROC_CPU, every tick) give the ticks. */
#include "input_workers.h"

#include <stdlib.h>

#include "load/rank_telemetry.h"
#include "tsc_format.h"

int tsa_workers_of(const tsa_rank *r, int64_t w0, int64_t w1, tsa_workers *out)
{
    out->n = 0;
    out->first = out->end = NULL;
    const struct tsa_telemetry *tm = r->telemetry;
    if (!tm || !tm->n_task || tm->n_cpu < 2)
        return 0;
    size_t cap = 0;
    for (size_t i = 0; i < tm->n_task;) {
        size_t j = i;
        int inside = 0;
        while (j < tm->n_task && tm->task[j].task == tm->task[i].task) {
            inside |= tm->task[j].t >= w0 && tm->task[j].t <= w1;
            j++;
        }
        if (tm->task[j - 1].role == TSC_TASK_WORKER && inside) {
            if (out->n == cap) {
                size_t nc = cap ? 2 * cap : 8;
                size_t *f = realloc(out->first, nc * sizeof *f);
                if (!f)
                    goto oom;
                out->first = f;
                size_t *e = realloc(out->end, nc * sizeof *e);
                if (!e)
                    goto oom;
                out->end = e;
                cap = nc;
            }
            out->first[out->n] = i;
            out->end[out->n++] = j;
        }
        i = j;
    }
    return 0;
oom:
    tsa_workers_free(out);
    return -1;
}

void tsa_workers_free(tsa_workers *w)
{
    free(w->first);
    free(w->end);
    w->first = w->end = NULL;
    w->n = 0;
}

/* In arr[lo0, hi0), sorted by .t: the index of the first point after `at`
 * (lo0 when none is at or before at). */
#define FIRST_AFTER(arr, lo0, hi0, at, out)                                                        \
    do {                                                                                           \
        size_t lo_ = (lo0), hi_ = (hi0);                                                           \
        while (lo_ < hi_) {                                                                        \
            size_t mid_ = lo_ + (hi_ - lo_) / 2;                                                   \
            if ((arr)[mid_].t <= (at))                                                             \
                lo_ = mid_ + 1;                                                                    \
            else                                                                                   \
                hi_ = mid_;                                                                        \
        }                                                                                          \
        (out) = lo_;                                                                               \
    } while (0)

/* A worker's CPU time at tick t: its last sample at or before t; before
 * its first sample, that first value (its CPU before it was seen is not
 * this gap's). */
static uint64_t worker_cpu_at(const tsa_task_point *p, size_t a, size_t b, int64_t t)
{
    size_t after;
    FIRST_AFTER(p, a, b, t, after);
    return after == a ? p[a].cpu_ns : p[after - 1].cpu_ns;
}

double tsa_workers_cpus(const tsa_rank *r, const tsa_workers *w, int64_t s, int64_t e)
{
    const struct tsa_telemetry *tm = r->telemetry;
    if (!w->n || !tm || tm->n_cpu < 2 || e <= s)
        return -1;
    size_t after_s, after_e;
    FIRST_AFTER(tm->cpu, 0, tm->n_cpu, s, after_s);
    FIRST_AFTER(tm->cpu, 0, tm->n_cpu, e - 1, after_e);
    if (after_s == 0 || after_e >= tm->n_cpu)
        return -1; /* the ticks do not enclose the gap */
    int64_t a = tm->cpu[after_s - 1].t, b = tm->cpu[after_e].t;
    if (b <= a)
        return -1;
    double used = 0;
    for (size_t i = 0; i < w->n; i++) {
        uint64_t ca = worker_cpu_at(tm->task, w->first[i], w->end[i], a);
        uint64_t cb = worker_cpu_at(tm->task, w->first[i], w->end[i], b);
        used += cb > ca ? (double)(cb - ca) : 0;
    }
    return used / (double)(b - a) / (double)w->n;
}
