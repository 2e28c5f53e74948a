/* The budget's levels (docs/self-cost.md): the order in which the preload
 * records less, which part's cost each level cuts, and which one to take
 * next.  Pure (no clocks, no state of its own): self_cost.c measures and
 * keeps the levels taken; the parts ask it through tsc_cost_cut(). */
#ifndef TSC_COST_LEVELS_H
#define TSC_COST_LEVELS_H

#include <stddef.h>
#include <stdint.h>

/* The parts whose own cost a level cuts, each measured apart. */
enum tsc_cost_part {
    TSC_COST_PART_TELEMETRY = 0,   /* the telemetry thread (its CPU clock) */
    TSC_COST_PART_GPU = 1,         /* per-kernel records: translating them on the writer */
    TSC_COST_PART_NCCL_DETAIL = 2, /* the NCCL plugin's proxy and channel events */
    TSC_COST_PARTS
};

typedef struct tsc_cost_level_def {
    enum tsc_cost_part part; /* whose cost it cuts */
    const char *what;        /* what is recorded less from then on (under 40 characters) */
} tsc_cost_level_def;

/* The table, in the order the levels are taken. */
const tsc_cost_level_def *tsc_cost_level_table(size_t *n);

/* The levels taken, in the order taken: a step up undoes the last one. */
#define TSC_COST_MAX_LEVELS 8
typedef struct tsc_cost_ladder {
    uint8_t taken[TSC_COST_MAX_LEVELS];
    uint32_t depth; /* how many are taken: the level the dump names */
} tsc_cost_ladder;

/* The next level worth taking: the first in the table not yet taken
 * whose part cost a quarter or more of the period's cost (part_ns, each
 * part's cost in the period; total_ns, the whole figure's).  A level
 * that cuts nothing would lose records for no gain.  -1: none. */
int tsc_cost_next_level(const tsc_cost_ladder *l, const uint64_t part_ns[TSC_COST_PARTS],
                        uint64_t total_ns);

/* Take level i (from tsc_cost_next_level); undo the last one taken. */
void tsc_cost_ladder_take(tsc_cost_ladder *l, int i);
void tsc_cost_ladder_undo(tsc_cost_ladder *l);

/* How many of a part's levels are taken (0: its full detail). */
uint32_t tsc_cost_ladder_cut(const tsc_cost_ladder *l, enum tsc_cost_part p);

/* What the ladder records less of now: "full detail", or the last level
 * taken. */
const char *tsc_cost_ladder_what(const tsc_cost_ladder *l);

#endif
