/* Saturating sums for totals over many records or ranks: garbage times in a
 * damaged dump must not overflow (undefined behaviour) anywhere.  Real
 * totals are far below the limit, where these are plain additions. */
#ifndef TSA_SAT_MATH_H
#define TSA_SAT_MATH_H

#include <stdint.h>

static inline int64_t tsa_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#define TSA_SAT_ACC(acc, x) ((acc) = tsa_sat_add((acc), (x)))

#endif
