/* The terminal section ("compute" is the work outside collectives, see
 * docs/findings.md): one row per rank (all of them up to 64 ranks,
 * else the 16 that caused the most waiting plus every flagged one), then a
 * verdict line.  Color only when asked: reports are often piped. */
#include <stdlib.h>
#include <string.h>

#include "xrank_render.h"
#include "reader/text_visible.h"

#define ALL_ROWS_MAX 64
#define TOP_ROWS 16

static const char *source_name(tsa_xrank_step_source s)
{
    switch (s) {
    case TSA_XSTEPS_MODEL: return "from the step pass";
    case TSA_XSTEPS_DERIVED: return "from the repeating collective sequence";
    case TSA_XSTEPS_PER_COLLECTIVE: return "one per collective";
    default: return "none";
    }
}

static int flagged(const tsa_xrank_result *r, const tsa_rank_blame *b)
{
    return b->slow || (r->straggler && r->straggler->rank == b->rank);
}

static int by_blame(const void *pa, const void *pb, void *arg)
{
    const tsa_rank_blame *rk = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (rk[a].blame_ns != rk[b].blame_ns)
        return rk[a].blame_ns < rk[b].blame_ns ? 1 : -1;
    return (a > b) - (a < b);
}

static void row(FILE *out, const tsa_xrank_result *r, const tsa_rank_blame *b, int color)
{
    int is_st = r->straggler && r->straggler->rank == b->rank;
    const char *on = "", *off = "";
    if (color && is_st) {
        on = "\033[1;31m";
        off = "\033[0m";
    } else if (color && b->slow) {
        on = "\033[33m";
        off = "\033[0m";
    }
    char work[32], rel[16];
    if (b->steps) {
        /* The same figure as the straggler line: median over steps of the
         * per-step slowdown against that step's median rank. */
        snprintf(work, sizeof work, "%.3f ms", (double)b->compute_median_ns / 1e6);
        snprintf(rel, sizeof rel, "%+.1f%%", 100.0 * b->slowdown);
    } else {
        snprintf(work, sizeof work, "-");
        snprintf(rel, sizeof rel, "-");
    }
    fprintf(out, "%s%c %5d  %-16s %12s %8s %10.3f %10.3f %9.1f%% %+17.6f%s%s%s\n", on,
            is_st ? '>' : (b->slow ? '*' : ' '), b->rank, b->host ? tsr_fit(b->host, 16) : "?",
            work, rel,
            (double)b->wait_ns / 1e9, (double)b->blame_ns / 1e9, 100.0 * b->arrived_last_share,
            (double)b->clock_offset_ns / 1e9, b->clock_aligned ? "" : " (unaligned)",
            is_st ? (r->straggler->intermittent ? "  intermittent straggler" : "  straggler") : "",
            off);
}

static void verdict(FILE *out, const tsa_xrank_result *r)
{
    const tsa_straggler *st = r->straggler;
    if (st && !st->intermittent)
        fprintf(out, "straggler: rank %d%s%s%s, %.1f%% slower than the median rank (z=%.1f); "
                "at the median speed it would save %.3f s (%.3f ms per step)\n",
                st->rank, st->host ? " (" : "", st->host ? st->host : "", st->host ? ")" : "",
                100.0 * st->slowdown, st->z, (double)st->whatif_saved_ns / 1e9,
                (double)st->whatif_step_saved_ns / 1e6);
    if (r->slow_host)
        fprintf(out, "slow host: %s, its %zu ranks %.1f%% slower; what-if saves %.3f s\n",
                r->slow_host, r->n_slow_host_ranks, 100.0 * r->slow_host_slowdown,
                (double)r->slow_host_saved_ns / 1e9);
    if (r->imbalance)
        fprintf(out, "load imbalance: %zu slow ranks, %.1f%% slower (median); what-if saves %.3f s\n",
                r->n_imbalanced, 100.0 * r->imbalance_slowdown,
                (double)r->imbalance_saved_ns / 1e9);
    for (size_t i = 0; i < r->n_bursts; i++)
        fprintf(out, "intermittent: rank %d slow in %zu steps (first %u); they cost %.3f s\n",
                r->bursts[i].rank, r->bursts[i].n_slow_steps,
                r->bursts[i].n_slow_steps ? r->bursts[i].slow_steps[0] : 0,
                (double)r->bursts[i].whatif_saved_ns / 1e9);
    if (!st && !r->slow_host && !r->imbalance && !r->n_bursts)
        fprintf(out, "no straggler, imbalance or slow host beyond the noise (%.2f%% per step)\n",
                100.0 * r->noise);
}

void tsa_xrank_print(FILE *out, const tsa_xrank_result *r, int color)
{
    if (!out || !r)
        return;
    fprintf(out, "Across ranks\n");
    if (!r->instances) {
        fprintf(out, "  no collective matched across ranks: nothing to compare\n\n");
        return;
    }
    fprintf(out, "  %zu ranks, %llu collectives matched, %llu steps (%s)\n", r->n_ranks,
            (unsigned long long)r->instances, (unsigned long long)r->steps,
            source_name(r->step_source));
    fprintf(out, "  clock: reference rank %d, residual skew %.1f us, %zu ranks unaligned\n",
            r->clock_reference_rank, (double)r->clock_residual_ns / 1e3, r->n_unaligned);
    fprintf(out, "  %5s  %-16s %12s %8s %10s %10s %10s %17s\n", "rank", "host", "compute/step",
            "slower", "wait s", "blame s", "last-coll", "clock offset s");
    if (r->n_ranks <= ALL_ROWS_MAX) {
        for (size_t i = 0; i < r->n_ranks; i++)
            row(out, r, &r->ranks[i], color);
    } else {
        size_t *idx = malloc(r->n_ranks * sizeof *idx);
        if (idx) {
            for (size_t i = 0; i < r->n_ranks; i++)
                idx[i] = i;
            qsort_r(idx, r->n_ranks, sizeof *idx, by_blame, r->ranks);
            size_t shown = 0;
            for (size_t i = 0; i < r->n_ranks; i++) {
                if (i < TOP_ROWS || flagged(r, &r->ranks[idx[i]])) {
                    row(out, r, &r->ranks[idx[i]], color);
                    shown++;
                }
            }
            fprintf(out, "  ... %zu more ranks (most blame first; --json has all)\n",
                    r->n_ranks - shown);
            free(idx);
        }
    }
    fprintf(out, "  compute/step: median work per step outside collectives; slower: median over\n"
                 "  steps of its work / that step's median rank - 1; wait s: its own waiting;\n"
                 "  blame s: the waiting it caused others; last-coll: share of collectives it\n"
                 "  arrived at last (the findings count steps instead)\n");
    verdict(out, r);
    fputc('\n', out);
}
