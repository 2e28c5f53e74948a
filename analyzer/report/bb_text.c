/* Text view of a black-box folder: see bb_text.h. */
#include "bb_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int tsa_bb_window_overlaps(const tsa_bb_window *w, uint64_t lo, uint64_t hi)
{
    return w->has_range && w->last >= lo && w->first <= hi;
}

/* Windows whose steps overlap [lo, hi], as "id id ..." into buf. */
static void windows_in(const tsa_bb_folder *f, uint64_t lo, uint64_t hi, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < f->n_windows; i++) {
        if (!tsa_bb_window_overlaps(&f->windows[i], lo, hi))
            continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? " " : "", f->windows[i].id);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
}

/* Which optional columns the timeline has: a figure no row has is said
 * once as "not recorded", not printed as a column of zeros. */
typedef struct columns {
    int stall, mfu;
} columns;

static columns columns_of(const tsa_bb_timeline *t)
{
    columns c = {0, 0};
    for (size_t i = 0; i < t->n_rows; i++) {
        c.stall |= t->rows[i].stall_rank_steps > 0;
        c.mfu |= t->rows[i].mfu_rank_steps > 0;
    }
    return c;
}

/* The data stall and MFU cells of a row ("-": not recorded in it). */
static void extra_cells(FILE *out, const tsa_bb_row *row, columns c)
{
    if (c.stall && row->stall_rank_steps) {
        char who[24];
        snprintf(who, sizeof who, "r%d", row->max_stall_rank);
        fprintf(out, " %9.3f ms %7.3f ms %-6s", row->stall_ns / 1e6 / (double)row->stall_rank_steps,
                row->max_stall_ns / 1e6, who);
    } else if (c.stall) {
        fprintf(out, " %12s %10s %-6s", "-", "-", "");
    }
    if (c.mfu && row->mfu_rank_steps && row->mfu_step_ns)
        fprintf(out, " %8.3g%%", 100.0 * (double)row->gemm_peak_ns / (double)row->mfu_step_ns);
    else if (c.mfu)
        fprintf(out, " %9s", "-");
}

static void print_rows(FILE *out, const tsa_bb_folder *f, const tsa_bb_timeline *t)
{
    columns c = columns_of(t);
    fprintf(out, "  %-15s %10s %10s %12s", "steps", "median", "max", "nccl/rank");
    if (c.stall)
        fprintf(out, " %12s %17s", "stall/rank", "max stall      ");
    if (c.mfu)
        fprintf(out, " %9s", "MFU");
    fprintf(out, " %9s  %s\n", "slow", "windows");
    for (size_t i = 0; i < t->n_rows; i++) {
        const tsa_bb_row *row = &t->rows[i];
        char range[48], win[256];
        if (row->last > row->first)
            snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)row->first,
                     (unsigned long long)row->last);
        else
            snprintf(range, sizeof range, "%llu", (unsigned long long)row->first);
        windows_in(f, row->first, row->last, win, sizeof win);
        if (!row->steps) {
            fprintf(out, "  %-15s %10s\n", range, "(no summary)");
            continue;
        }
        fprintf(out, "  %-15s %7.3f ms %7.3f ms %9.3f ms", range, row->median_ns / 1e6,
                row->max_ns / 1e6, row->nccl_ns / 1e6 / (double)row->rank_steps);
        extra_cells(out, row, c);
        fprintf(out, " %9u  %s\n", row->slow, win);
    }
    if (!c.stall)
        fprintf(out, "  data stall: not recorded (no CUPTI copy records in the summaries)\n");
    if (!c.mfu)
        fprintf(out, "  MFU estimate: not recorded (no cuBLAS GEMM records, or no known peak "
                     "FLOP/s for the device)\n");
}

void tsa_bb_print(FILE *out, const char *dir, const tsa_bb_folder *f, const tsa_bb_timeline *t)
{
    size_t n = t->n_steps;
    fprintf(out, "tscope black box  %s\n", dir);
    fprintf(out, "  %zu ranks, steps 0-%zu summarized, %zu flagged slow (over TSCOPE_BB_K x the "
                 "rolling median), %zu capture windows\n",
            f->n_ranks, n ? n - 1 : 0, t->slow, f->n_windows);
    if (f->orphan_extras)
        fprintf(out, "  warning: %llu step extra records have no step summary (its chunk was "
                     "lost); ignored\n", (unsigned long long)f->orphan_extras);
    if (t->mismatched)
        fprintf(out, "  warning: %zu steps end with NCCL calls of different sequence numbers on "
                     "different ranks: the ranks do not agree on the step boundaries\n",
                t->mismatched);
    fprintf(out, "\nRANKS\n  %6s %8s %14s  %s\n", "rank", "steps", "bytes/step", "summary file");
    for (size_t r = 0; r < f->n_ranks; r++) {
        const tsa_bb_rank *k = &f->ranks[r];
        fprintf(out, "  %6d %8zu %14.1f  %s\n", k->rank, k->n_steps,
                k->n_steps ? (double)k->file_bytes / (double)k->n_steps : 0.0, k->path);
    }
    fprintf(out, "\nTIMELINE (step time: the slowest rank's; nccl/rank: host time in NCCL "
                 "calls per step; stall/rank: data stall per rank and step, max stall: the "
                 "largest and its rank; MFU: GEMM time at peak over step time; slow: steps "
                 "flagged; -: not recorded)\n");
    print_rows(out, f, t);
    fprintf(out, "\nWINDOWS (tscope-report blackbox %s --capture ID: the full report of one)\n",
            dir);
    if (!f->n_windows)
        fprintf(out, "  none: summaries only\n");
    for (size_t i = 0; i < f->n_windows; i++) {
        const tsa_bb_window *w = &f->windows[i];
        fprintf(out, "  %-28s %-8s steps %-13s %3zu ranks %9.1f KiB  %s\n", w->id, w->reason,
                w->steps, w->n_dumps, w->bytes / 1024.0, w->note);
    }
}
