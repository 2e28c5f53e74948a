#include "gpu_span.h"

#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "util/radix_sort.h"

static void widen(int64_t s, int64_t e, int64_t *lo, int64_t *hi)
{
    if (s < *lo)
        *lo = s;
    if (e > *hi)
        *hi = e;
}

int tsa_rank_gpu_span(const tsa_rank *r, int64_t *s, int64_t *e)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < r->n_kernels; i++)
        widen(r->kernels[i].start_ns, r->kernels[i].end_ns, &lo, &hi);
    for (size_t i = 0; i < r->n_copies; i++)
        widen(r->copies[i].start_ns, r->copies[i].end_ns, &lo, &hi);
    if (lo == INT64_MAX)
        return 0;
    *s = lo;
    *e = hi;
    return 1;
}

/* Start of the last ProfilerStep range, INT64_MIN when there are fewer
 * than two: with one step, cutting at its start would keep nothing. */
static int64_t last_step_start(const tsa_rank *r)
{
    int64_t last = INT64_MIN;
    size_t n = 0;
    for (size_t i = 0; i < r->n_ranges; i++)
        if (!strncmp(tsa_rank_string(r, r->ranges[i].name), "ProfilerStep#", 13)) {
            n++;
            if (r->ranges[i].start_ns > last)
                last = r->ranges[i].start_ns;
        }
    return n >= 2 ? last : INT64_MIN;
}

/* Start of the API call with this correlation id, INT64_MAX when unknown. */
static int64_t launch_time(const tsa_rank *r, const tsa_sort_key *by_corr, uint32_t corr)
{
    size_t lo = 0, hi = r->n_apis;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_corr[mid].key < (int64_t)corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (corr && lo < r->n_apis && by_corr[lo].key == (int64_t)corr)
        return r->apis[by_corr[lo].idx].start_ns;
    return INT64_MAX;
}

int64_t tsa_rank_hta_kept(const tsa_rank *r, uint8_t *keep_kernel, uint8_t *keep_copy)
{
    int64_t cut = last_step_start(r);
    if (cut == INT64_MIN) {
        memset(keep_kernel, 1, r->n_kernels);
        memset(keep_copy, 1, r->n_copies);
        return (int64_t)(r->n_kernels + r->n_copies);
    }
    tsa_sort_key *by_corr = malloc((r->n_apis ? r->n_apis : 1) * sizeof *by_corr);
    if (!by_corr)
        return -1;
    for (size_t i = 0; i < r->n_apis; i++) {
        by_corr[i].key = r->apis[i].correlation;
        by_corr[i].idx = i;
    }
    if (tsa_sort_keys(by_corr, r->n_apis)) {
        free(by_corr);
        return -1;
    }
    int64_t n = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        n += keep_kernel[i] = launch_time(r, by_corr, r->kernels[i].correlation) < cut;
    for (size_t i = 0; i < r->n_copies; i++)
        n += keep_copy[i] = launch_time(r, by_corr, r->copies[i].correlation) < cut;
    free(by_corr);
    return n;
}

int tsa_rank_hta_span(const tsa_rank *r, int64_t *s, int64_t *e)
{
    uint8_t *kk = malloc(r->n_kernels + 1), *kc = malloc(r->n_copies + 1);
    int64_t n = kk && kc ? tsa_rank_hta_kept(r, kk, kc) : -1;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; n > 0 && i < r->n_kernels; i++)
        if (kk[i])
            widen(r->kernels[i].start_ns, r->kernels[i].end_ns, &lo, &hi);
    for (size_t i = 0; n > 0 && i < r->n_copies; i++)
        if (kc[i])
            widen(r->copies[i].start_ns, r->copies[i].end_ns, &lo, &hi);
    free(kk);
    free(kc);
    if (n < 0)
        return -1;
    if (lo == INT64_MAX)
        return 0;
    *s = lo;
    *e = hi;
    return 1;
}
