/* Order statistics for the cross-rank pass.  Medians everywhere because a
 * few wild samples (a GC pause, a dropped record, a clock step) must not
 * move an estimate; quickselect keeps them linear on a million cells. */
#include <math.h>
#include <stddef.h>

#include "xr_internal.h"
#include "tsc_format.h"

#define SWAP(T, a, b) do { T t_ = (a); (a) = (b); (b) = t_; } while (0)

/* Hoare-style selection: afterwards v[k] holds the k-th smallest, smaller
 * ones before it, larger ones after. */
#define DEFINE_SELECT(NAME, T)                                              \
    static void NAME(T *v, size_t n, size_t k)                              \
    {                                                                       \
        ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;         \
        while (lo < hi) {                                                   \
            ptrdiff_t mid = lo + (hi - lo) / 2;                             \
            if (v[mid] < v[lo]) SWAP(T, v[mid], v[lo]);                     \
            if (v[hi] < v[lo]) SWAP(T, v[hi], v[lo]);                       \
            if (v[hi] < v[mid]) SWAP(T, v[hi], v[mid]);                     \
            T pivot = v[mid];                                               \
            ptrdiff_t i = lo, j = hi;                                       \
            while (i <= j) {                                                \
                while (v[i] < pivot) i++;                                   \
                while (pivot < v[j]) j--;                                   \
                if (i <= j) {                                               \
                    SWAP(T, v[i], v[j]);                                    \
                    i++;                                                    \
                    j--;                                                    \
                }                                                           \
            }                                                               \
            if (kk <= j) hi = j;                                            \
            else if (kk >= i) lo = i;                                       \
            else return;                                                    \
        }                                                                   \
    }

DEFINE_SELECT(select_i64, int64_t)
DEFINE_SELECT(select_d, double)

/* The largest of v[0..k), k >= 1: after selecting k, the lower middle of
 * an even count. */
#define DEFINE_MAX_BELOW(NAME, T)                                           \
    static T NAME(const T *v, size_t k)                                     \
    {                                                                       \
        T m = v[0];                                                         \
        for (size_t i = 1; i < k; i++)                                      \
            if (v[i] > m)                                                   \
                m = v[i];                                                   \
        return m;                                                           \
    }

DEFINE_MAX_BELOW(max_below_i64, int64_t)
DEFINE_MAX_BELOW(max_below_d, double)

int64_t xr_median_i64(int64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    size_t k = n / 2;
    select_i64(v, n, k);
    int64_t hi = v[k];
    if (n % 2)
        return hi;
    int64_t lo = max_below_i64(v, k);
    return lo + (hi - lo) / 2;
}

int64_t xr_kth_i64(int64_t *v, size_t n, size_t k)
{
    select_i64(v, n, k);
    return v[k];
}

double xr_median_d(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    size_t k = n / 2;
    select_d(v, n, k);
    double hi = v[k];
    if (n % 2)
        return hi;
    double lo = max_below_d(v, k);
    return 0.5 * (lo + hi);
}

/* Collectives after which every rank holds the same result at the same
 * moment: their end times are the clock anchor. */
int xr_is_symmetric_op(uint8_t op)
{
    return tsc_nccl_op_kind(op) == TSC_NCCL_KIND_SYMMETRIC;
}

/* Collectives where no rank can finish before the last one arrives.
 * Rooted ones (Broadcast, Reduce, Gather, Scatter) are left out: their
 * non-root ranks may leave early, so "waited for the last" is not true. */
int xr_is_blame_op(uint8_t op)
{
    return xr_is_symmetric_op(op) || tsc_nccl_op_kind(op) == TSC_NCCL_KIND_ALLTOALL;
}
