/* Device memory over time (html_charts.h): the reserved bytes of the rank
 * with the highest peak and of the one with the lowest, on the common
 * clock, next to the device capacity when known.  A leak is a staircase
 * that never comes down; churn a saw-tooth. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "html_charts.h"
#include "html_escape.h"
#include "load/memory_timeline.h"
#include "svg_chart.h"

#define MEM_BINS 300

typedef struct mem_line {
    const tsa_rank *r;
    const tsa_mem_rank *m;
    double gib[MEM_BINS];       /* highest reserved in each time bin, -1 no data */
} mem_line;

static const tsa_rank *rank_of(const tsa_job *job, int32_t rank)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].rank == rank)
            return &job->ranks[i];
    return NULL;
}

/* Reserved memory of one rank binned over [t0, t0 + span) (common clock).
 * Between events the level holds, so a bin with no event takes the last
 * level. */
static void bin_rank(mem_line *l, int64_t t0, int64_t span)
{
    const tsa_rank *r = l->r;
    tsa_mem_walk w;
    tsa_mem_walk_init(&w, tsa_mem_has_pools(r->mem, r->n_mem));
    double level = -1;
    size_t i = 0;
    for (int b = 0; b < MEM_BINS; b++) {
        int64_t end = t0 + (int64_t)((double)span * (b + 1) / MEM_BINS);
        double hi = level;
        while (i < r->n_mem && r->mem[i].t_ns + r->clock_offset_ns < end) {
            tsa_mem_walk_apply(&w, &r->mem[i++]);
            level = (double)tsa_mem_walk_reserved(&w) / (1024.0 * 1024 * 1024);
            if (level > hi)
                hi = level;
        }
        l->gib[b] = hi;
    }
}

void tsa_html_memory(FILE *out, const tsa_analysis *a)
{
    const tsa_memory *mem = &a->memory;
    mem_line *lines = calloc(2, sizeof *lines);
    if (!lines)
        return;
    size_t n = 0;
    const tsa_mem_rank *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < mem->n_ranks; i++) {
        const tsa_mem_rank *m = &mem->ranks[i];
        if (!hi || m->peak_bytes > hi->peak_bytes)
            hi = m;
        if (!lo || m->peak_bytes < lo->peak_bytes)
            lo = m;
    }
    const tsa_mem_rank *pick[2] = {hi, lo != hi ? lo : NULL};
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (int k = 0; k < 2; k++) {
        const tsa_rank *r = pick[k] ? rank_of(a->job, pick[k]->rank) : NULL;
        if (!r || !r->n_mem)
            continue;
        lines[n].r = r;
        lines[n].m = pick[k];
        n++;
        if (r->mem[0].t_ns + r->clock_offset_ns < t0)
            t0 = r->mem[0].t_ns + r->clock_offset_ns;
        if (r->mem[r->n_mem - 1].t_ns + r->clock_offset_ns > t1)
            t1 = r->mem[r->n_mem - 1].t_ns + r->clock_offset_ns;
    }
    int64_t span = n && t1 > t0 ? t1 - t0 + 1 : 1;
    double ymax = 0, cap = 0;
    for (size_t k = 0; k < n; k++) {
        bin_rank(&lines[k], t0, span);
        for (int b = 0; b < MEM_BINS; b++)
            if (lines[k].gib[b] > ymax)
                ymax = lines[k].gib[b];
    }
    if (n && hi->capacity_bytes)
        cap = (double)hi->capacity_bytes / (1024.0 * 1024 * 1024);
    char reading[256];
    if (!n)
        snprintf(reading, sizeof reading, "No device memory records in this input.");
    else if (cap > 0)
        snprintf(reading, sizeof reading, "Rank %d peaks at %.2f GiB of %.2f GiB it could hold "
                 "(%.1f%%); it grows %.1f MiB per step.", hi->rank,
                 (double)hi->peak_bytes / (1024.0 * 1024 * 1024), cap,
                 100.0 * (double)hi->peak_bytes / (1024.0 * 1024 * 1024) / cap,
                 (double)hi->growth_per_step / (1024.0 * 1024));
    else
        snprintf(reading, sizeof reading, "Rank %d peaks at %.2f GiB (capacity unknown); it grows "
                 "%.1f MiB per step.", hi->rank, (double)hi->peak_bytes / (1024.0 * 1024 * 1024),
                 (double)hi->growth_per_step / (1024.0 * 1024));
    tsa_svg s;
    tsa_svg_begin(&s, out, "memory-over-time", "Device memory reserved over time (GiB)", reading,
                  760, 300, 80, 20, 130, 50);
    /* The capacity line only where it is near: far above, it would flatten
     * the lines to the floor (the reading gives it). */
    int draw_cap = cap > 0 && cap <= 1.5 * ymax;
    double top = tsa_svg_nice_max(draw_cap ? cap : ymax);
    tsa_svg_y_axis(&s, top, 1, "GiB reserved");
    if (draw_cap)
        fprintf(out, "<line class=\"cap\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                     "<text class=\"key\" x=\"%d\" y=\"%.1f\">capacity</text>\n",
                s.left, tsa_svg_y(&s, cap, top), s.right, tsa_svg_y(&s, cap, top), s.right + 8,
                tsa_svg_y(&s, cap, top) + 4);
    static const char *cls[2] = {"blamed", "median"};
    for (size_t k = 0; k < n; k++) {
        fprintf(out, "<polyline class=\"%s\" fill=\"none\" points=\"", cls[k]);
        for (int b = 0; b < MEM_BINS; b++)
            if (lines[k].gib[b] >= 0)
                fprintf(out, "%.1f,%.1f ",
                        s.left + (s.right - s.left) * (b + 0.5) / MEM_BINS,
                        tsa_svg_y(&s, lines[k].gib[b], top));
        fprintf(out, "\"/><text class=\"key %s\" x=\"%d\" y=\"%d\">rank %d (%s peak)</text>\n",
                cls[k], s.right + 8, s.top + 12 + 16 * (int)k, lines[k].m->rank,
                k == 0 ? "highest" : "lowest");
    }
    tsa_svg_x_axis(&s, (double)span / 1e9, 1, "seconds since the first memory record");
    tsa_svg_end(&s);
    free(lines);
}
