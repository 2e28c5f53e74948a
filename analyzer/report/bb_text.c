/* Text view of a black-box folder: see bb_text.h.  A job step's time is
 * the slowest rank's: in a synchronous job they differ only by jitter. */
#include "bb_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct job_step {
    uint64_t ns;          /* slowest rank's step time, 0 = no rank has it */
    uint64_t nccl_ns;     /* summed over ranks */
    uint32_t ranks, anomalous;
    int seq_mismatch;     /* ranks disagree on the opener's sequence number */
    uint64_t seq;
} job_step;

static uint64_t dur(const tsc_step_summary *s)
{
    return s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
}

/* Steps 0..*n-1 of the job, merged over ranks by step number. */
static job_step *merge(const tsa_bb_folder *f, size_t *n)
{
    size_t most = 0;
    for (size_t r = 0; r < f->n_ranks; r++)
        most = f->ranks[r].n_steps > most ? f->ranks[r].n_steps : most;
    size_t cap = most * 2 + 16; /* step numbers beyond it are corrupt */
    job_step *js = calloc(cap, sizeof *js);
    if (!js)
        return NULL;
    *n = 0;
    for (size_t r = 0; r < f->n_ranks; r++) {
        for (size_t i = 0; i < f->ranks[r].n_steps; i++) {
            const tsc_step_summary *s = &f->ranks[r].steps[i];
            if (s->step >= cap)
                continue;
            job_step *j = &js[s->step];
            if (j->ranks && j->seq != s->opener_seq)
                j->seq_mismatch = 1;
            j->seq = s->opener_seq;
            j->ranks++;
            j->ns = dur(s) > j->ns ? dur(s) : j->ns;
            j->nccl_ns += s->nccl_ns;
            j->anomalous += (s->flags & TSC_STEP_F_ANOMALY) != 0;
            if (s->step + 1 > *n)
                *n = (size_t)s->step + 1;
        }
    }
    return js;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Windows whose steps A-B overlap [lo, hi], as "id id ..." into buf. */
static void windows_in(const tsa_bb_folder *f, size_t lo, size_t hi, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < f->n_windows; i++) {
        unsigned long long a, b;
        if (sscanf(f->windows[i].steps, "%llu-%llu", &a, &b) != 2 || b < lo || a > hi)
            continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? " " : "", f->windows[i].id);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
}

static void print_rows(FILE *out, const tsa_bb_folder *f, const job_step *js, size_t n,
                       size_t per_row)
{
    uint64_t *tmp = malloc(per_row * sizeof *tmp);
    if (!tmp)
        return;
    fprintf(out, "  %-15s %10s %10s %12s %9s  %s\n", "steps", "median", "max", "nccl/rank",
            "slow", "windows");
    for (size_t lo = 0; lo < n; lo += per_row) {
        size_t hi = lo + per_row < n ? lo + per_row : n, k = 0, ranks = 0;
        uint64_t mx = 0, nccl = 0;
        uint32_t slow = 0;
        for (size_t s = lo; s < hi; s++) {
            if (!js[s].ranks)
                continue;
            tmp[k++] = js[s].ns;
            mx = js[s].ns > mx ? js[s].ns : mx;
            nccl += js[s].nccl_ns;
            ranks += js[s].ranks;
            slow += js[s].anomalous > 0;
        }
        char range[40], win[256];
        snprintf(range, sizeof range, hi - lo > 1 ? "%zu-%zu" : "%zu", lo, hi - 1);
        windows_in(f, lo, hi - 1, win, sizeof win);
        if (!k) {
            fprintf(out, "  %-15s %10s\n", range, "(no summary)");
            continue;
        }
        qsort(tmp, k, sizeof *tmp, cmp_u64);
        fprintf(out, "  %-15s %7.3f ms %7.3f ms %9.3f ms %9u  %s\n", range, tmp[k / 2] / 1e6,
                mx / 1e6, ranks ? nccl / 1e6 / (double)ranks : 0.0, slow, win);
    }
    free(tmp);
}

void tsa_bb_print(FILE *out, const char *dir, const tsa_bb_folder *f, int every)
{
    size_t n = 0;
    job_step *js = merge(f, &n);
    if (!js) {
        fprintf(out, "tscope-report: out of memory\n");
        return;
    }
    size_t mismatched = 0, slow = 0;
    for (size_t s = 0; s < n; s++) {
        mismatched += js[s].seq_mismatch;
        slow += js[s].anomalous > 0;
    }
    fprintf(out, "tscope black box  %s\n", dir);
    fprintf(out, "  %zu ranks, steps 0-%zu summarized, %zu flagged slow (over TSCOPE_BB_K x the "
                 "rolling median), %zu capture windows\n",
            f->n_ranks, n ? n - 1 : 0, slow, f->n_windows);
    if (mismatched)
        fprintf(out, "  warning: %zu steps end with NCCL calls of different sequence numbers on "
                     "different ranks: the ranks do not agree on the step boundaries\n",
                mismatched);
    fprintf(out, "\nRANKS\n  %6s %8s %14s  %s\n", "rank", "steps", "bytes/step", "summary file");
    for (size_t r = 0; r < f->n_ranks; r++) {
        const tsa_bb_rank *k = &f->ranks[r];
        fprintf(out, "  %6d %8zu %14.1f  %s\n", k->rank, k->n_steps,
                k->n_steps ? (double)k->file_bytes / (double)k->n_steps : 0.0, k->path);
    }
    fprintf(out, "\nTIMELINE (step time: the slowest rank's; nccl/rank: host time in NCCL "
                 "calls per step; slow: steps flagged)\n");
    size_t per_row = every || n <= 40 ? 1 : (n + 39) / 40;
    print_rows(out, f, js, n, per_row);
    fprintf(out, "\nWINDOWS (tscope-report blackbox %s --capture ID: the full report of one)\n",
            dir);
    if (!f->n_windows)
        fprintf(out, "  none: summaries only\n");
    for (size_t i = 0; i < f->n_windows; i++) {
        const tsa_bb_window *w = &f->windows[i];
        fprintf(out, "  %-28s %-8s steps %-13s %3zu ranks %9.1f KiB  %s\n", w->id, w->reason,
                w->steps, w->n_dumps, w->bytes / 1024.0, w->note);
    }
    free(js);
}
