/* The HTA-compatible view of the report (--window gpu-span). */
#ifndef TSA_HTA_RENDER_H
#define TSA_HTA_RENDER_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "model/analysis.h"

/* The view's text section and JSON object ("gpu_span_view"); both only
 * when the analysis ran with --window gpu-span. */
void tsa_hta_view_print(FILE *out, const tsa_analysis *a);
void tsa_hta_view_add_json(cJSON *root, const tsa_analysis *a);

#endif
