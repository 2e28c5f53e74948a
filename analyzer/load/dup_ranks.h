/* Duplicate ranks: several dumps of one run that claim the same rank
 * (a rank restarted into the same directory, a launcher that set RANK
 * wrongly, copies of a file).  Analysing them all would count one rank's
 * time several times and invent ranks that never ran.
 *
 * Policy: per claimed rank, keep the dump with the most records (the
 * most complete view of that rank); ties go to the later restart, then to
 * the file name that sorts first (so the choice does not depend on the
 * directory order).  The others are left out of the analysis and listed
 * in job->duplicates; the report turns them into a LOAD.DUPLICATE_RANK
 * finding that lowers its confidence.  Ranks that are unknown (-1) are
 * never merged. */
#ifndef TSA_DUP_RANKS_H
#define TSA_DUP_RANKS_H

#include "model/model.h"

/* Removes the duplicate ranks of job (freeing them) and records them in
 * job->duplicates.  Rank order is otherwise kept.  -1 on OOM. */
int tsa_job_drop_duplicate_ranks(tsa_job *job);

/* Records the rank holds (all kinds), the policy's measure of data. */
uint64_t tsa_rank_records(const tsa_rank *r);

#endif
