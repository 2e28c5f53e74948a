/* The text report's memory table; columns defined in docs/report.md. */
#include <math.h>
#include <stdio.h>

#include "memory_view.h"

#define TSA_MEM_TEXT_ROWS 16

static double gib(double b)
{
    return b / (double)(1ull << 30);
}

void tsa_memory_print(FILE *out, const tsa_memory *m)
{
    int any_totals = 0;
    uint64_t nccl = 0;
    int32_t nccl_rank = -1;
    fprintf(out, "   rank   peak GiB  at step  usable GiB  headroom GiB  growth MiB/step"
                 "  churn MiB/step  allocs/step\n");
    for (size_t i = 0; i < m->n_ranks && i < TSA_MEM_TEXT_ROWS; i++) {
        const tsa_mem_rank *r = &m->ranks[i];
        char step[16] = "-", cap[16] = "?", head[16] = "?";
        if (r->peak_step >= 0)
            snprintf(step, sizeof step, "%d", r->peak_step);
        if (r->capacity_bytes > 0) {
            snprintf(cap, sizeof cap, "%.2f", gib((double)r->capacity_bytes));
            snprintf(head, sizeof head, "%.2f", gib((double)r->headroom_bytes));
        }
        char churn[24] = "-", allocs[24] = "-";
        if (r->allocs_seen) {
            snprintf(churn, sizeof churn, "%.1f", (double)r->churn_bytes_per_step / 1048576.0);
            snprintf(allocs, sizeof allocs, "%.1f", r->allocs_per_step);
        }
        any_totals |= !r->allocs_seen;
        if (r->nccl_peak_bytes > nccl) {
            nccl = r->nccl_peak_bytes;
            nccl_rank = r->rank;
        }
        fprintf(out, "  %5d  %9.2f  %7s  %10s  %12s  %15.1f  %14s  %11s\n", (int)r->rank,
                gib((double)r->peak_bytes), step, cap, head,
                (double)r->growth_per_step / 1048576.0, churn, allocs);
    }
    if (m->n_ranks > TSA_MEM_TEXT_ROWS)
        fprintf(out, "  ... %zu more ranks (--json has them all)\n",
                m->n_ranks - TSA_MEM_TEXT_ROWS);
    fprintf(out, "  peak: highest reserved (cudaMalloc/cuMemCreate live + pool sizes); growth:"
                 " per analysed step,\n  from step-end values; churn: bytes both allocated and"
                 " freed within a step\n");
    if (nccl)
        fprintf(out, "  NCCL's own buffers (cuMemCreate inside NCCL calls): up to %.2f GiB (rank"
                     " %d),\n  not in peak, taken from the headroom\n",
                gib((double)nccl), (int)nccl_rank);
    if (any_totals)
        fprintf(out, "  torch.profiler traces give the caching allocator's reserved total, not"
                     " its device\n  allocations: churn and allocs/step are unknown (-)\n");
}
