#include "json_int.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

int tsa_json_add_i64(void *o, const char *key, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_AddRawToObject((cJSON *)o, key, buf) ? 0 : -1;
}

int tsa_json_add_u64(void *o, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_AddRawToObject((cJSON *)o, key, buf) ? 0 : -1;
}

void *tsa_json_i64(int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_CreateRaw(buf);
}

int tsa_json_add_num(void *o, const char *key, double v)
{
    cJSON *x = isfinite(v) ? cJSON_AddNumberToObject((cJSON *)o, key, v)
                           : cJSON_AddNullToObject((cJSON *)o, key);
    return x ? 0 : -1;
}
