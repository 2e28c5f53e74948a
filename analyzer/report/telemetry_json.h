/* Per-rank telemetry in the JSON report (telemetry_json.c). */
#ifndef TSA_TELEMETRY_JSON_H
#define TSA_TELEMETRY_JSON_H

#include <stddef.h>

#include "model/analysis.h"

/* Adds "cpu" and "gpu_telemetry" (objects or null) to the per_rank object
 * of rank index i (a cJSON object, typed void * to keep cJSON out). */
void tsa_telemetry_json(void *rank_object, const tsa_analysis *a, size_t i);

#endif
