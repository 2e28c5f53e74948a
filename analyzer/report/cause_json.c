/* The "causes" JSON key; cause_render.h lists its fields. */
#include <cjson/cJSON.h>

#include "cause_render.h"
#include "reader/utf8_clean.h"
#include "util/json_int.h"

static cJSON *cause_json(const tsa_cause *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", tsa_cause_kind_name(c->kind));
    tsa_json_add_i64(o, "explained_ns", c->explained_ns);
    tsa_json_add_num(o, "share", c->share);
    cJSON_AddStringToObject(o, "metric", c->metric);
    tsa_json_add_num(o, "own", c->own);
    tsa_json_add_num(o, "peers", c->peers);
    cJSON_AddStringToObject(o, "evidence", c->evidence);
    cJSON_AddStringToObject(o, "fix", c->fix);
    return o;
}

void tsa_cause_add_json(void *cjson_root, const tsa_cause_result *r)
{
    cJSON *arr = cJSON_AddArrayToObject(cjson_root, "causes");
    for (size_t i = 0; arr && i < r->n_blocks; i++) {
        const tsa_cause_block *b = &r->blocks[i];
        cJSON *o = cJSON_CreateObject();
        if (b->rank >= 0)
            cJSON_AddNumberToObject(o, "rank", b->rank);
        else
            cJSON_AddNullToObject(o, "rank");
        tsr_json_add_text(o, "host", b->host);   /* from a dump: may not be UTF-8 */
        cJSON_AddStringToObject(o, "blamed_as", b->blamed_as);
        tsa_json_add_i64(o, "step_ns", b->step_ns);
        tsa_json_add_i64(o, "peer_step_ns", b->peer_step_ns);
        tsa_json_add_i64(o, "extra_ns", b->extra_ns);
        tsa_json_add_u64(o, "peers", b->peers);
        cJSON_AddBoolToObject(o, "unknown", b->n_causes == 0);
        cJSON_AddStringToObject(o, "checked", b->checked);
        cJSON *cs = cJSON_AddArrayToObject(o, "causes");
        for (size_t k = 0; cs && k < b->n_causes; k++)
            cJSON_AddItemToArray(cs, cause_json(&b->causes[k]));
        cJSON_AddItemToArray(arr, o);
    }
}
