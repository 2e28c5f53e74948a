#include "diff.h"
#include "reader/record_json.h"
#include "reader/text_visible.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"
#include "views_names.h"

typedef struct rows {
    tsa_diff_row *v;
    size_t n, cap;
} rows;

static int add(rows *r, const char *section, const char *name, double a, double b,
               tsa_diff_unit unit)
{
    tsa_diff_row row;
    memset(&row, 0, sizeof row);
    row.section = section;
    snprintf(row.name, sizeof row.name, "%s", name);
    row.a = a;
    row.b = b;
    row.unit = unit;
    return TSA_VEC_PUSH(r->v, r->n, r->cap, row);
}

/* rank-ns over the analysed steps -> ms per rank-step */
static double per_step_ms(const tsa_diff_side *s, int64_t rank_ns)
{
    if (!s->ranks || !s->steps)
        return NAN;
    return (double)rank_ns / 1e6 / (double)s->ranks / (double)s->steps;
}

/* A run's median step in ms; NAN without steps (the window is no step). */
static double median_step_ms(const tsa_diff_side *s)
{
    return s->no_steps ? NAN : s->median_step_ns / 1e6;
}

const char *tsa_diff_steps_text(char *buf, size_t cap, const tsa_diff_side *s)
{
    if (s->no_steps)
        snprintf(buf, cap, "no steps");
    else
        snprintf(buf, cap, "%zu steps analysed", s->steps);
    return buf;
}

static const char *coll_lookup(const tsa_diff_side *s, const char *name, size_t *at)
{
    for (size_t i = 0; i < s->n_colls; i++)
        if (s->coll_name[i] && !strcmp(s->coll_name[i], name)) {
            *at = i;
            return s->coll_name[i];
        }
    return NULL;
}

static int add_collectives(rows *r, const tsa_diff_side *a, const tsa_diff_side *b)
{
    /* union of the operations of both runs, A's order first */
    const tsa_diff_side *sides[2] = {a, b};
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < sides[side]->n_colls; i++) {
            const char *name = sides[side]->coll_name[i];
            size_t ia = 0, ib = 0;
            if (!name || (side == 1 && coll_lookup(a, name, &ia)))
                continue;
            int in_a = coll_lookup(a, name, &ia) != NULL, in_b = coll_lookup(b, name, &ib) != NULL;
            char label[64];
            snprintf(label, sizeof label, "%s time", name);
            if (add(r, "collectives", label, in_a ? per_step_ms(a, a->coll_ns[ia]) : NAN,
                    in_b ? per_step_ms(b, b->coll_ns[ib]) : NAN, TSA_DIFF_MS_PER_STEP))
                return -1;
            snprintf(label, sizeof label, "%s busbw", name);
            if (add(r, "collectives", label, in_a ? a->coll_busbw[ia] : NAN,
                    in_b ? b->coll_busbw[ib] : NAN, TSA_DIFF_GBPS))
                return -1;
        }
    return 0;
}

static const char *unit_text(tsa_diff_unit u)
{
    switch (u) {
    case TSA_DIFF_MS_PER_STEP: return "ms";
    case TSA_DIFF_GBPS: return "GB/s";
    case TSA_DIFF_SHARE: return "%";
    default: return "";
    }
}

int tsa_diff_compute(const tsa_diff_side *a, const tsa_diff_side *b, tsa_diff *out)
{
    memset(out, 0, sizeof *out);
    out->most = -1;
    rows r = {0};
    int rc = 0;
    rc |= add(&r, "step", "median step time", median_step_ms(a), median_step_ms(b),
              TSA_DIFF_MS_PER_STEP);
    rc |= add(&r, "step", "MFU", a->mfu, b->mfu, TSA_DIFF_SHARE);
    size_t lines = a->n_lines > b->n_lines ? a->n_lines : b->n_lines;
    for (size_t i = 0; i < lines && !rc; i++) {
        const char *label = i < a->n_lines ? a->line_label[i] : b->line_label[i];
        rc |= add(&r, "budget", label ? label : "?",
                  i < a->n_lines ? per_step_ms(a, a->line_ns[i]) : NAN,
                  i < b->n_lines ? per_step_ms(b, b->line_ns[i]) : NAN, TSA_DIFF_MS_PER_STEP);
    }
    for (int p = 1; p < TSA_PHASE_COUNT && !rc; p++)
        if (a->phase_ns[p] || b->phase_ns[p])
            rc |= add(&r, "phases", tsa_views_phase_name((unsigned)p),
                      per_step_ms(a, a->phase_ns[p]), per_step_ms(b, b->phase_ns[p]),
                      TSA_DIFF_MS_PER_STEP);
    for (int k = 0; k < TSA_KCAT_COUNT && !rc; k++)
        if (a->kcat_ns[k] || b->kcat_ns[k])
            rc |= add(&r, "kernels", tsa_views_kcat_name((unsigned)k),
                      per_step_ms(a, a->kcat_ns[k]), per_step_ms(b, b->kcat_ns[k]),
                      TSA_DIFF_MS_PER_STEP);
    if (!rc)
        rc |= add_collectives(&r, a, b);
    if (!rc) {
        rc |= add(&r, "shares", "exposed comm share", a->exposed_comm_share, b->exposed_comm_share,
                  TSA_DIFF_SHARE);
        rc |= add(&r, "shares", "data stall share", a->data_stall_share, b->data_stall_share,
                  TSA_DIFF_SHARE);
    }
    if (rc) {
        free(r.v);
        return -1;
    }
    out->rows = r.v;
    out->n_rows = r.n;
    out->speedup = median_step_ms(a) > 0 && median_step_ms(b) > 0
                       ? (double)a->median_step_ns / (double)b->median_step_ns
                       : NAN;
    /* The biggest move in time per step.  Budget lines first: they add up
     * to the step exactly, so the largest one explains the step's change;
     * the other sections only when a run has no budget. */
    double best = 0;
    for (int pass = 0; pass < 2 && out->most < 0; pass++) {
        for (size_t i = 0; i < r.n; i++) {
            const tsa_diff_row *row = &r.v[i];
            if (row->unit != TSA_DIFF_MS_PER_STEP || !strcmp(row->section, "step") ||
                (pass == 0) != !strcmp(row->section, "budget"))
                continue;
            if (isnan(row->a) && isnan(row->b))
                continue;
            double av = isnan(row->a) ? 0 : row->a, bv = isnan(row->b) ? 0 : row->b;
            if (fabs(bv - av) > best) {
                best = fabs(bv - av);
                out->most = (int)i;
            }
        }
    }
    if (out->most >= 0) {
        const tsa_diff_row *m = &r.v[out->most];
        double av = isnan(m->a) ? 0 : m->a, bv = isnan(m->b) ? 0 : m->b;
        char ratio[48] = "";
        if (av > 0)
            snprintf(ratio, sizeof ratio, ", x%.2f", bv / av);
        snprintf(out->changed_most, sizeof out->changed_most,
                 "changed most: %s %s went from %.2f to %.2f ms per rank-step (%+.2f ms%s)",
                 m->section, m->name, av, bv, bv - av, ratio);
    } else
        snprintf(out->changed_most, sizeof out->changed_most, "changed most: nothing measurable");
    return 0;
}

static void fmt_value(char *buf, size_t cap, double v, tsa_diff_unit u)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (u == TSA_DIFF_SHARE)
        snprintf(buf, cap, "%.1f %%", v * 100);
    else
        snprintf(buf, cap, "%.3f %s", v, unit_text(u));
}

static void fmt_delta(char *buf, size_t cap, const tsa_diff_row *r)
{
    if (isnan(r->a) || isnan(r->b))
        snprintf(buf, cap, "-");
    else if (r->unit == TSA_DIFF_SHARE)
        snprintf(buf, cap, "%+.1f pt", (r->b - r->a) * 100);
    else
        snprintf(buf, cap, "%+.3f", r->b - r->a);
}

static const char *straggler_text(char *buf, size_t cap, const tsa_diff_side *s)
{
    if (s->straggler_rank < 0)
        snprintf(buf, cap, "none");
    else
        snprintf(buf, cap, "rank %d (%s)", s->straggler_rank,
                 s->straggler_host ? s->straggler_host : "?");
    return buf;
}

void tsa_diff_print_text(FILE *out, const tsa_diff_side *a, const tsa_diff_side *b,
                         const tsa_diff *d)
{
    char sa_steps[48], sb_steps[48];
    fprintf(out, "tscope diff\n  A: %s  (%zu ranks, %zu hosts, %s, device %s)\n"
                 "  B: %s  (%zu ranks, %zu hosts, %s, device %s)\n",
            tsr_vis(a->label), a->ranks, a->hosts, tsa_diff_steps_text(sa_steps, 48, a),
            a->device ? tsr_vis(a->device) : "unknown", tsr_vis(b->label), b->ranks, b->hosts,
            tsa_diff_steps_text(sb_steps, 48, b), b->device ? tsr_vis(b->device) : "unknown");
    const char *section = NULL;
    fprintf(out, "\n%-34s %14s %14s %12s %8s\n", "", "A", "B", "B-A", "B/A");
    for (size_t i = 0; i < d->n_rows; i++) {
        const tsa_diff_row *r = &d->rows[i];
        if (!section || strcmp(section, r->section)) {
            section = r->section;
            if (!strcmp(section, "budget") || !strcmp(section, "phases") ||
                !strcmp(section, "kernels"))
                fprintf(out, "%s (ms per rank-step)\n", section);
            else if (strcmp(section, "step"))
                fprintf(out, "%s\n", section);
        }
        char av[32], bv[32], dv[32], ratio[16] = "-";
        fmt_value(av, sizeof av, r->a, r->unit);
        fmt_value(bv, sizeof bv, r->b, r->unit);
        fmt_delta(dv, sizeof dv, r);
        if (!isnan(r->a) && !isnan(r->b) && r->a != 0 && r->unit != TSA_DIFF_SHARE)
            snprintf(ratio, sizeof ratio, "%.2fx", r->b / r->a);
        fprintf(out, "  %-32s %14s %14s %12s %8s\n", r->name, av, bv, dv, ratio);
    }
    char sa[128], sb[128];
    fprintf(out, "straggler\n  %-32s %14s %14s\n", "", straggler_text(sa, sizeof sa, a),
            straggler_text(sb, sizeof sb, b));
    if (!isnan(d->speedup))
        fprintf(out, "\nspeed-up: B is %.2fx %s than A (median step %.3f -> %.3f ms)\n",
                d->speedup >= 1 ? d->speedup : 1 / d->speedup,
                d->speedup >= 1 ? "faster" : "slower", a->median_step_ns / 1e6,
                b->median_step_ns / 1e6);
    else
        fprintf(out, "\nspeed-up: unknown (no step time in one of the runs)\n");
    fprintf(out, "%s\n", d->changed_most);
}

static cJSON *num_or_null(double v)
{
    return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);
}

static cJSON *side_json(const tsa_diff_side *s)
{
    cJSON *o = cJSON_CreateObject();
    tsr_json_add_text(o, "dir", s->label ? s->label : "");   /* a path: any bytes */
    cJSON_AddNumberToObject(o, "ranks", (double)s->ranks);
    if (s->device)
        tsr_json_add_text(o, "device", s->device);
    else
        cJSON_AddNullToObject(o, "device");
    cJSON_AddNumberToObject(o, "hosts", (double)s->hosts);
    /* without steps: none found, no step time (the window is no step) */
    cJSON_AddNumberToObject(o, "steps", s->no_steps ? 0 : (double)s->steps);
    cJSON_AddItemToObject(o, "median_step_ms", num_or_null(median_step_ms(s)));
    cJSON_AddItemToObject(o, "mfu", num_or_null(s->mfu));
    if (s->straggler_rank >= 0) {
        cJSON *st = cJSON_AddObjectToObject(o, "straggler");
        cJSON_AddNumberToObject(st, "rank", s->straggler_rank);
        cJSON_AddStringToObject(st, "host", s->straggler_host ? s->straggler_host : "");
    } else
        cJSON_AddNullToObject(o, "straggler");
    return o;
}

char *tsa_diff_json(const tsa_diff_side *a, const tsa_diff_side *b, const tsa_diff *d)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddItemToObject(root, "a", side_json(a));
    cJSON_AddItemToObject(root, "b", side_json(b));
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (size_t i = 0; i < d->n_rows; i++) {
        const tsa_diff_row *r = &d->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "section", r->section);
        cJSON_AddStringToObject(o, "name", r->name);
        static const char *units[] = {"ms_per_rank_step", "GB/s", "share", "count"};
        cJSON_AddStringToObject(o, "unit", units[r->unit]);
        cJSON_AddItemToObject(o, "a", num_or_null(r->a));
        cJSON_AddItemToObject(o, "b", num_or_null(r->b));
        cJSON_AddItemToObject(o, "delta", num_or_null(r->b - r->a));
        cJSON_AddItemToObject(o, "ratio", r->a != 0 ? num_or_null(r->b / r->a) : cJSON_CreateNull());
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_AddItemToObject(root, "speedup", num_or_null(d->speedup));
    if (d->most >= 0) {
        cJSON *m = cJSON_AddObjectToObject(root, "changed_most");
        cJSON_AddStringToObject(m, "section", d->rows[d->most].section);
        cJSON_AddStringToObject(m, "name", d->rows[d->most].name);
        cJSON_AddStringToObject(m, "text", d->changed_most);
    } else
        cJSON_AddNullToObject(root, "changed_most");
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

void tsa_diff_free(tsa_diff *d)
{
    free(d->rows);
    memset(d, 0, sizeof *d);
}
