/* The memory part of the report: the text table and the JSON object. */
#ifndef TSA_MEMORY_VIEW_H
#define TSA_MEMORY_VIEW_H

#include <stdio.h>

#include "model/memory.h"

/* The report's `memory` object (cJSON *, typed void * so this header needs
 * no cJSON): a JSON null when no rank carries memory records. */
void *tsa_memory_json(const tsa_memory *m);

/* The text report's table (rows only; the caller prints the title). */
void tsa_memory_print(FILE *out, const tsa_memory *m);

#endif
