/* tscope's own cost in the run it records, and the budget (self_cost.h,
 * docs/self-cost.md). */
#include "self_cost.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost_levels.h"
#include "fast_clock.h"
#include "intern.h"
#include "rec_meta.h"
#include "warn.h"
#include "ring.h"
#include "spin.h"
#include "tsc_format.h"
#include "tsc_tls.h"

/* One tscope thread's CPU clock: read while it runs, its last value kept
 * when it ends (base: earlier threads of the same role, e.g. a writer
 * restarted). */
typedef struct own_thread {
    clockid_t clock;
    _Atomic int live;
    _Atomic uint64_t final_ns;
    uint64_t base_ns;
} own_thread;

static own_thread g_own[TSC_COST_THREADS];
static TSC_TLS int tls_own;
static _Atomic uint64_t g_slot_ps;
static uint64_t g_start_mono;

/* The budget's state: touched only by the writer thread, except the
 * level and the cuts, which the parts read, and the parts' reported
 * costs, which they add to. */
static uint32_t g_budget_cpct, g_period_ms;
static _Atomic uint32_t g_level;
static tsc_cost_ladder g_ladder;                     /* the levels taken (cost_levels.h) */
static _Atomic uint32_t g_cut[TSC_COST_PARTS];       /* per part, what the parts read */
static _Atomic uint64_t g_part_ns[TSC_COST_PARTS];   /* what the parts report */
static _Atomic uint64_t g_part_records[TSC_COST_PARTS];
static uint64_t g_last_part_ns[TSC_COST_PARTS];
static uint64_t g_last_cost_ns, g_last_wall_ns;
static uint32_t g_above, g_below, g_steps;
static uint64_t g_above_ns, g_over_periods;
static int g_telemetry_on; /* without the telemetry thread its levels cut nothing */

/* Periods in a row above the budget before a step down, and at a quarter
 * of it or less before a step back up (a telemetry step changes that
 * part's cost 4x: a quarter leaves room for it). */
#define STEP_DOWN_AFTER 3u
#define STEP_DOWN_AFTER_NS 5000000000ull /* and at least this long: a start-up burst is not a trend */
#define STEP_UP_AFTER 30u
#define MAX_STEPS_KEPT 32u

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tsc_cost_thread_begin(enum tsc_cost_thread which)
{
    tls_own = 1;
    own_thread *o = &g_own[which];
    o->base_ns += atomic_load(&o->final_ns);
    atomic_store(&o->final_ns, 0);
    if (pthread_getcpuclockid(pthread_self(), &o->clock) == 0)
        atomic_store(&o->live, 1);
}

void tsc_cost_thread_end(enum tsc_cost_thread which)
{
    own_thread *o = &g_own[which];
    atomic_store(&o->final_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID));
    atomic_store(&o->live, 0);
}

int tsc_cost_own_thread(void) { return tls_own; }

static uint64_t own_thread_ns(own_thread *o)
{
    uint64_t v = 0;
    if (atomic_load(&o->live))
        v = clock_ns(o->clock); /* 0 if it ended just now: its final value then */
    if (!v)
        v = atomic_load(&o->final_ns);
    return o->base_ns + v;
}

void tsc_cost_start(uint64_t mono_ns) { g_start_mono = mono_ns; }

void tsc_cost_after_fork(void)
{
    memset(g_own, 0, sizeof g_own);
    tls_own = 0;
    atomic_store(&g_level, 0);
    memset(&g_ladder, 0, sizeof g_ladder);
    for (int p = 0; p < TSC_COST_PARTS; p++) {
        atomic_store(&g_cut[p], 0);
        atomic_store(&g_part_ns[p], 0);
        atomic_store(&g_part_records[p], 0);
        g_last_part_ns[p] = 0;
    }
    g_last_cost_ns = g_last_wall_ns = 0;
    g_above = g_below = g_steps = 0;
    g_above_ns = g_over_periods = 0;
}

/* ------------------------------------------------------------ calibration */

/* One record as the job's thread makes it in an NCCL wrapper: two clock
 * reads, a descriptor look-up that finds its entry, one ring slot.  Run on
 * private copies (nothing reaches the dump); the least of a few rounds,
 * on the thread's CPU clock, so a preemption does not inflate it. */
#define CAL_RECORDS 2048u
#define CAL_ROUNDS 5u

void tsc_cost_calibrate(void)
{
    tsc_intern *in = calloc(1, sizeof *in);
    tsc_ring ring;
    if (!in || tsc_ring_init(&ring, 64 * 1024) < 0) {
        free(in);
        return;
    }
    tsc_intern_reset(in);
    unsigned char payload[64] = {2, 7, 0, 0xff};
    uint64_t h;
    if (!tsc_intern_lookup(in, TSC_DESC_NCCL_CALL, payload, sizeof payload, &h))
        tsc_intern_insert(in, TSC_DESC_NCCL_CALL, payload, sizeof payload, h, 1);
    uint64_t best = UINT64_MAX;
    for (unsigned r = 0; r < CAL_ROUNDS; r++) {
        uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (unsigned i = 0; i < CAL_RECORDS; i++) {
            uint64_t t0 = tsc_clock_now();
            uint32_t id = tsc_intern_lookup(in, TSC_DESC_NCCL_CALL, payload, sizeof payload, &h);
            uint64_t t1 = tsc_clock_now();
            tsc_event *e = tsc_ring_reserve1(&ring);
            if (e) {
                *e = (tsc_event){.kind = TSC_EV_NCCL, .desc = id, .start_ns = t0, .end_ns = t1};
                tsc_ring_commit(&ring, 1);
            }
            /* the writer's side, not the job's: keep the ring from filling */
            atomic_store_explicit(&ring.tail, atomic_load(&ring.head), memory_order_relaxed);
        }
        uint64_t took = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        if (took < best)
            best = took;
    }
    tsc_ring_free(&ring);
    free(in);
    atomic_store(&g_slot_ps, best * 1000 / CAL_RECORDS);
}

/* ---------------------------------------------------------------- figure */

void tsc_cost_measure(const tsc_cost_inputs *in, tsc_cost_figure *f)
{
    memset(f, 0, sizeof *f);
    f->in = *in;
    uint64_t now = tsc_mono_ns();
    f->wall_ns = now > g_start_mono ? now - g_start_mono : 0;
    for (int i = 0; i < TSC_COST_THREADS; i++) {
        f->thread_ns[i] = own_thread_ns(&g_own[i]);
        f->threads_ns += f->thread_ns[i];
    }
    f->slot_ps = atomic_load(&g_slot_ps);
    f->hot_ns = in->job_slots * f->slot_ps / 1000;
    f->process_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static void set_u64(const char *key, uint64_t v)
{
    char b[24];
    tsc_rec_meta(key, tsc_u64_to_str(v, b));
}

size_t tsc_cost_pairs(const tsc_cost_inputs *in, const char **keys, const char **vals,
                      char (*bufs)[24])
{
    tsc_cost_figure f;
    tsc_cost_measure(in, &f);
    const char *k[TSC_COST_PAIRS] = {TSC_META_COST_WALL, TSC_META_COST_WRITER,
                                     TSC_META_COST_TELEMETRY, TSC_META_COST_JOB_SLOTS,
                                     TSC_META_COST_BYTES, TSC_META_COST_MEMORY,
                                     TSC_META_COST_PROCESS_CPU, TSC_META_COST_LEVEL,
                                     TSC_META_COST_SLOT_PS};
    uint64_t v[TSC_COST_PAIRS] = {f.wall_ns, f.thread_ns[TSC_COST_WRITER],
                                  f.thread_ns[TSC_COST_TELEMETRY], in->job_slots,
                                  in->bytes_written, in->memory_bytes, f.process_cpu_ns,
                                  atomic_load(&g_level), f.slot_ps};
    /* Nothing before the writer has started and measured a record's
     * cost (the META chunk of set-up): a figure of no time at all would
     * read as "costs nothing". */
    if (!f.slot_ps)
        return 0;
    size_t n = TSC_COST_PAIRS;
    for (size_t i = 0; i < n; i++) {
        keys[i] = k[i];
        vals[i] = tsc_u64_to_str(v[i], bufs[i]);
    }
    return n;
}

/* ---------------------------------------------------------------- budget */

void tsc_cost_set_budget(uint32_t budget_cpct, uint32_t period_ms, int telemetry_on)
{
    g_budget_cpct = budget_cpct;
    g_period_ms = period_ms;
    g_telemetry_on = telemetry_on;
    char v[24];
    if (budget_cpct)
        snprintf(v, sizeof v, "%u.%02u", budget_cpct / 100, budget_cpct % 100);
    else
        snprintf(v, sizeof v, "off");
    tsc_rec_meta(TSC_META_COST_BUDGET, v);
}

uint32_t tsc_cost_level(void) { return atomic_load_explicit(&g_level, memory_order_relaxed); }

uint32_t tsc_cost_telemetry_factor(void)
{
    /* x4 a level: a level changes the telemetry's cost about 4x */
    uint32_t cut = tsc_cost_cut(TSC_COST_PART_TELEMETRY);
    return 1u << (2 * (cut < 8 ? cut : 8));
}

uint32_t tsc_cost_cut(enum tsc_cost_part part)
{
    return (unsigned)part < TSC_COST_PARTS
               ? atomic_load_explicit(&g_cut[part], memory_order_relaxed) : 0;
}

void tsc_cost_part_add(enum tsc_cost_part part, uint64_t ns, uint64_t records)
{
    if ((unsigned)part >= TSC_COST_PARTS)
        return;
    if (ns)
        atomic_fetch_add_explicit(&g_part_ns[part], ns, memory_order_relaxed);
    if (records)
        atomic_fetch_add_explicit(&g_part_records[part], records, memory_order_relaxed);
}

/* Every step, down or up, as cost_step.N = "<realtime ns> <from> <to>
 * <cost of the period, hundredths of %> <what is recorded less now>". */
static void record_step(uint32_t from, uint32_t to, uint64_t pct_c)
{
    g_steps++;
    set_u64(TSC_META_COST_STEPS, g_steps);
    if (g_steps > MAX_STEPS_KEPT)
        return; /* counted: the report says how many it does not list */
    char key[32], val[160];
    snprintf(key, sizeof key, "%s%u", TSC_META_COST_STEP_PREFIX, g_steps);
    snprintf(val, sizeof val, "%llu %u %u %llu %s", (unsigned long long)tsc_clock_now(), from, to,
             (unsigned long long)pct_c, tsc_cost_ladder_what(&g_ladder));
    tsc_rec_meta(key, val);
}

/* The ladder changed: the parts see their new cut, the dump the step. */
static void publish_step(uint32_t from, uint64_t pct_c)
{
    for (int p = 0; p < TSC_COST_PARTS; p++)
        atomic_store(&g_cut[p], tsc_cost_ladder_cut(&g_ladder, (enum tsc_cost_part)p));
    atomic_store(&g_level, g_ladder.depth);
    record_step(from, g_ladder.depth, pct_c);
}

/* What each part cost in the last period: the telemetry thread by its
 * clock, the others by what they reported (CPU time, and records at one
 * record's measured cost). */
static void part_costs(const tsc_cost_figure *f, uint64_t d[TSC_COST_PARTS])
{
    for (int p = 0; p < TSC_COST_PARTS; p++) {
        uint64_t c = atomic_load(&g_part_ns[p]) +
                     atomic_load(&g_part_records[p]) * f->slot_ps / 1000;
        if (p == TSC_COST_PART_TELEMETRY)
            c += g_telemetry_on ? f->thread_ns[TSC_COST_TELEMETRY] : 0;
        d[p] = c > g_last_part_ns[p] ? c - g_last_part_ns[p] : 0;
        g_last_part_ns[p] = c > g_last_part_ns[p] ? c : g_last_part_ns[p];
    }
}

void tsc_cost_govern(const tsc_cost_inputs *in)
{
    if (!g_budget_cpct)
        return;
    tsc_cost_figure f;
    tsc_cost_measure(in, &f);
    uint64_t cost = f.threads_ns + f.hot_ns;
    /* a slot changing hands can make the count step back a little */
    uint64_t dcost = cost > g_last_cost_ns ? cost - g_last_cost_ns : 0, dwall = f.wall_ns - g_last_wall_ns;
    uint64_t dpart[TSC_COST_PARTS];
    part_costs(&f, dpart);
    int first = g_last_wall_ns == 0;
    g_last_cost_ns = cost > g_last_cost_ns ? cost : g_last_cost_ns;
    g_last_wall_ns = f.wall_ns;
    /* The first period holds set-up (calibration, NVML loading): not a
     * fair sample of what the run costs. */
    if (first || dwall < (uint64_t)g_period_ms * 500000ull)
        return;
    uint64_t pct_c = dcost * 10000 / dwall; /* hundredths of a percent */
    uint32_t level = g_ladder.depth;
    if (pct_c > g_budget_cpct) {
        g_above++;
        g_above_ns += dwall;
        g_below = 0;
    } else {
        g_above = 0;
        g_above_ns = 0;
        g_below = pct_c * 4 <= g_budget_cpct ? g_below + 1 : 0;
    }
    int stays_above = g_above >= STEP_DOWN_AFTER && g_above_ns >= STEP_DOWN_AFTER_NS;
    if (stays_above)
        set_u64(TSC_META_COST_OVER, ++g_over_periods);
    /* A level is worth taking only while its part is a quarter of the
     * cost or more (cost_levels.h): a job whose own records cost most, a
     * tight loop of NCCL calls, would lose samples and gain nothing. */
    int next = stays_above ? tsc_cost_next_level(&g_ladder, dpart, dcost) : -1;
    if (next >= 0) {
        tsc_cost_ladder_take(&g_ladder, next);
        publish_step(level, pct_c);
        tsc_warn_once("budget", "own cost %llu.%02llu%% of the run is above TSCOPE_BUDGET_PCT="
                      "%u.%02u%%: recording less (%s, then further steps as needed; each step "
                      "is recorded in the dump)",
                      (unsigned long long)(pct_c / 100), (unsigned long long)(pct_c % 100),
                      g_budget_cpct / 100, g_budget_cpct % 100, tsc_cost_ladder_what(&g_ladder));
        g_above = 0;
        g_above_ns = 0;
    } else if (stays_above) {
        tsc_warn_once("budget_floor", "own cost %llu.%02llu%% of the run stays above "
                      "TSCOPE_BUDGET_PCT=%u.%02u%% with nothing left to record less of (%s; "
                      "no further level cuts a quarter of it)",
                      (unsigned long long)(pct_c / 100), (unsigned long long)(pct_c % 100),
                      g_budget_cpct / 100, g_budget_cpct % 100, tsc_cost_ladder_what(&g_ladder));
        g_above = 0;
        g_above_ns = 0;
    } else if (g_below >= STEP_UP_AFTER && level > 0) {
        tsc_cost_ladder_undo(&g_ladder);
        publish_step(level, pct_c);
        g_below = 0;
    }
}
