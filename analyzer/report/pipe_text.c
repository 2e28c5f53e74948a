/* The PIPELINE WHAT-IF section of the terminal report. */
#include <stdio.h>
#include <stdlib.h>

#include "pipe_render.h"

#define TOP 5

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void row(FILE *out, const char *what, int64_t saved, const tsa_pipe_result *r)
{
    int64_t R = r->actual_ns - r->ideal_ns;
    fprintf(out, "    %-34s %12.3f ms %6.1f%%\n", what, ms(saved) / (double)r->steps,
            R > 0 ? 100.0 * (double)saved / (double)R : 0.0);
}

/* Indices of the TOP largest of v[0..n) with a saving, largest first. */
static size_t top(const int64_t *v, size_t n, size_t *idx)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] <= 0)
            continue;
        size_t j = k < TOP ? k++ : TOP;
        if (j == TOP && v[i] <= v[idx[TOP - 1]])
            continue;
        if (j == TOP)
            j = TOP - 1;
        while (j > 0 && v[idx[j - 1]] < v[i]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    return k;
}

static void critical_path(FILE *out, const tsa_pipe_result *r)
{
    size_t s = r->slowest_step;
    size_t a = r->hop_first[s], b = r->hop_first[s + 1];
    fprintf(out, "  critical path of step %u (the slowest, %.3f ms): %zu operations\n",
            r->step_number[s], ms(r->step_actual_ns[s]), b - a);
    /* one line per run of hops on one rank */
    size_t lines = 0;
    for (size_t i = a; i < b && lines < 24;) {
        size_t j = i;
        int64_t comp = 0, comm = 0;
        while (j < b && r->hops[j].rank == r->hops[i].rank) {
            int64_t d = r->hops[j].end_ns - r->hops[j].start_ns;
            if (r->hops[j].kind)
                comm += d;
            else
                comp += d;
            j++;
        }
        size_t ri = 0;
        for (size_t q = 0; q < r->n_ranks; q++)
            if (r->global_rank[q] == r->hops[i].rank)
                ri = q;
        const tsa_pipe_hop *last = &r->hops[j - 1];
        fprintf(out, "    rank %d (stage %d, DP %d): %zu ops, compute %.3f ms, comm %.3f ms%s\n",
                r->hops[i].rank, r->stage_of[ri], r->dp_of[ri], j - i, ms(comp), ms(comm),
                j < b ? (last->via_start ? "  -> waited for the start of" : "  -> then") : "");
        lines++;
        i = j;
    }
    if (lines == 24)
        fprintf(out, "    ...\n");
}

/* percent of the recorded step time: the report's wall */
static double share(int64_t ns, const tsa_pipe_result *r)
{
    return r->recorded_ns > 0 ? 100.0 * (double)ns / (double)r->recorded_ns : 0.0;
}

void tsa_pipe_print(FILE *out, const tsa_pipe_result *r)
{
    if (!r || !r->pipeline || !r->steps)
        return;
    int64_t R = r->actual_ns - r->ideal_ns;
    fprintf(out, "  %zu stages x %zu DP ranks, %zu workers; %zu steps; %zu operations, "
                 "%zu matched collectives and send/recv pairs\n",
            r->n_stages, r->n_dp, r->n_ranks, r->steps, r->nodes, r->hubs);
    fprintf(out, "  replaying the record gives it back within %.3f ms per step; recorded %.3f "
                 "ms/step, %.3f ms/step with launch gaps at their peers' (the baseline)\n",
            ms(r->replay_error_ns), ms(r->recorded_ns) / (double)r->steps,
            ms(r->actual_ns) / (double)r->steps);
    fprintf(out, "  slowdown S = actual / typical = %.3f   actual %.3f ms/step, typical (compute "
                 "at its peers' mean, communication at their median) %.3f ms/step\n",
            r->slowdown, ms(r->actual_ns) / (double)r->steps,
            ms(r->typical_ns) / (double)r->steps);
    fprintf(out, "  every slow operation fixed (none longer than its peers'): %.3f ms/step, "
                 "%.1f%% of the recorded step time recoverable\n",
            ms(r->ideal_ns) / (double)r->steps, share(R, r));
    char who[320] = "nothing (a culprit needs 5% of step time, a spread 10%)";
    if (tsa_pipe_class_id(r->cls))
        tsa_pipe_culprit_text(r, tsa_pipe_class_id(r->cls), who, sizeof who);
    fprintf(out, "  blame: %s%s%s (the best single fix explains %.0f%% of the slowdown)\n",
            tsa_pipe_class_id(r->cls) ? tsa_pipe_class_id(r->cls) : "",
            tsa_pipe_class_id(r->cls) ? ": " : "", who, 100.0 * r->explained);
    int64_t blamed = tsa_pipe_blamed_ns(r);
    if (blamed >= 0 && blamed < R)
        fprintf(out, "  the finding (and the verdict) counts what fixing that gives back, %.1f%% of "
                     "the recorded step time; the other %.1f points are other operations slower "
                     "than their peers'\n",
                share(blamed, r), share(R, r) - share(blamed, r));
    fprintf(out, "  fix just this (overlapping: never add)  saves/step  share of slowdown\n");
    size_t idx[TOP];
    char label[96];
    size_t n = top(r->saved_worker_ns, r->n_ranks, idx);
    for (size_t i = 0; i < n; i++) {
        snprintf(label, sizeof label, "rank %d (DP %d, stage %d)", r->global_rank[idx[i]],
                 r->dp_of[idx[i]], r->stage_of[idx[i]]);
        row(out, label, r->saved_worker_ns[idx[i]], r);
    }
    for (size_t s = 0; s < r->n_stages && s < 64; s++) {
        snprintf(label, sizeof label, "stage %zu", s);
        row(out, label, r->saved_stage_ns[s], r);
    }
    n = top(r->saved_dp_ns, r->n_dp, idx);
    for (size_t i = 0; i < n; i++) {
        snprintf(label, sizeof label, "DP rank %zu", idx[i]);
        row(out, label, r->saved_dp_ns[idx[i]], r);
    }
    for (int k = 0; k < TSA_OK_COUNT; k++)
        if (r->kind_seen[k])
            row(out, tsa_pipe_okind_name(k), r->saved_kind_ns[k], r);
    critical_path(out, r);
}
