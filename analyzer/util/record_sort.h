/* Putting an array of model records into start-time order (stable), for
 * tsa_rank_finish.  Every record type of model.h starts with int64
 * start_ns, which is the key. */
#ifndef TSA_RECORD_SORT_H
#define TSA_RECORD_SORT_H

#include <stddef.h>

/* Sorts the n records of elem bytes at *arr by start_ns, ties in input
 * order.  When they were already in order nothing moves and *perm_out is
 * NULL.  Nearly sorted records are moved in place (*arr and *cap kept);
 * others are gathered into a new exact-size array (*arr replaced, *cap set
 * to n).  When perm_out is non-NULL and anything moved, *perm_out receives
 * the permutation old index -> new index (free it).  Returns 0, or -1 when
 * out of memory (records may then have moved: links into them are stale). */
int tsa_sort_records(void **arr, size_t *cap, size_t n, size_t elem, size_t **perm_out);

#endif
