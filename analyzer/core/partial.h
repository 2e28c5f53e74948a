/* Inputs cut short: a torch.profiler trace truncated mid-file, a dump with
 * no END chunk.  Their GPU records stop at the cut while the host's step
 * ranges may go on, so the steps after the last GPU record would read as
 * GPU idle ("data stall 100%").  They are left out, and the report says
 * what is missing. */
#ifndef TSA_PARTIAL_H
#define TSA_PARTIAL_H

#include <stddef.h>

#include "model.h"

/* When r's input was cut short (a load problem names its file and it did
 * not end cleanly), drop its steps that end after its last GPU record and
 * append a sentence to note (NUL-terminated, capacity cap) naming the
 * rank, the problem and what is missing.  Returns the steps dropped. */
size_t tsa_trim_cut_rank(const tsa_job *job, tsa_rank *r, char *note, size_t cap);

#endif
