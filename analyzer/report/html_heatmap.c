/* Rank x step heatmaps (html_charts.h).  A straggler shows as a stripe
 * in time not computing: its row is light (it waits for nobody) while the
 * others are dark (they wait for it); a slow step is a dark column.  Above HM_MAX_ROWS ranks (HM_MAX_COLS steps) each
 * row (column) is the mean of a band of neighbours, and the chart says so,
 * which bounds the file at any job size. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "html_charts.h"
#include "html_escape.h"
#include "load/rank_view.h"
#include "svg_chart.h"

#define HM_MAX_ROWS 64
#define HM_MAX_COLS 120

typedef struct hm_grid {
    size_t rows, cols;          /* cells */
    size_t rank_band, step_band; /* ranks per row, steps per column */
    double *step_ms, *idle_ms;  /* rows x cols means; NAN-free: count 0 cells are -1 */
} hm_grid;

/* The analysed steps of rank r: its steps after the warm-up ones. */
static size_t first_analysed(const tsa_rank *r)
{
    size_t i = 0;
    while (i < r->n_steps && r->steps[i].warmup)
        i++;
    return i;
}

static int grid_build(const tsa_analysis *a, hm_grid *g)
{
    const tsa_job *job = a->job;
    size_t n = job->n_ranks, steps = a->steps;
    g->rank_band = (n + HM_MAX_ROWS - 1) / HM_MAX_ROWS;
    g->step_band = (steps + HM_MAX_COLS - 1) / HM_MAX_COLS;
    if (!g->rank_band)
        g->rank_band = 1;
    if (!g->step_band)
        g->step_band = 1;
    g->rows = (n + g->rank_band - 1) / g->rank_band;
    g->cols = (steps + g->step_band - 1) / g->step_band;
    size_t cells = g->rows * g->cols;
    g->step_ms = calloc(cells ? cells : 1, sizeof *g->step_ms);
    g->idle_ms = calloc(cells ? cells : 1, sizeof *g->idle_ms);
    size_t *count = calloc(cells ? cells : 1, sizeof *count);
    if (!g->step_ms || !g->idle_ms || !count) {
        free(count);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&job->ranks[i], TSA_VIEW_STEPS, &v);
        if (!r) {
            tsa_view_close(&v);
            free(count);
            return -1;
        }
        size_t f = first_analysed(r);
        for (size_t k = 0; k < steps && f + k < r->n_steps; k++) {
            const tsa_step *st = &r->steps[f + k];
            int64_t len = st->end_ns - st->start_ns;
            int64_t idle = len - st->compute_ns;
            size_t c = (i / g->rank_band) * g->cols + k / g->step_band;
            g->step_ms[c] += (double)len / 1e6;
            g->idle_ms[c] += (double)(idle > 0 ? idle : 0) / 1e6;
            count[c]++;
        }
        tsa_view_close(&v);
    }
    for (size_t c = 0; c < cells; c++) {
        if (count[c]) {
            g->step_ms[c] /= (double)count[c];
            g->idle_ms[c] /= (double)count[c];
        } else {
            g->step_ms[c] = g->idle_ms[c] = -1;
        }
    }
    free(count);
    return 0;
}

/* The first and last rank of row `row` ("rank 5", "ranks 64-127"). */
static void row_name(const tsa_analysis *a, const hm_grid *g, size_t row, char *buf, size_t cap)
{
    size_t lo = row * g->rank_band, hi = lo + g->rank_band - 1;
    if (lo >= a->job->n_ranks) {
        snprintf(buf, cap, "no rank");
        return;
    }
    if (hi >= a->job->n_ranks)
        hi = a->job->n_ranks - 1;
    if (lo == hi)
        snprintf(buf, cap, "rank %d", a->job->ranks[lo].rank);
    else
        snprintf(buf, cap, "ranks %d-%d", a->job->ranks[lo].rank, a->job->ranks[hi].rank);
}

static void one_map(FILE *out, const tsa_analysis *a, const hm_grid *g, const double *v,
                    const char *id, const char *title, const char *what)
{
    double lo = -1, hi = -1;
    size_t cells = g->rows * g->cols;
    double *row_mean = calloc(g->rows ? g->rows : 1, sizeof *row_mean);
    if (!row_mean)
        return;
    for (size_t r = 0; r < g->rows; r++) {
        size_t k = 0;
        for (size_t c = 0; c < g->cols; c++) {
            double x = v[r * g->cols + c];
            if (x < 0)
                continue;
            row_mean[r] += x;
            k++;
            if (lo < 0 || x < lo)
                lo = x;
            if (hi < 0 || x > hi)
                hi = x;
        }
        row_mean[r] = k ? row_mean[r] / (double)k : -1;
    }
    size_t rmax = 0, rmin = 0;
    for (size_t r = 0; r < g->rows; r++) {
        if (row_mean[r] > row_mean[rmax])
            rmax = r;
        if (row_mean[r] >= 0 && (row_mean[rmin] < 0 || row_mean[r] < row_mean[rmin]))
            rmin = r;
    }
    char reading[512], nmax[64], nmin[64];
    row_name(a, g, rmax, nmax, sizeof nmax);
    row_name(a, g, rmin, nmin, sizeof nmin);
    int banded = g->rank_band > 1 || g->step_band > 1;
    char band[160] = "";
    if (banded)
        snprintf(band, sizeof band, " Each row is the mean of %zu rank%s and each column of %zu "
                 "step%s (bands, to keep the page small).", g->rank_band,
                 g->rank_band == 1 ? "" : "s", g->step_band, g->step_band == 1 ? "" : "s");
    if (!cells || hi < 0)
        snprintf(reading, sizeof reading, "No analysed steps: nothing to show.");
    else
        snprintf(reading, sizeof reading, "%s per step: most on %s (%.3g ms mean), least on %s "
                 "(%.3g ms).%s", what, nmax, row_mean[rmax], nmin, row_mean[rmin], band);
    int plot_w = 640, row_h = g->rows ? (int)(448 / g->rows) : 8;
    if (row_h > 16)
        row_h = 16;
    if (row_h < 4)
        row_h = 4;
    int plot_h = row_h * (int)(g->rows ? g->rows : 1);
    tsa_svg s;
    tsa_svg_begin(&s, out, id, title, reading, 120 + plot_w + 20, 24 + plot_h + 80, 120, 24, 20,
                  80);
    double cw = g->cols ? (double)plot_w / (double)g->cols : plot_w;
    double span = hi > lo ? hi - lo : 1;
    fprintf(out, "<g class=\"cells\">\n");
    for (size_t r = 0; r < g->rows; r++) {
        char rn[64];
        row_name(a, g, r, rn, sizeof rn);
        for (size_t c = 0; c < g->cols; c++) {
            double x = v[r * g->cols + c];
            if (x < 0)
                continue;
            char fill[8];
            tsa_svg_ramp(fill, sizeof fill, (x - lo) / span);
            size_t s0 = c * g->step_band;
            fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                         "<title>%s, step %zu: %.3f ms</title></rect>",
                    s.left + cw * (double)c, s.top + row_h * (int)r, cw + 0.3, row_h, fill, rn,
                    (size_t)a->warmup + s0, x);
        }
        fputc('\n', out);
    }
    fprintf(out, "</g>\n");
    /* Row labels: about 16 of them, the rest are in the cells' tooltips. */
    size_t every = (g->rows + 15) / 16;
    if (!every)
        every = 1;
    for (size_t r = 0; r < g->rows; r += every) {
        char rn[64];
        row_name(a, g, r, rn, sizeof rn);
        fprintf(out, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
                s.left - 6, s.top + row_h * (int)r + row_h / 2 + 4, rn);
    }
    /* Step axis: indices as the text report numbers them (warm-up included). */
    fprintf(out, "<g class=\"axis\">");
    for (int i = 0; i <= 4 && g->cols; i++) {
        size_t c = (g->cols - 1) * (size_t)i / 4;
        double x = s.left + cw * ((double)c + 0.5);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%zu</text>", x,
                s.bottom + 16, (size_t)a->warmup + c * g->step_band);
    }
    fprintf(out, "<text class=\"unit\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">step (rows: "
                 "ranks)</text></g>\n", (s.left + s.right) / 2, s.bottom + 32);
    /* Colour key, ms. */
    int ky = s.bottom + 46;
    for (int i = 0; i < 10; i++) {
        char fill[8];
        tsa_svg_ramp(fill, sizeof fill, i / 9.0);
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"10\" fill=\"%s\"/>",
                s.left + 60 + 24 * i, ky, fill);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g ms</text>"
                 "<text x=\"%d\" y=\"%d\">%.3g ms</text>\n",
            s.left + 56, ky + 9, lo < 0 ? 0 : lo, s.left + 60 + 240 + 4, ky + 9, hi < 0 ? 0 : hi);
    tsa_svg_end(&s);
    free(row_mean);
}

void tsa_html_heatmaps(FILE *out, const tsa_analysis *a)
{
    hm_grid g = {0};
    if (grid_build(a, &g) == 0) {
        one_map(out, a, &g, g.step_ms, "heatmap-step", "Step time by rank and step (ms)",
                "Step time");
        one_map(out, a, &g, g.idle_ms, "heatmap-idle",
                "Time not computing by rank and step: exposed communication and idle (ms)",
                "Time not computing");
    }
    free(g.step_ms);
    free(g.idle_ms);
}
