/* tscope's own cost in a rank's run, from its dump's cost_* metadata
 * (docs/self-cost.md): what the preload measured, and the figure the
 * report and `info` show.  A dump without the keys (older tscope) says
 * "not recorded", never 0. */
#ifndef TSA_SELF_COST_H
#define TSA_SELF_COST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TSA_COST_STEPS_KEPT 8

/* One change of the budget's level (cost_step.N). */
typedef struct tsa_cost_step {
    int64_t at_ns;              /* realtime */
    uint32_t from, to;          /* levels */
    uint32_t pct_c;             /* the period's cost, hundredths of a percent */
    char what[40];              /* what the new level does */
} tsa_cost_step;

typedef struct tsa_self_cost {
    int recorded;               /* cost_wall_ns was read */
    uint64_t wall_ns, writer_ns, telemetry_ns, job_slots, bytes_written, memory_bytes,
        process_cpu_ns;
    uint64_t slot_ps;           /* 0: not measured (then the job's part is unknown) */
    int has_budget;             /* cost_budget_pct read */
    uint32_t budget_cpct;       /* 0 = off */
    uint32_t level, steps, over_budget;
    tsa_cost_step step[TSA_COST_STEPS_KEPT];
    uint32_t n_step;            /* kept, in order */
} tsa_self_cost;

/* Loader hook: keeps a cost_* key; 1 when it was one. */
int tsa_self_cost_on_meta(tsa_self_cost *c, const char *key, const char *value);

/* The figure: CPU time tscope took (its threads, plus the job's records
 * when their cost was measured) as a share of the run's wall time. */
typedef struct tsa_cost_figure {
    double pct;                 /* of the run, one CPU = 100 */
    double cpu_ms;              /* threads + job's records */
    double threads_ms, job_ms;
    double mb_written, mb_held;
    int job_known;              /* slot_ps was measured */
} tsa_cost_figure;

/* 0 and the figure, or -1 when not recorded. */
int tsa_self_cost_figure(const tsa_self_cost *c, tsa_cost_figure *f);

/* One line: "1.20% of the run (CPU 3.1 ms per step, 0.4 MB written): ...",
 * or "not recorded (...)".  steps: the rank's steps (0 unknown). */
void tsa_self_cost_print(FILE *out, const tsa_self_cost *c, size_t steps);

/* The budget's level changes, one line each, indented (none: nothing). */
void tsa_self_cost_print_steps(FILE *out, const tsa_self_cost *c, int64_t run_start_ns,
                               const char *indent);

/* The first step down to the level `what` (TSC_COST_WHAT_*): 1 with its
 * time, and in *resume_ns the first later step back above that level (the
 * records whole again), 0 when none; 0 when the rank never took it. */
int tsa_self_cost_thinned(const tsa_self_cost *c, const char *what, int64_t *at_ns,
                          int64_t *resume_ns);

/* 0 when kernels launched at t (the rank's clock) were not traced on
 * purpose: after a step to light, before any step back up.  Such a
 * launch without its kernel is neither lost nor stuck. */
int tsa_self_cost_kernels_traced(const tsa_self_cost *c, int64_t t);

#endif
