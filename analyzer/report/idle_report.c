/* The GPU idle time by host activity (idle_cause.h) in the text report and
 * in --json. */
#include "idle_report.h"

#include <cjson/cJSON.h>

#include "util/fmt_duration.h"
#include "passes/idle_cause.h"
#include "util/json_int.h"

int tsa_line_measured(const tsa_analysis *a, tsa_budget_line l)
{
    return tsa_budget_line_measured(&a->budget, l, a->gpu) ||
           (l == TSA_BL_DATA_STALL && a->host_data);
}

static int64_t idle_total(const tsa_analysis *a)
{
    int64_t t = 0;
    for (int c = 0; c < TSA_IDLE_COUNT; c++)
        t += a->idle_ns[c];
    return t;
}

void tsa_idle_print(FILE *out, const tsa_analysis *a)
{
    int64_t total = idle_total(a);
    double per = a->n_ranks ? (double)a->n_ranks : 1;
    double w = (double)a->budget.wall_ns;
    char t[32];
    if (!a->gpu) {
        if (a->host_data)
            fprintf(out, "  host records: the loop waited for its DataLoader %s per rank, "
                         "%.1f%% of the window\n",
                    tsa_fmt_duration(t, sizeof t, (double)a->idle_ns[TSA_IDLE_DATA_LOADER] / per),
                    w > 0 ? 100 * (double)a->idle_ns[TSA_IDLE_DATA_LOADER] / w : 0);
        return;
    }
    if (!total)
        return;
    fprintf(out, "  GPU idle by what the host was doing (per rank):\n");
    for (int c = 0; c < TSA_IDLE_COUNT; c++) {
        if (!a->idle_ns[c])
            continue;
        fprintf(out, "    %-56s %10s %6.1f%%\n", tsa_idle_cause_label((tsa_idle_cause)c),
                tsa_fmt_duration(t, sizeof t, (double)a->idle_ns[c] / per),
                w > 0 ? 100 * (double)a->idle_ns[c] / w : 0);
    }
    if (!a->host_records)
        fprintf(out, "    (the trace holds no CPU operator records: idle time outside launch "
                     "calls cannot be explained)\n");
}

void tsa_idle_add_json(cJSON *root, const tsa_analysis *a)
{
    cJSON *o = cJSON_AddObjectToObject(root, "idle_causes");
    for (int c = 0; c < TSA_IDLE_COUNT; c++)
        tsa_json_add_i64(o, tsa_idle_cause_key((tsa_idle_cause)c), a->idle_ns[c]);
    cJSON_AddBoolToObject(o, "host_records", a->host_records);
    /* a host-only input's data stall measured from its DataLoader spans */
    cJSON *lines = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "budget"), "lines");
    cJSON *data = cJSON_GetArrayItem(lines, TSA_BL_DATA_STALL);
    if (data && a->host_data)
        cJSON_ReplaceItemInObject(data, "measured", cJSON_CreateBool(1));
}
