/* tscope's own cost in the text and JSON reports (self_cost_report.h). */
#include "self_cost_report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "html_escape.h"

#include "model/self_cost.h"
#include "util/json_int.h"

int tsa_self_cost_any(const tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].self_cost.recorded)
            return 1;
    return 0;
}

/* The job: every recording rank's CPU over every recording rank's run. */
typedef struct job_cost {
    size_t ranks, of;
    double cpu_ms, wall_ms, mb_written, steps;
    int job_known;
} job_cost;

static void job_sum(const tsa_analysis *a, job_cost *j)
{
    *j = (job_cost){.of = a->job->n_ranks, .job_known = 1};
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        tsa_cost_figure f;
        const tsa_self_cost *c = &a->job->ranks[i].self_cost;
        if (tsa_self_cost_figure(c, &f) < 0)
            continue;
        j->ranks++;
        j->cpu_ms += f.cpu_ms;
        j->wall_ms += (double)c->wall_ns / 1e6;
        j->mb_written += f.mb_written;
        j->job_known &= f.job_known;
        if (i < a->n_ranks)
            j->steps += (double)a->ranks[i].steps_found;
    }
}

void tsa_self_cost_report_print(FILE *out, const tsa_analysis *a, size_t max_lines)
{
    job_cost j;
    job_sum(a, &j);
    fprintf(out, "  tscope's own cost: ");
    if (j.wall_ms > 0) {
        fprintf(out, "%.2f%% of the run (CPU ", j.cpu_ms / j.wall_ms * 100.0);
        if (j.steps > 0)
            fprintf(out, "%.3g ms per step", j.cpu_ms / j.steps); /* both summed over ranks */
        else
            fprintf(out, "%.3g ms, steps unknown", j.cpu_ms);
        fprintf(out, " on a rank, %.2f MB written in all), %zu of %zu ranks recorded it%s\n",
                j.mb_written, j.ranks, j.of,
                j.job_known ? "" : " (the job's records' part not measured on some)");
    } else {
        fprintf(out, "not recorded\n");
    }
    for (size_t i = 0; i < a->job->n_ranks && i < max_lines; i++) {
        const tsa_rank *r = &a->job->ranks[i];
        fprintf(out, "  rank %d: ", r->rank);
        tsa_self_cost_print(out, &r->self_cost, i < a->n_ranks ? a->ranks[i].steps_found : 0);
        fputc('\n', out);
        tsa_self_cost_print_steps(out, &r->self_cost, r->first_ns, "    ");
    }
    if (a->job->n_ranks > max_lines)
        fprintf(out, "  (%zu more ranks in the JSON report)\n", a->job->n_ranks - max_lines);
}

static cJSON *figure_json(const tsa_self_cost *c, size_t steps)
{
    tsa_cost_figure f;
    if (tsa_self_cost_figure(c, &f) < 0)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    tsa_json_add_num(o, "pct_of_run", f.pct);
    tsa_json_add_num(o, "cpu_ms", f.cpu_ms);
    if (steps)
        tsa_json_add_num(o, "cpu_ms_per_step", f.cpu_ms / (double)steps);
    else
        cJSON_AddNullToObject(o, "cpu_ms_per_step");
    tsa_json_add_num(o, "wall_ms", (double)c->wall_ns / 1e6);
    tsa_json_add_num(o, "writer_cpu_ms", (double)c->writer_ns / 1e6);
    tsa_json_add_num(o, "telemetry_cpu_ms", (double)c->telemetry_ns / 1e6);
    tsa_json_add_num(o, "job_records", (double)c->job_slots);
    if (f.job_known) {
        tsa_json_add_num(o, "job_record_ns", (double)c->slot_ps / 1000.0);
        tsa_json_add_num(o, "job_records_ms", f.job_ms);
    } else {
        cJSON_AddNullToObject(o, "job_record_ns");
        cJSON_AddNullToObject(o, "job_records_ms");
    }
    tsa_json_add_num(o, "mb_written", f.mb_written);
    tsa_json_add_num(o, "mb_held", f.mb_held);
    tsa_json_add_num(o, "process_cpu_ms", (double)c->process_cpu_ns / 1e6);
    if (c->has_budget && c->budget_cpct)
        tsa_json_add_num(o, "budget_pct", c->budget_cpct / 100.0);
    else
        cJSON_AddNullToObject(o, "budget_pct");
    tsa_json_add_num(o, "level", c->level);
    tsa_json_add_num(o, "level_changes", c->steps);
    cJSON *st = cJSON_AddArrayToObject(o, "level_changes_kept");
    for (uint32_t k = 0; k < c->n_step; k++) {
        const tsa_cost_step *s = &c->step[k];
        if (!s->at_ns)
            continue;
        cJSON *x = cJSON_CreateObject();
        tsa_json_add_i64(x, "at_ns", s->at_ns);
        tsa_json_add_num(x, "from", s->from);
        tsa_json_add_num(x, "to", s->to);
        tsa_json_add_num(x, "period_pct", s->pct_c / 100.0);
        cJSON_AddStringToObject(x, "what", s->what);
        cJSON_AddItemToArray(st, x);
    }
    return o;
}

void tsa_self_cost_add_json(cJSON *root, const tsa_analysis *a)
{
    if (!tsa_self_cost_any(a->job))
        return;
    job_cost j;
    job_sum(a, &j);
    cJSON *o = cJSON_AddObjectToObject(root, "self_cost");
    tsa_json_add_num(o, "pct_of_run", j.wall_ms > 0 ? j.cpu_ms / j.wall_ms * 100.0 : 0);
    tsa_json_add_num(o, "cpu_ms", j.cpu_ms);
    tsa_json_add_num(o, "mb_written", j.mb_written);
    tsa_json_add_num(o, "ranks_recorded", (double)j.ranks);
    tsa_json_add_num(o, "ranks", (double)j.of);
}

void tsa_self_cost_rank_json(cJSON *x, const tsa_analysis *a, size_t i)
{
    if (i >= a->job->n_ranks || !tsa_self_cost_any(a->job))
        return;
    cJSON_AddItemToObject(x, "self_cost",
                          figure_json(&a->job->ranks[i].self_cost, a->ranks[i].steps_found));
}

void tsa_self_cost_html(FILE *out, const tsa_analysis *a)
{
    if (!tsa_self_cost_any(a->job))
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    tsa_self_cost_report_print(m, a, 16);
    if (fclose(m) == 0 && text) {
        fprintf(out, "<h2>tscope's own cost</h2>\n<pre>");
        tsa_html_escape(out, text);
        fprintf(out, "</pre>\n");
    }
    free(text);
}
