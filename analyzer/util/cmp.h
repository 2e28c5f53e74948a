/* qsort comparators and small string tests shared by every room. */
#ifndef TSA_CMP_H
#define TSA_CMP_H

#include <stdint.h>
#include <string.h>

static inline int tsa_cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

static inline int tsa_cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static inline int tsa_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* -1, 0 or 1 as a is below, equal to or above b: the steps of a
 * comparator over several fields. */
static inline int tsa_order_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }
static inline int tsa_order_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* For an array of char *. */
static inline int tsa_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline int tsa_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

#endif
