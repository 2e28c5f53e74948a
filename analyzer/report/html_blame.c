/* The blamed rank against the median rank, step by step (html_charts.h):
 * the work (time computing) of the rank the verdict or the straggler
 * figure names, and the median over all ranks of the same step.  A
 * persistent straggler is a line above the median all along; an
 * intermittent one rises in bursts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "html_charts.h"
#include "html_escape.h"
#include "html_ranks.h"
#include "load/rank_view.h"
#include "svg_chart.h"

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static void polyline(FILE *out, const tsa_svg *s, const double *ms, size_t n, double max,
                     const char *cls)
{
    fprintf(out, "<polyline class=\"%s\" fill=\"none\" points=\"", cls);
    for (size_t k = 0; k < n; k++) {
        if (ms[k] < 0)
            continue;
        double x = n > 1 ? s->left + (double)(s->right - s->left) * (double)k / (double)(n - 1)
                         : (s->left + s->right) / 2.0;
        fprintf(out, "%.1f,%.1f ", x, tsa_svg_y(s, ms[k], max));
    }
    fprintf(out, "\"/>\n");
}

/* Every rank's time computing in each analysed step, rank by rank (a lean
 * rank's steps decoded one at a time): col[k * nr + i], INT64_MIN where
 * rank i has no step k.  -1 on OOM. */
static int compute_by_step(const tsa_job *job, size_t n, int64_t *col)
{
    size_t nr = job->n_ranks;
    for (size_t i = 0; i < nr; i++) {
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&job->ranks[i], TSA_VIEW_STEPS, &v);
        for (size_t k = 0; r && k < n; k++) {
            long si = tsa_html_analysed_step(r, k);
            col[k * nr + i] = si >= 0 ? r->steps[si].compute_ns : INT64_MIN;
        }
        tsa_view_close(&v);
        if (!r)
            return -1;
    }
    return 0;
}

void tsa_html_blame(FILE *out, const tsa_analysis *a)
{
    const tsa_job *job = a->job;
    long bi = tsa_html_blamed_index(a);
    size_t n = a->steps, nr = job->n_ranks;
    double *mine = calloc(n ? n : 1, sizeof *mine), *median = calloc(n ? n : 1, sizeof *median);
    int64_t *all = malloc((n && nr ? n * nr : 1) * sizeof *all);
    int64_t *col = calloc(nr ? nr : 1, sizeof *col);
    if (!mine || !median || !all || !col || compute_by_step(job, n, all))
        goto done;
    double max = 0, sum_mine = 0, sum_med = 0;
    size_t both = 0;
    for (size_t k = 0; k < n; k++) {
        size_t m = 0;
        for (size_t i = 0; i < nr; i++)
            if (all[k * nr + i] != INT64_MIN)
                col[m++] = all[k * nr + i];
        median[k] = -1;
        if (m) {
            qsort(col, m, sizeof *col, cmp_i64);
            median[k] = (double)col[m / 2] / 1e6;
        }
        mine[k] = -1;
        if (bi >= 0 && all[k * nr + (size_t)bi] != INT64_MIN)
            mine[k] = (double)all[k * nr + (size_t)bi] / 1e6;
        if (mine[k] > max)
            max = mine[k];
        if (median[k] > max)
            max = median[k];
        if (mine[k] >= 0 && median[k] > 0) {
            sum_mine += mine[k];
            sum_med += median[k];
            both++;
        }
    }
    char title[96], reading[256];
    if (bi >= 0) {
        snprintf(title, sizeof title, "Rank %d against the median rank: time computing per step (ms)",
                 job->ranks[bi].rank);
        if (both && sum_med > 0)
            snprintf(reading, sizeof reading, "Rank %d computes %+.1f%% against the median rank "
                     "over %zu steps; a line above the median all along is a persistent "
                     "straggler, bursts an intermittent one.", job->ranks[bi].rank,
                     100 * (sum_mine / sum_med - 1), both);
        else
            snprintf(reading, sizeof reading, "Rank %d has no analysed steps to compare.",
                     job->ranks[bi].rank);
    } else {
        snprintf(title, sizeof title, "Median rank: time computing per step (ms)");
        snprintf(reading, sizeof reading, "No rank is blamed: the median rank alone.");
    }
    tsa_svg s;
    tsa_svg_begin(&s, out, "blamed-rank", title, reading, 760, 300, 80, 20, 130, 50);
    double ymax = tsa_svg_nice_max(max);
    tsa_svg_y_axis(&s, ymax, 1, "ms per step");
    polyline(out, &s, median, n, ymax, "median");
    if (bi >= 0)
        polyline(out, &s, mine, n, ymax, "blamed");
    fprintf(out, "<g class=\"axis\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                 "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>"
                 "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%zu</text>"
                 "<text class=\"unit\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">step</text></g>\n",
            s.left, s.bottom, s.right, s.bottom, s.left, s.bottom + 16, a->warmup, s.right,
            s.bottom + 16, (size_t)a->warmup + (n ? n - 1 : 0), (s.left + s.right) / 2,
            s.bottom + 34);
    fprintf(out, "<text class=\"key median\" x=\"%d\" y=\"%d\">median rank</text>", s.right + 8,
            s.top + 12);
    if (bi >= 0)
        fprintf(out, "<text class=\"key blamed\" x=\"%d\" y=\"%d\">rank %d</text>", s.right + 8,
                s.top + 28, job->ranks[bi].rank);
    fprintf(out, "\n");
    tsa_svg_end(&s);
done:
    free(mine);
    free(median);
    free(all);
    free(col);
}
