/* Exact integers in JSON.  cJSON keeps numbers as doubles, which round
 * nanosecond timestamps (about 1.7e18) to a multiple of 256: a report's
 * `*_ns` fields are written from the int64 itself instead. */
#ifndef TSA_JSON_INT_H
#define TSA_JSON_INT_H

#include <stdint.h>

/* Adds "key": v to a cJSON object (typed void * so this header needs no
 * cJSON).  Returns 0, -1 on OOM. */
int tsa_json_add_i64(void *cjson_object, const char *key, int64_t v);
int tsa_json_add_u64(void *cjson_object, const char *key, uint64_t v);

/* Adds "key": v, or "key": null when v is not finite (NaN: unknown). */
int tsa_json_add_num(void *cjson_object, const char *key, double v);

/* A cJSON number item written as the exact integer, for arrays. */
void *tsa_json_i64(int64_t v);

#endif
