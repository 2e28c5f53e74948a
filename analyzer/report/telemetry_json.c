/* The per-rank `cpu` and `gpu_telemetry` objects of the JSON report
 * (docs/report.md): null where the rank has no samples in its window. */
#include <cjson/cJSON.h>
#include <math.h>

#include "model/analysis.h"
#include "load/rank_telemetry.h"
#include "telemetry_json.h"
#include "util/json_int.h"

static void cpu_json(cJSON *x, const tsa_rank *r, const tsa_rank_result *rr)
{
    tsa_cpu_window c;
    tsa_cpu_window_of(r, rr->window_start_ns, rr->window_end_ns, &c);
    if (!c.have) {
        cJSON_AddNullToObject(x, "cpu");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(x, "cpu");
    tsa_json_add_num(o, "busy_pct", c.busy_pct);
    tsa_json_add_num(o, "threads", c.threads);
    if (c.quota_cpus > 0)
        tsa_json_add_num(o, "quota_cpus", c.quota_cpus);
    else
        cJSON_AddNullToObject(o, "quota_cpus");
    tsa_json_add_num(o, "affinity_cpus", c.affinity_cpus);
    tsa_json_add_num(o, "online_cpus", c.online_cpus);
    tsa_json_add_num(o, "runnable_mean", c.runnable_mean);
    tsa_json_add_num(o, "workers", (double)c.workers);
    tsa_json_add_num(o, "worker_cpu_mean", c.worker_cpus_mean);
    tsa_json_add_num(o, "samples", (double)c.samples);
}

static void gpu_json(cJSON *x, const tsa_rank *r, const tsa_rank_result *rr)
{
    tsa_gpu_window g;
    tsa_gpu_window_of(r, rr->window_start_ns, rr->window_end_ns, &g);
    if (!g.have) {
        cJSON_AddNullToObject(x, "gpu_telemetry");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(x, "gpu_telemetry");
    tsa_json_add_num(o, "device", g.device);
    if (r->telemetry && r->telemetry->gpu_name[0])
        cJSON_AddStringToObject(o, "name", r->telemetry->gpu_name);
    tsa_json_add_num(o, "sm_clock_mhz_mean", g.sm_clock_mean);
    tsa_json_add_num(o, "sm_clock_mhz_min", g.sm_clock_min);
    tsa_json_add_num(o, "max_sm_clock_mhz", g.max_sm_clock);
    tsa_json_add_num(o, "throttled_share", g.throttled_share);
    tsa_json_add_num(o, "throttle_reasons", (double)g.reasons);
    tsa_json_add_num(o, "temp_c_max", g.temp_max);
    tsa_json_add_num(o, "power_w_max", g.power_max_w);
    if (g.util_mean >= 0)
        tsa_json_add_num(o, "util_pct_mean", g.util_mean);
    else
        cJSON_AddNullToObject(o, "util_pct_mean");
    tsa_json_add_num(o, "ecc_uncorrected_new", (double)g.ecc_new);
}

void tsa_telemetry_json(void *rank_object, const tsa_analysis *a, size_t i)
{
    if (i >= a->job->n_ranks)
        return;
    cpu_json(rank_object, &a->job->ranks[i], &a->ranks[i]);
    gpu_json(rank_object, &a->job->ranks[i], &a->ranks[i]);
}
