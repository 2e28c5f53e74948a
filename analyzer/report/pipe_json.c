/* The "pipeline" key of the JSON report (docs/whatif.md lists it). */
#include <cjson/cJSON.h>

#include "pipe_render.h"

static double sec(int64_t ns) { return (double)ns / 1e9; }

static cJSON *savings(const int64_t *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(sec(v[i])));
    return a;
}

void tsa_pipe_add_json(void *root_v, const tsa_pipe_result *r)
{
    cJSON *root = root_v;
    if (!r || !r->pipeline) {
        cJSON_AddNullToObject(root, "pipeline");
        return;
    }
    cJSON *p = cJSON_AddObjectToObject(root, "pipeline");
    if (!p)
        return;
    cJSON_AddNumberToObject(p, "stages", (double)r->n_stages);
    cJSON_AddNumberToObject(p, "dp_ranks", (double)r->n_dp);
    cJSON_AddNumberToObject(p, "steps", (double)r->steps);
    cJSON_AddNumberToObject(p, "operations", (double)r->nodes);
    cJSON_AddNumberToObject(p, "links", (double)r->hubs);
    cJSON_AddNumberToObject(p, "cut_links", (double)r->cut_links);
    cJSON_AddNumberToObject(p, "replay_error_s", sec(r->replay_error_ns));
    cJSON_AddNumberToObject(p, "recorded_s", sec(r->recorded_ns));
    cJSON_AddNumberToObject(p, "actual_s", sec(r->actual_ns));
    cJSON_AddNumberToObject(p, "ideal_s", sec(r->ideal_ns));
    cJSON_AddNumberToObject(p, "typical_s", sec(r->typical_ns));
    cJSON_AddNumberToObject(p, "slowdown", r->slowdown);
    const char *id = tsa_pipe_class_id(r->cls);
    if (id)
        cJSON_AddStringToObject(p, "class", id);
    else
        cJSON_AddNullToObject(p, "class");
    cJSON_AddNumberToObject(p, "culprit", r->culprit);
    cJSON_AddNumberToObject(p, "worst_stage", r->worst_stage);
    cJSON_AddNumberToObject(p, "explained", r->explained);
    cJSON *w = cJSON_AddArrayToObject(p, "workers");
    for (size_t i = 0; w && i < r->n_ranks; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", r->global_rank[i]);
        cJSON_AddNumberToObject(o, "stage", r->stage_of[i]);
        cJSON_AddNumberToObject(o, "dp", r->dp_of[i]);
        cJSON_AddNumberToObject(o, "saved_s", sec(r->saved_worker_ns[i]));
        cJSON_AddItemToArray(w, o);
    }
    cJSON_AddItemToObject(p, "stage_saved_s", savings(r->saved_stage_ns, r->n_stages));
    cJSON_AddItemToObject(p, "dp_saved_s", savings(r->saved_dp_ns, r->n_dp));
    cJSON *k = cJSON_AddObjectToObject(p, "kind_saved_s");
    for (int i = 0; k && i < TSA_OK_COUNT; i++)
        if (r->kind_seen[i])
            cJSON_AddNumberToObject(k, tsa_pipe_okind_name(i), sec(r->saved_kind_ns[i]));
    cJSON *st = cJSON_AddArrayToObject(p, "step_s");
    for (size_t s = 0; st && s < r->steps; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "step", r->step_number[s]);
        cJSON_AddNumberToObject(o, "actual", sec(r->step_actual_ns[s]));
        cJSON_AddNumberToObject(o, "ideal", sec(r->step_ideal_ns[s]));
        cJSON_AddNumberToObject(o, "typical", sec(r->step_typical_ns[s]));
        cJSON_AddItemToArray(st, o);
    }
    cJSON *cp = cJSON_AddObjectToObject(p, "critical_path");
    if (cp) {
        size_t s = r->slowest_step;
        cJSON_AddNumberToObject(cp, "step", r->step_number[s]);
        cJSON *h = cJSON_AddArrayToObject(cp, "hops");
        for (size_t i = r->hop_first[s]; h && i < r->hop_first[s + 1]; i++) {
            const tsa_pipe_hop *x = &r->hops[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "rank", x->rank);
            cJSON_AddStringToObject(o, "op", tsa_pipe_okind_name(x->okind));
            cJSON_AddNumberToObject(o, "start_ns", (double)x->start_ns);
            cJSON_AddNumberToObject(o, "end_ns", (double)x->end_ns);
            cJSON_AddBoolToObject(o, "next_waited_for_start", x->via_start);
            cJSON_AddItemToArray(h, o);
        }
    }
}
