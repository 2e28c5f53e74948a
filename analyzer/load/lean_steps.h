/* A lean rank's steps, compact (issue 27): a job of 10,000 ranks x 1,000
 * steps holds ten million of them, 1.2 GB as tsa_step rows of 120 bytes.
 * Each step is kept as differences (its start against the previous
 * step's end, its end against its start, its calls against the previous
 * step's) and its sums as varints: about 20 to 35 bytes, exact.  Read one
 * rank at a time (tsa_rank_view, rank_view.h). */
#ifndef TSA_LEAN_STEPS_H
#define TSA_LEAN_STEPS_H

#include <stddef.h>

#include "model/model.h"
#include "util/varint.h"

typedef struct tsa_lean_steps {
    size_t n;
    tsa_bytes data;
} tsa_lean_steps;

/* steps[0..n) compact; NULL when out of memory. */
tsa_lean_steps *tsa_lean_steps_encode(const tsa_step *steps, size_t n);
/* Every step into out[0..ls->n); 0, or -1 on damaged bytes. */
int tsa_lean_steps_decode(const tsa_lean_steps *ls, tsa_step *out);
void tsa_lean_steps_free(tsa_lean_steps *ls);
size_t tsa_lean_steps_bytes(const tsa_lean_steps *ls);

#endif
