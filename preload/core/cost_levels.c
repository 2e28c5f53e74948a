/* The budget's levels and the choice of the next one (cost_levels.h). */
#include "cost_levels.h"

#include "tsc_format.h"

/* From the cheapest loss to the dearest: telemetry samples first (the
 * same series, sparser), then the GPU's per-kernel records (the light
 * mode's records stay: copies, syncs, NCCL's launches), then the NCCL
 * plugin's per-channel and proxy events (the collectives stay). */
static const tsc_cost_level_def k_levels[] = {
    {TSC_COST_PART_TELEMETRY, "telemetry period x4"},
    {TSC_COST_PART_TELEMETRY, "telemetry period x16"},
    {TSC_COST_PART_GPU, TSC_COST_WHAT_LIGHT},
    {TSC_COST_PART_NCCL_DETAIL, TSC_COST_WHAT_NPROF},
};
#define N_LEVELS (sizeof k_levels / sizeof k_levels[0])
_Static_assert(N_LEVELS <= TSC_COST_MAX_LEVELS, "the ladder holds every level");

const tsc_cost_level_def *tsc_cost_level_table(size_t *n)
{
    *n = N_LEVELS;
    return k_levels;
}

static int is_taken(const tsc_cost_ladder *l, size_t i)
{
    for (uint32_t k = 0; k < l->depth; k++)
        if (l->taken[k] == i)
            return 1;
    return 0;
}

int tsc_cost_next_level(const tsc_cost_ladder *l, const uint64_t part_ns[TSC_COST_PARTS],
                        uint64_t total_ns)
{
    for (size_t i = 0; i < N_LEVELS; i++)
        if (!is_taken(l, i) && part_ns[k_levels[i].part] > 0 &&
            part_ns[k_levels[i].part] * 4 >= total_ns)
            return (int)i;
    return -1;
}

void tsc_cost_ladder_take(tsc_cost_ladder *l, int i)
{
    if (i >= 0 && (size_t)i < N_LEVELS && l->depth < TSC_COST_MAX_LEVELS && !is_taken(l, (size_t)i))
        l->taken[l->depth++] = (uint8_t)i;
}

void tsc_cost_ladder_undo(tsc_cost_ladder *l)
{
    if (l->depth)
        l->depth--;
}

uint32_t tsc_cost_ladder_cut(const tsc_cost_ladder *l, enum tsc_cost_part p)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < l->depth; k++)
        n += k_levels[l->taken[k]].part == p;
    return n;
}

const char *tsc_cost_ladder_what(const tsc_cost_ladder *l)
{
    return l->depth ? k_levels[l->taken[l->depth - 1]].what : "full detail";
}
