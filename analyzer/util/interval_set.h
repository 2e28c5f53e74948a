/* Exact interval arithmetic on sets of half-open [start, end) nanosecond
 * intervals.  A set is kept normalised: sorted, disjoint, non-adjacent,
 * non-empty intervals, so the length of a set is the plain sum and every
 * operation is one linear merge.  The overlap and budget passes are built
 * on these few operations so that their totals add up to the nanosecond. */
#ifndef TSA_INTERVAL_SET_H
#define TSA_INTERVAL_SET_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsa_iv {
    int64_t s, e;
} tsa_iv;

typedef struct tsa_ivset {
    tsa_iv *v;
    size_t n, cap;
} tsa_ivset;

void tsa_ivset_init(tsa_ivset *set);
void tsa_ivset_free(tsa_ivset *set);
void tsa_ivset_clear(tsa_ivset *set);

/* Append a raw interval (any order; empty ones ignored).  Call
 * tsa_ivset_normalize before using the set.  -1 on OOM. */
int tsa_ivset_push(tsa_ivset *set, int64_t s, int64_t e);
/* Sort and merge overlapping/adjacent intervals. */
void tsa_ivset_normalize(tsa_ivset *set);

int64_t tsa_ivset_length(const tsa_ivset *set);

/* out = a op b, for normalised a and b; out must not alias a or b.
 * Return 0, -1 on OOM. */
int tsa_ivset_union(const tsa_ivset *a, const tsa_ivset *b, tsa_ivset *out);
int tsa_ivset_intersect(const tsa_ivset *a, const tsa_ivset *b, tsa_ivset *out);
int tsa_ivset_subtract(const tsa_ivset *a, const tsa_ivset *b, tsa_ivset *out);

/* out = a (out must not alias a).  -1 on OOM. */
int tsa_ivset_copy(const tsa_ivset *a, tsa_ivset *out);

/* Length of a ∩ [s, e) without building it. */
int64_t tsa_ivset_length_in(const tsa_ivset *a, int64_t s, int64_t e);
/* Start of the first part of a at or after t: t itself when t lies inside
 * a, INT64_MAX when nothing follows. */
int64_t tsa_ivset_next_start(const tsa_ivset *a, int64_t t);
/* Length of a ∩ b without building it. */
int64_t tsa_ivset_intersect_length(const tsa_ivset *a, const tsa_ivset *b);
/* Keep only the part inside [s, e), in place. */
void tsa_ivset_clip(tsa_ivset *set, int64_t s, int64_t e);

#endif
