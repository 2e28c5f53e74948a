/* tscope's own cost from a dump's metadata (self_cost.h). */
#include "self_cost.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"

static uint64_t u64(const char *v) { return strtoull(v, NULL, 10); }

static void on_step(tsa_self_cost *c, const char *key, const char *value)
{
    unsigned long n = strtoul(key + strlen(TSC_META_COST_STEP_PREFIX), NULL, 10);
    if (n < 1 || n > TSA_COST_STEPS_KEPT)
        return;
    tsa_cost_step s = {0};
    unsigned long long at;
    int used = 0;
    if (sscanf(value, "%llu %u %u %u %n", &at, &s.from, &s.to, &s.pct_c, &used) < 4)
        return;
    s.at_ns = (int64_t)(at & INT64_MAX);
    snprintf(s.what, sizeof s.what, "%s", value + used);
    c->step[n - 1] = s;
    if (n > c->n_step)
        c->n_step = (uint32_t)n;
}

/* The cost_* keys, one line each: where the value goes and how it is
 * read.  cost_step.N (a prefix) is read by on_step. */
enum cost_field { F_U64, F_U32, F_WALL, F_BUDGET };
static const struct cost_key {
    const char *key;
    size_t off;
    enum cost_field how;
} k_keys[] = {
    {TSC_META_COST_WALL, offsetof(tsa_self_cost, wall_ns), F_WALL},
    {TSC_META_COST_WRITER, offsetof(tsa_self_cost, writer_ns), F_U64},
    {TSC_META_COST_TELEMETRY, offsetof(tsa_self_cost, telemetry_ns), F_U64},
    {TSC_META_COST_JOB_SLOTS, offsetof(tsa_self_cost, job_slots), F_U64},
    {TSC_META_COST_SLOT_PS, offsetof(tsa_self_cost, slot_ps), F_U64},
    {TSC_META_COST_BYTES, offsetof(tsa_self_cost, bytes_written), F_U64},
    {TSC_META_COST_MEMORY, offsetof(tsa_self_cost, memory_bytes), F_U64},
    {TSC_META_COST_PROCESS_CPU, offsetof(tsa_self_cost, process_cpu_ns), F_U64},
    {TSC_META_COST_BUDGET, offsetof(tsa_self_cost, budget_cpct), F_BUDGET},
    {TSC_META_COST_LEVEL, offsetof(tsa_self_cost, level), F_U32},
    {TSC_META_COST_STEPS, offsetof(tsa_self_cost, steps), F_U32},
    {TSC_META_COST_OVER, offsetof(tsa_self_cost, over_budget), F_U32},
};

static void set_field(tsa_self_cost *c, const struct cost_key *k, const char *value)
{
    void *at = (char *)c + k->off;
    switch (k->how) {
    case F_WALL: c->recorded = 1; /* fall through */
    case F_U64: *(uint64_t *)at = u64(value); break;
    case F_U32: *(uint32_t *)at = (uint32_t)u64(value); break;
    case F_BUDGET:
        c->has_budget = 1;
        *(uint32_t *)at = strcmp(value, "off") ? (uint32_t)(strtod(value, NULL) * 100 + 0.5) : 0;
        break;
    }
}

int tsa_self_cost_on_meta(tsa_self_cost *c, const char *key, const char *value)
{
    if (strncmp(key, "cost_", 5))
        return 0;
    for (size_t i = 0; i < sizeof k_keys / sizeof k_keys[0]; i++)
        if (!strcmp(key, k_keys[i].key)) {
            set_field(c, &k_keys[i], value);
            return 1;
        }
    if (strncmp(key, TSC_META_COST_STEP_PREFIX, strlen(TSC_META_COST_STEP_PREFIX)))
        return 0;
    on_step(c, key, value);
    return 1;
}

int tsa_self_cost_figure(const tsa_self_cost *c, tsa_cost_figure *f)
{
    memset(f, 0, sizeof *f);
    if (!c->recorded || !c->wall_ns)
        return -1;
    f->threads_ms = (double)(c->writer_ns + c->telemetry_ns) / 1e6;
    f->job_known = c->slot_ps != 0;
    f->job_ms = (double)c->job_slots * (double)c->slot_ps / 1e9;
    f->cpu_ms = f->threads_ms + f->job_ms;
    f->pct = f->cpu_ms * 1e6 / (double)c->wall_ns * 100.0;
    f->mb_written = (double)c->bytes_written / 1e6;
    f->mb_held = (double)c->memory_bytes / 1e6;
    return 0;
}

void tsa_self_cost_print(FILE *out, const tsa_self_cost *c, size_t steps)
{
    tsa_cost_figure f;
    if (tsa_self_cost_figure(c, &f) < 0) {
        fprintf(out, "not recorded (a dump of an older tscope)");
        return;
    }
    fprintf(out, "%.2f%% of the run (CPU ", f.pct);
    if (steps)
        fprintf(out, "%.3g ms per step", f.cpu_ms / (double)steps);
    else
        fprintf(out, "%.3g ms, steps unknown", f.cpu_ms);
    fprintf(out, ", %.2f MB written): writer %.1f ms, telemetry %.1f ms, ", f.mb_written,
            (double)c->writer_ns / 1e6, (double)c->telemetry_ns / 1e6);
    if (f.job_known)
        fprintf(out, "job's records %.2f ms (%llu x %.1f ns)", f.job_ms,
                (unsigned long long)c->job_slots, (double)c->slot_ps / 1000.0);
    else
        fprintf(out, "job's records not measured (%llu)", (unsigned long long)c->job_slots);
    fprintf(out, "; %.1f MB held; budget ", f.mb_held);
    if (!c->has_budget)
        fprintf(out, "not recorded");
    else if (!c->budget_cpct)
        fprintf(out, "off");
    else
        fprintf(out, "%u.%02u%%%s", c->budget_cpct / 100, c->budget_cpct % 100,
                f.pct > c->budget_cpct / 100.0 ? " (above)" : "");
    if (c->steps)
        fprintf(out, ", level %u after %u step%s", c->level, c->steps, c->steps == 1 ? "" : "s");
}

void tsa_self_cost_print_steps(FILE *out, const tsa_self_cost *c, int64_t run_start_ns,
                               const char *indent)
{
    for (uint32_t i = 0; i < c->n_step; i++) {
        const tsa_cost_step *s = &c->step[i];
        if (!s->at_ns)
            continue;
        double at = run_start_ns && s->at_ns > run_start_ns
                        ? (double)(s->at_ns - run_start_ns) / 1e9 : 0.0;
        fprintf(out, "%s%s at +%.1f s (the period cost %u.%02u%%): level %u -> %u, %s\n",
                indent, s->to > s->from ? "stepped down" : "stepped up", at, s->pct_c / 100,
                s->pct_c % 100, s->from, s->to, s->what);
    }
    if (c->steps > c->n_step)
        fprintf(out, "%s(%u more level changes not listed)\n", indent, c->steps - c->n_step);
}

int tsa_self_cost_thinned(const tsa_self_cost *c, const char *what, int64_t *at_ns,
                          int64_t *resume_ns)
{
    *at_ns = *resume_ns = 0;
    uint32_t i = 0;
    while (i < c->n_step && !(c->step[i].at_ns && c->step[i].to > c->step[i].from &&
                              !strcmp(c->step[i].what, what)))
        i++;
    if (i == c->n_step)
        return 0;
    *at_ns = c->step[i].at_ns;
    /* A step up undoes the last step down: below that level, it is back. */
    for (uint32_t k = i + 1; k < c->n_step; k++)
        if (c->step[k].at_ns && c->step[k].to < c->step[i].to) {
            *resume_ns = c->step[k].at_ns;
            break;
        }
    return 1;
}

int tsa_self_cost_kernels_traced(const tsa_self_cost *c, int64_t t)
{
    int64_t at, resume;
    if (!tsa_self_cost_thinned(c, TSC_COST_WHAT_LIGHT, &at, &resume))
        return 1;
    return t < at || (resume && t >= resume);
}
