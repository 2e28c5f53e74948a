/* The memory pass: per-rank numbers over the analysed steps
 * (model/memory.h). */
#ifndef TSA_PASSES_MEMORY_H
#define TSA_PASSES_MEMORY_H

#include "model/memory.h"

/* Measure one rank (sorts r->mem in place).  0, or -1 when r has no
 * memory records (out is then zeroed). */
int tsa_mem_rank_measure(tsa_rank *r, tsa_mem_rank *out);

/* Every rank of the job; 0, or -1 when out of memory. */
int tsa_memory_measure(tsa_job *job, tsa_memory *out);
void tsa_memory_free(tsa_memory *m);

#endif
