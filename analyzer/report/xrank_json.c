/* JSON keys of the cross-rank pass; crossrank.h lists them. */
#include <cjson/cJSON.h>

#include "xrank_render.h"
#include "util/json_int.h"

static const char *source_key(tsa_xrank_step_source s)
{
    switch (s) {
    case TSA_XSTEPS_MODEL: return "model";
    case TSA_XSTEPS_DERIVED: return "derived";
    case TSA_XSTEPS_PER_COLLECTIVE: return "per_collective";
    default: return "none";
    }
}

static cJSON *int_array(const int32_t *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static cJSON *step_array(const uint32_t *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void add_host(cJSON *o, const char *key, const char *host)
{
    if (host)
        cJSON_AddStringToObject(o, key, host);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *straggler_json(const tsa_straggler *st)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "rank", st->rank);
    add_host(o, "host", st->host);
    cJSON_AddNumberToObject(o, "z", st->z);
    cJSON_AddNumberToObject(o, "slowdown", st->slowdown);
    tsa_json_add_i64(o, "wall_lost_ns", st->wall_lost_ns);
    tsa_json_add_i64(o, "whatif_saved_ns", st->whatif_saved_ns);
    tsa_json_add_i64(o, "whatif_step_saved_ns", st->whatif_step_saved_ns);
    cJSON_AddBoolToObject(o, "intermittent", st->intermittent);
    cJSON_AddItemToObject(o, "slow_steps", step_array(st->slow_steps, st->n_slow_steps));
    return o;
}

static cJSON *blame_json(const tsa_rank_blame *b)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "rank", b->rank);
    add_host(o, "host", b->host);
    cJSON_AddNumberToObject(o, "collectives", (double)b->collectives);
    cJSON_AddNumberToObject(o, "arrived_last", (double)b->arrived_last);
    cJSON_AddNumberToObject(o, "arrived_last_share", b->arrived_last_share);
    tsa_json_add_i64(o, "wait_ns", b->wait_ns);
    tsa_json_add_i64(o, "transfer_ns", b->transfer_ns);
    tsa_json_add_i64(o, "blame_ns", b->blame_ns);
    tsa_json_add_i64(o, "wall_lost_ns", b->wall_lost_ns);
    tsa_json_add_i64(o, "compute_median_ns", b->compute_median_ns);
    cJSON_AddNumberToObject(o, "compute_rel_median", b->compute_rel_median);
    cJSON_AddNumberToObject(o, "slowdown", b->slowdown);
    cJSON_AddNumberToObject(o, "steps", (double)b->steps);
    cJSON_AddNumberToObject(o, "steps_last", (double)b->steps_last);
    cJSON_AddNumberToObject(o, "z", b->z);
    cJSON_AddBoolToObject(o, "slow", b->slow);
    return o;
}

void tsa_xrank_add_json(void *cjson_root, const tsa_xrank_result *r)
{
    cJSON *root = cjson_root;
    if (!root || !r)
        return;

    if (r->straggler)
        cJSON_AddItemToObject(root, "straggler", straggler_json(r->straggler));
    else
        cJSON_AddNullToObject(root, "straggler");

    if (r->imbalance) {
        cJSON *o = cJSON_AddObjectToObject(root, "imbalance");
        if (o) {
            cJSON_AddItemToObject(o, "ranks", int_array(r->imbalanced_ranks, r->n_imbalanced));
            cJSON_AddNumberToObject(o, "slowdown", r->imbalance_slowdown);
            tsa_json_add_i64(o, "whatif_saved_ns", r->imbalance_saved_ns);
        }
    } else {
        cJSON_AddNullToObject(root, "imbalance");
    }

    if (r->slow_host) {
        cJSON *o = cJSON_AddObjectToObject(root, "slow_host");
        if (o) {
            cJSON_AddStringToObject(o, "host", r->slow_host);
            cJSON_AddItemToObject(o, "ranks", int_array(r->slow_host_ranks, r->n_slow_host_ranks));
            cJSON_AddNumberToObject(o, "slowdown", r->slow_host_slowdown);
            tsa_json_add_i64(o, "whatif_saved_ns", r->slow_host_saved_ns);
        }
    } else {
        cJSON_AddNullToObject(root, "slow_host");
    }

    cJSON *bursts = cJSON_AddArrayToObject(root, "intermittent");
    for (size_t i = 0; bursts && i < r->n_bursts; i++) {
        const tsa_xrank_burst *bu = &r->bursts[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddNumberToObject(o, "rank", bu->rank);
        add_host(o, "host", bu->host);
        cJSON_AddNumberToObject(o, "z", bu->z);
        tsa_json_add_i64(o, "whatif_saved_ns", bu->whatif_saved_ns);
        cJSON_AddItemToObject(o, "slow_steps", step_array(bu->slow_steps, bu->n_slow_steps));
        cJSON_AddItemToArray(bursts, o);
    }

    cJSON *clock = cJSON_AddObjectToObject(root, "clock");
    if (clock) {
        cJSON_AddNumberToObject(clock, "reference_rank", r->clock_reference_rank);
        tsa_json_add_i64(clock, "residual_ns", r->clock_residual_ns);
        cJSON_AddNumberToObject(clock, "samples", (double)r->clock_samples);
        cJSON_AddNumberToObject(clock, "unaligned", (double)r->n_unaligned);
        cJSON_AddBoolToObject(clock, "hosts_split", r->clock_hosts_split);
        cJSON *offs = cJSON_AddArrayToObject(clock, "offsets");
        for (size_t i = 0; offs && i < r->n_ranks; i++) {
            cJSON *o = cJSON_CreateObject();
            if (!o)
                break;
            cJSON_AddNumberToObject(o, "rank", r->ranks[i].rank);
            add_host(o, "host", r->ranks[i].host);
            tsa_json_add_i64(o, "offset_ns", r->ranks[i].clock_offset_ns);
            cJSON_AddBoolToObject(o, "aligned", r->ranks[i].clock_aligned);
            cJSON_AddItemToArray(offs, o);
        }
    }

    cJSON *ranks = cJSON_AddArrayToObject(root, "ranks_blame");
    for (size_t i = 0; ranks && i < r->n_ranks; i++)
        cJSON_AddItemToArray(ranks, blame_json(&r->ranks[i]));

    cJSON *x = cJSON_AddObjectToObject(root, "crossrank");
    if (x) {
        cJSON_AddNumberToObject(x, "instances", (double)r->instances);
        cJSON_AddNumberToObject(x, "steps", (double)r->steps);
        cJSON_AddStringToObject(x, "step_source", source_key(r->step_source));
        cJSON_AddNumberToObject(x, "noise", r->noise);
        tsa_json_add_i64(x, "job_wall_ns", r->job_wall_ns);
    }
}
