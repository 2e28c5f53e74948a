#include "throughput.h"
#include "load/rank_view.h"
#include "util/cmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t tsa_percentile_sorted(const int64_t *v, size_t n, double p)
{
    if (!n)
        return 0;
    double r = ceil(p / 100.0 * (double)n);
    size_t k = r < 1 ? 0 : (size_t)r - 1;
    return v[k < n ? k : n - 1];
}

int tsa_throughput_compute(tsa_analysis *a)
{
    tsa_throughput *t = &a->throughput;
    free(t->step_ns);
    memset(t, 0, sizeof *t);
    t->steps_per_s = t->samples_per_s = t->tokens_per_s = NAN;
    if (a->wall_ns > 0 && a->steps > 0 && a->method != TSA_STEPS_NONE) {
        t->steps_per_s = (double)a->steps / ((double)a->wall_ns / 1e9);
        double ranks = (double)a->n_ranks;
        if (a->opt.samples_per_step > 0)
            t->samples_per_s = a->opt.samples_per_step * ranks * t->steps_per_s;
        if (a->opt.tokens_per_step > 0)
            t->tokens_per_s = a->opt.tokens_per_step * ranks * t->steps_per_s;
    }
    if (!a->steps || a->method == TSA_STEPS_NONE)
        return 0;
    size_t first = (size_t)a->warmup, n = a->steps;
    t->step_ns = calloc(n, sizeof *t->step_ns);
    int64_t *sorted = malloc(n * sizeof *sorted);
    if (!t->step_ns || !sorted) {
        free(sorted);
        free(t->step_ns);
        t->step_ns = NULL;
        return -1;
    }
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&a->job->ranks[i], TSA_VIEW_STEPS, &v);
        if (!r) {
            tsa_view_close(&v);
            free(sorted);
            return -1;
        }
        for (size_t k = 0; k < n && first + k < r->n_steps; k++) {
            int64_t len = r->steps[first + k].end_ns - r->steps[first + k].start_ns;
            if (len > t->step_ns[k])
                t->step_ns[k] = len;
        }
        tsa_view_close(&v);
    }
    t->n_steps = n;
    memcpy(sorted, t->step_ns, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, tsa_cmp_i64);
    t->step_p50_ns = tsa_percentile_sorted(sorted, n, 50);
    t->step_p95_ns = tsa_percentile_sorted(sorted, n, 95);
    t->step_p99_ns = tsa_percentile_sorted(sorted, n, 99);
    free(sorted);
    return 0;
}

void tsa_sparkline(const int64_t *v, size_t n, size_t width, int utf8, char *buf, size_t cap)
{
    static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char ramp[] = "_.-~=+*#";
    size_t at = 0;
    if (!cap)
        return;
    buf[0] = 0;
    if (!n || !width)
        return;
    size_t cells = n < width ? n : width;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    for (size_t c = 0; c < cells; c++) {
        /* Cell c covers v[c*n/cells .. (c+1)*n/cells): its slowest step. */
        size_t s = c * n / cells, e = (c + 1) * n / cells;
        int64_t m = v[s];
        for (size_t i = s; i < e; i++)
            if (v[i] > m)
                m = v[i];
        int level = hi > lo ? (int)((double)(m - lo) * 7.0 / (double)(hi - lo) + 0.5) : 0;
        const char *sym = utf8 ? blocks[level] : (const char[2]){ramp[level], 0};
        size_t len = strlen(sym);
        if (at + len + 1 > cap)
            break;
        memcpy(buf + at, sym, len);
        at += len;
        buf[at] = 0;
    }
}
