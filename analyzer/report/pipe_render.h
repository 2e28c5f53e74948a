/* The pipeline what-if (whatif/whatif.h) in the report: the terminal
 * section and the "pipeline" JSON key. */
#ifndef TSA_PIPE_RENDER_H
#define TSA_PIPE_RENDER_H

#include <stdio.h>

#include "whatif/whatif.h"

void tsa_pipe_print(FILE *out, const tsa_pipe_result *r);
/* Adds "pipeline": {...} to a report's JSON object (a cJSON *). */
void tsa_pipe_add_json(void *cjson_root, const tsa_pipe_result *r);

#endif
