/* The blamed rank's own timeline against the median rank's (html_charts.h):
 * one representative step of each, as lanes on a common axis of time since
 * the step began.  The per-step chart (html_blame.c) says how much longer
 * the blamed rank computes; this one shows where inside the step: kernels
 * by category, NCCL calls, and the gaps where the GPU did nothing.  A
 * straggler computes longer and barely waits in its collectives; the
 * median rank's NCCL lane is long because it waits for the straggler.
 *
 * Lanes stay small whatever the step holds: kernels are drawn as pixel
 * columns (each the category with most time in it), NCCL calls and idle
 * gaps as exact intervals merged when less than half a pixel apart. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_charts.h"
#include "html_escape.h"
#include "html_ranks.h"
#include "load/kernel_category.h"
#include "load/rank_view.h"
#include "passes/rank_stages.h"
#include "svg_chart.h"

#define LANE_H 16
#define LANE_GAP 4
#define GROUP_GAP 16

typedef struct span {
    int64_t s, e;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

/* One rank's representative step, measured. */
typedef struct rank_step {
    const tsa_rank *r;
    tsa_rank *held;             /* r read again by the runner (a lean rank), to release */
    long step;                  /* index into r->steps */
    int64_t t0, t1;             /* the step on the rank's own clock */
    spans compute, comm, idle;  /* idle: nothing on the GPU (host-only: outside collectives) */
    int64_t compute_ns, exposed_ns, idle_ns;
} rank_step;

static int push(spans *l, int64_t s, int64_t e)
{
    if (e <= s)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        span *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (span){s, e};
    return 0;
}

static int by_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* Sorts and merges the spans in place, joining those at most `join` ns
 * apart; returns the covered length (exact when join is 0). */
static int64_t merge(spans *l, int64_t join)
{
    if (!l->n)
        return 0;
    qsort(l->v, l->n, sizeof *l->v, by_start);
    size_t m = 0;
    for (size_t i = 1; i < l->n; i++) {
        if (l->v[i].s <= l->v[m].e + join) {
            if (l->v[i].e > l->v[m].e)
                l->v[m].e = l->v[i].e;
        } else {
            l->v[++m] = l->v[i];
        }
    }
    l->n = m + 1;
    int64_t len = 0;
    for (size_t i = 0; i < l->n; i++)
        len += l->v[i].e - l->v[i].s;
    return len;
}

static int64_t clip(int64_t t, int64_t lo, int64_t hi)
{
    return t < lo ? lo : t > hi ? hi : t;
}

/* Compute kernels, NCCL calls (their GPU interval, or the host call when
 * no kernel is linked; unlinked communication kernels too) and the idle
 * complement of both, inside [t0, t1). */
static int measure(rank_step *m)
{
    const tsa_rank *r = m->r;
    spans busy = {0};
    int rc = 0;
    for (size_t i = 0; i < r->n_kernels && !rc; i++) {
        const tsa_kernel *k = &r->kernels[i];
        int64_t s = clip(k->start_ns, m->t0, m->t1), e = clip(k->end_ns, m->t0, m->t1);
        if (k->category == TSA_KCAT_COMM)
            rc = k->nccl < 0 ? push(&m->comm, s, e) : 0;
        else
            rc = push(&m->compute, s, e);
        rc = rc ? rc : push(&busy, s, e);
    }
    for (size_t i = 0; i < r->n_nccl && !rc; i++) {
        const tsa_nccl_op *c = &r->nccl[i];
        int64_t s = clip(c->gpu_start_ns, m->t0, m->t1), e = clip(c->gpu_end_ns, m->t0, m->t1);
        rc = push(&m->comm, s, e);
        rc = rc ? rc : push(&busy, s, e);
    }
    if (rc) {
        free(busy.v);
        return -1;
    }
    int64_t step = m->t1 - m->t0, covered = merge(&busy, 0);
    m->compute_ns = merge(&m->compute, 0);
    int64_t comm = merge(&m->comm, 0);
    if (r->n_kernels) {
        m->exposed_ns = covered - m->compute_ns;
        m->idle_ns = step - covered;
    } else {                    /* host-only: time outside collectives is the work */
        m->exposed_ns = comm;
        m->compute_ns = step - comm;
        m->idle_ns = 0;
    }
    int64_t t = m->t0;
    for (size_t i = 0; i < busy.n && !rc; i++) {
        rc = push(&m->idle, t, busy.v[i].s);
        t = busy.v[i].e;
    }
    rc = rc ? rc : push(&m->idle, t, m->t1);
    free(busy.v);
    return rc;
}

static void release(const tsa_analysis *a, rank_step *m)
{
    free(m->compute.v);
    free(m->comm.v);
    free(m->idle.v);
    if (m->held)
        a->runner->release(a->runner->ctx, m->held);
    m->held = NULL;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The analysed step (k) whose duration on rank `ri` is its median one. */
static long median_step_k(const tsa_job *job, long ri, size_t steps)
{
    int64_t *d = malloc((steps ? steps : 1) * sizeof *d);
    tsa_rank_view v;
    const tsa_rank *r = d ? tsa_view_open(&job->ranks[ri], TSA_VIEW_STEPS, &v) : NULL;
    if (!r) {
        if (d)
            tsa_view_close(&v);
        free(d);
        return -1;
    }
    size_t n = 0;
    for (size_t k = 0; k < steps; k++) {
        long si = tsa_html_analysed_step(r, k);
        if (si >= 0)
            d[n++] = r->steps[si].end_ns - r->steps[si].start_ns;
    }
    tsa_view_close(&v);
    long pick = -1;
    if (n) {
        int64_t *sorted = malloc(n * sizeof *sorted);
        if (sorted) {
            memcpy(sorted, d, n * sizeof *d);
            qsort(sorted, n, sizeof *sorted, cmp_i64);
            int64_t med = sorted[n / 2];
            for (size_t k = 0; k < n && pick < 0; k++)
                if (d[k] == med)
                    pick = (long)k;
            free(sorted);
        }
    }
    free(d);
    return pick;
}

typedef struct ranked {
    int64_t compute;
    long index;
} ranked;

static int by_compute(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->compute != b->compute)
        return a->compute < b->compute ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The rank of median compute over the analysed steps, the blamed one left
 * out; -1 when no other rank has analysed steps. */
static long median_rank(const tsa_job *job, long blamed, size_t steps)
{
    ranked *v = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        tsa_rank_view view;
        const tsa_rank *r = (long)i == blamed ? NULL
                                              : tsa_view_open(&job->ranks[i], TSA_VIEW_STEPS, &view);
        if (r && tsa_html_analysed_step(r, 0) >= 0) {
            int64_t sum = 0;
            for (size_t k = 0; k < steps; k++) {
                long si = tsa_html_analysed_step(r, k);
                if (si >= 0)
                    sum += r->steps[si].compute_ns;
            }
            v[n++] = (ranked){sum, (long)i};
        }
        if ((long)i != blamed)
            tsa_view_close(&view);
    }
    long pick = -1;
    if (n) {
        qsort(v, n, sizeof *v, by_compute);
        pick = v[(n - 1) / 2].index;
    }
    free(v);
    return pick;
}

static double px(const tsa_svg *s, int64_t dt, int64_t axis_ns)
{
    return s->left + (double)(s->right - s->left) * (double)dt / (double)axis_ns;
}

/* One lane's label and the exact spans as rects of class `cls`. */
static void span_lane(const tsa_svg *s, const rank_step *m, const spans *l, int y,
                      int64_t axis_ns, const char *cls, const char *label)
{
    FILE *out = s->out;
    fprintf(out, "<g class=\"lane\" data-rank=\"%d\" data-lane=\"%s\"><text class=\"label\" "
                 "x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %d %s</text>\n",
            m->r->rank, cls, s->left - 6, y + 12, m->r->rank, label);
    for (size_t i = 0; i < l->n; i++) {
        double x0 = px(s, l->v[i].s - m->t0, axis_ns), x1 = px(s, l->v[i].e - m->t0, axis_ns);
        fprintf(out, "<rect class=\"%s\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\">"
                     "<title>%s %.3f-%.3f ms</title></rect>\n",
                cls, x0, y, x1 - x0, LANE_H, label, (double)(l->v[i].s - m->t0) / 1e6,
                (double)(l->v[i].e - m->t0) / 1e6);
    }
    fprintf(out, "</g>\n");
}

/* The kernels lane: one column per pixel, the category with most kernel
 * time in it (none when kernels fill less than half of it), runs of the
 * same category as one rect.  Marks in `seen` the categories drawn. */
static void kernel_lane(const tsa_svg *s, const rank_step *m, int y, int64_t axis_ns,
                        int *seen)
{
    FILE *out = s->out;
    int w = s->right - s->left;
    double *busy = calloc((size_t)w * TSA_KCAT_COUNT, sizeof *busy);
    fprintf(out, "<g class=\"lane\" data-rank=\"%d\" data-lane=\"kernels\"><text class=\"label\" "
                 "x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %d kernels</text>\n",
            m->r->rank, s->left - 6, y + 12, m->r->rank);
    if (!busy) {
        fprintf(out, "</g>\n");
        return;
    }
    double col_ns = (double)axis_ns / w;
    for (size_t i = 0; i < m->r->n_kernels; i++) {
        const tsa_kernel *k = &m->r->kernels[i];
        if (k->category == TSA_KCAT_COMM || k->category >= TSA_KCAT_COUNT)
            continue;
        double a = (double)(clip(k->start_ns, m->t0, m->t1) - m->t0) / col_ns;
        double b = (double)(clip(k->end_ns, m->t0, m->t1) - m->t0) / col_ns;
        for (int c = (int)a; c < w && c < b; c++) {
            double lo = a > c ? a : c, hi = b < c + 1 ? b : c + 1;
            busy[(size_t)c * TSA_KCAT_COUNT + k->category] += hi - lo;
        }
    }
    int run = -1, run_from = 0;
    for (int c = 0; c <= w; c++) {
        int best = -1;
        if (c < w) {
            double total = 0, most = 0;
            for (int k = 0; k < TSA_KCAT_COUNT; k++) {
                double v = busy[(size_t)c * TSA_KCAT_COUNT + k];
                total += v;
                if (v > most) {
                    most = v;
                    best = k;
                }
            }
            if (total < 0.5)
                best = -1;
        }
        if (best == run)
            continue;
        if (run >= 0) {
            seen[run] = 1;
            fprintf(out, "<rect class=\"k%d\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\">"
                         "<title>%s %.3f-%.3f ms</title></rect>\n",
                    run, s->left + run_from, y, c - run_from, LANE_H,
                    tsa_kcat_name((tsa_kcat)run), run_from * col_ns / 1e6, c * col_ns / 1e6);
        }
        run = best;
        run_from = c;
    }
    fprintf(out, "</g>\n");
    free(busy);
}

static void ms_text(char *buf, size_t cap, int64_t ns)
{
    snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
}

/* "rank 5 computes 91.0 ms, 4.0 ms in exposed collectives, 10.0 ms idle" */
static void summary(char *buf, size_t cap, const rank_step *m, int gpu)
{
    char c[32], x[32], i[32];
    ms_text(c, sizeof c, m->compute_ns);
    ms_text(x, sizeof x, m->exposed_ns);
    ms_text(i, sizeof i, m->idle_ns);
    if (gpu)
        snprintf(buf, cap, "rank %d computes %s, %s in collectives not hidden by compute, %s "
                 "GPU idle", m->r->rank, c, x, i);
    else
        snprintf(buf, cap, "rank %d spends %s outside collectives and %s in them", m->r->rank,
                 c, x);
}

static void legend(const tsa_svg *s, const int *seen, int gpu)
{
    FILE *out = s->out;
    int x = s->left, y = s->bottom + 58;
    fprintf(out, "<g class=\"legend\">");
    for (int k = 0; k < TSA_KCAT_COUNT; k++) {
        if (!seen[k])
            continue;
        const char *name = tsa_kcat_name((tsa_kcat)k);
        fprintf(out, "<rect class=\"k%d\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/>"
                     "<text x=\"%d\" y=\"%d\">%s</text>", k, x, y - 9, x + 13, y, name);
        x += 22 + 7 * (int)strlen(name);
    }
    fprintf(out, "<rect class=\"comm\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/>"
                 "<text x=\"%d\" y=\"%d\">NCCL</text>", x, y - 9, x + 13, y);
    x += 50;
    if (gpu)
        fprintf(out, "<rect class=\"idle\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/>"
                     "<text x=\"%d\" y=\"%d\">GPU idle</text>", x, y - 9, x + 13, y);
    fprintf(out, "</g>\n");
}

/* Lanes of one rank from y; returns the y after them. */
static int rank_lanes(const tsa_svg *s, const rank_step *m, int y, int64_t axis_ns, int gpu,
                      int *seen)
{
    if (gpu) {
        kernel_lane(s, m, y, axis_ns, seen);
        y += LANE_H + LANE_GAP;
    }
    span_lane(s, m, &m->comm, y, axis_ns, "comm", "NCCL");
    y += LANE_H + LANE_GAP;
    if (gpu) {
        span_lane(s, m, &m->idle, y, axis_ns, "idle", "GPU idle");
        y += LANE_H + LANE_GAP;
    }
    return y;
}

/* A remote rank's records come from the runner that loaded it (the
 * streaming report reads the dump again; the MPI tool cannot). */
static int setup(rank_step *m, const tsa_analysis *a, long ri, size_t k)
{
    memset(m, 0, sizeof *m);
    m->r = &a->job->ranks[ri];
    if (m->r->remote) {
        if (!(m->held = a->runner->hold(a->runner->ctx, a, (size_t)ri)))
            return -1;
        m->r = m->held;
    }
    m->step = tsa_html_analysed_step(m->r, k);
    if (m->step < 0)
        return -1;
    m->t0 = m->r->steps[m->step].start_ns;
    m->t1 = m->r->steps[m->step].end_ns;
    return measure(m);
}

static void none(FILE *out, const char *reading)
{
    tsa_svg s;
    tsa_svg_begin(&s, out, "rank-timeline", "Rank timeline of one step", reading, 760, 60, 150,
                  20, 20, 20);
    fprintf(out, "<text class=\"nm\" x=\"%d\" y=\"%d\">no timeline to draw</text>\n", s.left,
            s.top + 15);
    tsa_svg_end(&s);
}

void tsa_html_timeline(FILE *out, const tsa_analysis *a)
{
    const tsa_job *job = a->job;
    long bi = tsa_html_blamed_index(a), mi = median_rank(job, bi, a->steps);
    long show[2] = {bi, mi};
    size_t nshow = 0;
    for (int i = 0; i < 2; i++)
        if (show[i] >= 0)
            show[nshow++] = show[i];
    if (!nshow) {
        none(out, "No rank has an analysed step.");
        return;
    }
    for (size_t i = 0; i < nshow; i++)
        if (job->ranks[show[i]].remote && !(a->runner && a->runner->hold)) {
            none(out, "The ranks' records stayed on the processes that loaded them "
                      "(tscope-report-mpi); the single-process report draws this chart.");
            return;
        }
    long k = median_step_k(job, show[0], a->steps);
    rank_step m[2];
    size_t nm = 0;
    int failed = k < 0;
    for (size_t i = 0; i < nshow && !failed; i++, nm++)
        failed = setup(&m[i], a, show[i], (size_t)k) != 0;
    if (failed) {
        for (size_t i = 0; i < nm; i++)
            release(a, &m[i]);
        none(out, "The ranks shown have no common analysed step.");
        return;
    }
    int gpu = 0;
    int64_t longest = 0;
    for (size_t i = 0; i < nm; i++) {
        gpu |= m[i].r->n_kernels > 0;
        if (m[i].t1 - m[i].t0 > longest)
            longest = m[i].t1 - m[i].t0;
    }
    double axis_ms = tsa_svg_nice_max_fine((double)longest / 1e6);
    int64_t axis_ns = (int64_t)(axis_ms * 1e6 + 0.5);
    /* Merge what is less than half a pixel apart: a lane stays a few
     * hundred rects whatever the step holds. */
    int64_t join = axis_ns / (2 * (760 - 150 - 20));
    for (size_t i = 0; i < nm; i++) {
        merge(&m[i].comm, join);
        merge(&m[i].idle, join);
    }

    int step_no = (int)m[0].step;
    char title[160], reading[512], one[192], two[192];
    summary(one, sizeof one, &m[0], gpu);
    if (nm == 2) {
        summary(two, sizeof two, &m[1], gpu);
        snprintf(title, sizeof title, "Rank %d against the median rank %d: one step's timeline "
                 "(ms since the step began)", m[0].r->rank, m[1].r->rank);
        snprintf(reading, sizeof reading, "Step %d, rank %d's median step: %s; the median %s.",
                 step_no, m[0].r->rank, one, two);
    } else {
        snprintf(title, sizeof title, "Rank %d: one step's timeline (ms since the step began)",
                 m[0].r->rank);
        snprintf(reading, sizeof reading, "Step %d, rank %d's median step: %s.", step_no,
                 m[0].r->rank, one);
    }
    int lanes = gpu ? 3 : 1;
    int height = 20 + (int)nm * lanes * (LANE_H + LANE_GAP) + (int)(nm - 1) * GROUP_GAP + 70;
    tsa_svg s;
    tsa_svg_begin(&s, out, "rank-timeline", title, reading, 760, height, 150, 20, 20, 70);
    int seen[TSA_KCAT_COUNT] = {0};
    int y = s.top;
    for (size_t i = 0; i < nm; i++)
        y = rank_lanes(&s, &m[i], y, axis_ns, gpu, seen) + GROUP_GAP;
    tsa_svg_x_axis(&s, axis_ms, 1, "ms since the step began");
    legend(&s, seen, gpu);
    tsa_svg_end(&s);
    for (size_t i = 0; i < nm; i++)
        release(a, &m[i]);
}
