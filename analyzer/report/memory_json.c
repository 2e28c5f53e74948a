/* The report's `memory` object; docs/report.md lists its fields. */
#include <cjson/cJSON.h>
#include <math.h>

#include "util/json_int.h"
#include "memory_view.h"

static cJSON *rank_json(const tsa_mem_rank *m)
{
    cJSON *x = cJSON_CreateObject();
    if (!x)
        return NULL;
    cJSON_AddNumberToObject(x, "rank", m->rank);
    tsa_json_add_u64(x, "peak_reserved_bytes", m->peak_bytes);
    tsa_json_add_i64(x, "peak_ns", m->peak_ns);
    if (m->peak_step >= 0)
        cJSON_AddNumberToObject(x, "peak_step", m->peak_step);
    else
        cJSON_AddNullToObject(x, "peak_step");
    if (m->capacity_bytes > 0) {
        tsa_json_add_u64(x, "capacity_bytes", m->capacity_bytes);
        tsa_json_add_i64(x, "headroom_bytes", m->headroom_bytes);
    } else {
        cJSON_AddNullToObject(x, "capacity_bytes");
        cJSON_AddNullToObject(x, "headroom_bytes");
    }
    tsa_json_add_num(x, "peak_share", m->peak_share);
    if (m->nccl_peak_bytes) /* only where NCCL mapped its own buffers (format 1.2) */
        tsa_json_add_u64(x, "nccl_buffers_bytes", m->nccl_peak_bytes);
    cJSON_AddNumberToObject(x, "steps", (double)m->steps);
    tsa_json_add_u64(x, "first_step_reserved_bytes", m->first_step_bytes);
    tsa_json_add_u64(x, "last_step_reserved_bytes", m->last_step_bytes);
    tsa_json_add_i64(x, "growth_bytes_per_step", m->growth_per_step);
    tsa_json_add_num(x, "growth_share", m->growth_share);
    if (!m->allocs_seen) { /* profiler totals only: no allocation was seen */
        static const char *const unknown[] = {"allocs_per_step", "churn_bytes_per_step",
                                              "churn_share", "allocs", "frees", "alloc_bytes"};
        for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
            cJSON_AddNullToObject(x, unknown[i]);
        return x;
    }
    tsa_json_add_num(x, "allocs_per_step", m->steps ? m->allocs_per_step : NAN);
    tsa_json_add_u64(x, "churn_bytes_per_step", m->churn_bytes_per_step);
    tsa_json_add_num(x, "churn_share", m->churn_share);
    tsa_json_add_u64(x, "allocs", m->allocs);
    tsa_json_add_u64(x, "frees", m->frees);
    tsa_json_add_u64(x, "alloc_bytes", m->alloc_bytes);
    return x;
}

void *tsa_memory_json(const tsa_memory *m)
{
    if (!m || m->n_ranks == 0)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "peak_rank", m->peak_rank);
    tsa_json_add_u64(o, "peak_reserved_bytes", m->peak_bytes);
    cJSON *arr = cJSON_AddArrayToObject(o, "per_rank");
    for (size_t i = 0; arr && i < m->n_ranks; i++) {
        cJSON *x = rank_json(&m->ranks[i]);
        if (x)
            cJSON_AddItemToArray(arr, x);
    }
    return o;
}
