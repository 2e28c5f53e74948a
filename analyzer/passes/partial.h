/* Inputs cut short: a torch.profiler trace truncated mid-file, a dump with
 * no END chunk.  Their GPU records stop at the cut while the host's step
 * ranges may go on, so the steps after the last GPU record would read as
 * GPU idle ("data stall 100%").  They are left out, and the report says
 * what is missing. */
#ifndef TSA_PARTIAL_H
#define TSA_PARTIAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/model.h"

/* When r's input was cut short (a load problem names its file and it did
 * not end cleanly), drop its steps that end after its last GPU record and
 * append a sentence to note (NUL-terminated, capacity cap) naming the
 * file, the problem and what is missing, not the rank: a trace's rank
 * number may be chosen after this runs (the job-level pass names it).  Returns the steps dropped
 * (0 also when the rank was cut before any GPU record), -1 when r's input
 * was not cut short. */
ssize_t tsa_trim_cut_rank(const tsa_job *job, tsa_rank *r, char *note, size_t cap);

/* When the ranks declare a world size larger than the ranks loaded (one
 * trace of a multi-GPU job), append a sentence saying so to note: the
 * exposed communication cannot be split into waiting for peers and
 * transfer, and no straggler can be named, without the others. */
void tsa_note_missing_ranks(const tsa_job *job, char *note, size_t cap);

/* The world size the ranks declare when it is larger than the ranks loaded
 * and there is communication, else 0. */
int32_t tsa_missing_ranks_world(const tsa_job *job);

/* Appends a sentence to note ("; " between sentences), as far as it fits. */
void tsa_note_append(char *note, size_t cap, const char *text);

#endif
