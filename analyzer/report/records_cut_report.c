/* The budget's thinning steps in the reports (records_cut_report.h). */
#include "records_cut_report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "html_escape.h"

#include "model/self_cost.h"
#include "tsc_format.h"
#include "util/json_int.h"

static double secs(int64_t ns) { return ns > 0 ? (double)ns / 1e9 : 0.0; }

void tsa_records_cut_print(FILE *out, const tsa_analysis *a)
{
    const tsa_records_cut *k = &a->kernels_cut, *p = &a->plugin_cut;
    if (k->rank >= 0) {
        fprintf(out,
                "  per-kernel records stop at +%.1f s on rank %d (own-cost budget, light): "
                "figures cover the first %.1f s (%zu steps ended by then); the remaining "
                "%.1f s are counted but not analysed",
                secs(k->at_ns - k->run_start_ns), k->rank, secs(k->at_ns - k->run_start_ns),
                k->steps_before, secs(k->run_end_ns - k->at_ns));
        if (k->ranks > 1)
            fprintf(out, "; %zu ranks took the level", k->ranks);
        if (k->resume_ns)
            fprintf(out, "; records resume at +%.1f s, left out too (one window, cut at the "
                         "first step)",
                    secs(k->resume_ns - k->run_start_ns));
        fputc('\n', out);
    }
    if (p->rank >= 0) {
        fprintf(out,
                "  NCCL plugin proxy and channel events stop at +%.1f s on rank %d (own-cost "
                "budget, fewer plugin events): proxy and link findings rest on the run before "
                "it",
                secs(p->at_ns - p->run_start_ns), p->rank);
        if (p->resume_ns)
            fprintf(out, " and after +%.1f s", secs(p->resume_ns - p->run_start_ns));
        fputc('\n', out);
    }
}

/* Each rank that took the level: its step, on its own clock. */
static void add_cut(cJSON *root, const char *name, const tsa_analysis *a,
                    const tsa_records_cut *c, const char *what, const char *left_out)
{
    if (c->rank < 0)
        return;
    cJSON *o = cJSON_AddObjectToObject(root, name);
    tsa_json_add_num(o, "rank", c->rank);
    tsa_json_add_i64(o, "at_ns", c->at_ns);
    tsa_json_add_num(o, "at_s", secs(c->at_ns - c->run_start_ns));
    tsa_json_add_num(o, "left_s", secs(c->run_end_ns - c->at_ns));
    if (c->resume_ns)
        tsa_json_add_i64(o, "resume_ns", c->resume_ns);
    else
        cJSON_AddNullToObject(o, "resume_ns");
    cJSON_AddStringToObject(o, "level", what);
    cJSON_AddStringToObject(o, "left_out", left_out);
    cJSON *rs = cJSON_AddArrayToObject(o, "ranks");
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const tsa_rank *r = &a->job->ranks[i];
        int64_t at, resume;
        if (!tsa_self_cost_thinned(&r->self_cost, what, &at, &resume))
            continue;
        cJSON *x = cJSON_CreateObject();
        tsa_json_add_num(x, "rank", r->rank);
        tsa_json_add_i64(x, "at_ns", at);
        tsa_json_add_num(x, "at_s", secs(at - r->first_ns));
        if (resume)
            tsa_json_add_i64(x, "resume_ns", resume);
        else
            cJSON_AddNullToObject(x, "resume_ns");
        cJSON_AddItemToArray(rs, x);
    }
}

void tsa_records_cut_add_json(cJSON *root, const tsa_analysis *a)
{
    if (a->kernels_cut.rank < 0 && a->plugin_cut.rank < 0)
        return;
    cJSON *o = cJSON_AddObjectToObject(root, "records_cut");
    add_cut(o, "per_kernel", a, &a->kernels_cut, TSC_COST_WHAT_LIGHT,
            "every figure that needs kernels: the analysis window ends at the last step "
            "that ended by at_ns");
    if (a->kernels_cut.rank >= 0)
        tsa_json_add_num(cJSON_GetObjectItem(o, "per_kernel"), "steps_before", (double)a->kernels_cut.steps_before);
    add_cut(o, "nccl_plugin", a, &a->plugin_cut, TSC_COST_WHAT_NPROF,
            "proxy ops, proxy steps, kernel channels: proxy and link findings rest on the "
            "run before at_ns");
}

void tsa_records_cut_html(FILE *out, const tsa_analysis *a)
{
    if (a->kernels_cut.rank < 0 && a->plugin_cut.rank < 0)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    tsa_records_cut_print(m, a);
    if (fclose(m) == 0 && text) {
        fprintf(out, "<h2>Records thinned by the own-cost budget</h2>\n<pre>");
        tsa_html_escape(out, text);
        fprintf(out, "</pre>\n");
    }
    free(text);
}
