/* What tscope itself costs the run it records (docs/self-cost.md), and
 * the budget that keeps it in check.
 *
 * Measured, not estimated from a benchmark: the CPU time of tscope's own
 * threads from their thread CPU clocks, and the hot paths' cost on the
 * job's threads as (slots they put in their rings, a counter the ring
 * keeps anyway) x (one record's cost, measured at start-up on this
 * machine, on the writer thread).  Published as cost_* metadata keys in
 * every META chunk and the END chunk. */
#ifndef TSC_SELF_COST_H
#define TSC_SELF_COST_H

#include <stddef.h>
#include <stdint.h>

#include "cost_levels.h"

/* tscope's threads, each counted apart in the metadata. */
enum tsc_cost_thread { TSC_COST_WRITER = 0, TSC_COST_TELEMETRY = 1, TSC_COST_THREADS };

/* On a tscope thread, first thing: its CPU clock is followed from now on,
 * and the records it makes are not counted as the job's. */
void tsc_cost_thread_begin(enum tsc_cost_thread which);
/* Last thing before it returns: keeps its final CPU time. */
void tsc_cost_thread_end(enum tsc_cost_thread which);
/* 1 on a thread that called tsc_cost_thread_begin. */
int tsc_cost_own_thread(void);

/* On the writer thread at its start: one record's cost on this machine
 * (the hot path's clock reads, descriptor look-up and ring slot), in
 * picoseconds.  A few hundred microseconds, once. */
void tsc_cost_calibrate(void);

/* What the recorder counts, for a figure. */
typedef struct tsc_cost_inputs {
    uint64_t job_slots;      /* slots the job's threads put in their rings (and dropped) */
    uint64_t bytes_written;  /* dump bytes written */
    uint64_t memory_bytes;   /* memory tscope holds: rings, drain buffer, black-box store */
} tsc_cost_inputs;

/* The figure now, as the metadata has it. */
typedef struct tsc_cost_figure {
    uint64_t wall_ns;            /* since set-up */
    uint64_t thread_ns[TSC_COST_THREADS];
    uint64_t threads_ns;         /* their sum */
    uint64_t hot_ns;             /* job_slots x slot_ps */
    uint64_t slot_ps;            /* 0 before calibration */
    uint64_t process_cpu_ns;     /* the whole process, for scale */
    tsc_cost_inputs in;
} tsc_cost_figure;

/* At set-up (the clock from which wall time counts) and in a fork child. */
void tsc_cost_start(uint64_t mono_ns);
void tsc_cost_after_fork(void);

void tsc_cost_measure(const tsc_cost_inputs *in, tsc_cost_figure *out);

/* The cost_* metadata pairs of a fresh figure, for a META chunk (not from
 * a signal): computed when the chunk is written, like the event counts,
 * so they take no place in the metadata store.  Fills up to
 * TSC_COST_PAIRS keys and values (values in bufs); returns the count. */
#define TSC_COST_PAIRS 9
size_t tsc_cost_pairs(const tsc_cost_inputs *in, const char **keys, const char **vals,
                      char (*bufs)[24]);

/* ---------------------------------------------------------------- budget */

/* The budget in hundredths of a percent of the run's wall time (0: none). */
void tsc_cost_set_budget(uint32_t budget_cpct, uint32_t period_ms, int telemetry_on);

/* On the writer thread once per flush period: compares the cost of the
 * last period with the budget and steps down (or back up) one level when
 * it stayed above (or well below) it; records each step in the metadata
 * and says so once on stderr. */
void tsc_cost_govern(const tsc_cost_inputs *in);

/* The budget's level now: how many steps down are in effect (0: full
 * detail). */
uint32_t tsc_cost_level(void);

/* The one question a part asks: how many of its levels are in effect now
 * (0: its full detail; cost_levels.c says what each one cuts).  Any
 * thread, one relaxed load. */
uint32_t tsc_cost_cut(enum tsc_cost_part part);

/* A part reports its own cost as it goes, so the budget judges which
 * level can help: CPU time it measured, and/or records it made on the
 * job's threads (costed at one record's measured cost).  Any thread, a
 * relaxed atomic add. */
void tsc_cost_part_add(enum tsc_cost_part part, uint64_t ns, uint64_t records);

/* The telemetry period's factor at the present level (1, 4, 16). */
uint32_t tsc_cost_telemetry_factor(void);

#endif
