#include "steps_toplevel.h"

#include <stdlib.h>
#include <string.h>

#include "load/rank_strings.h"

#define MIN_REPEATS 3
#define MIN_SHARE 0.5

int tsa_is_library_call(const char *n)
{
    static const char *const prefixes[] = {
        "aten::", "prim::", "c10d::", "_c10d_functional::", "c10d_functional::",
        "autograd::", "profiler::", "torch/", "<built-in", "cuda", "hip", "nccl:",
        "gloo:", "record_param_comms", "ProfilerStep#", "Optimizer.", NULL};
    for (const char *const *p = prefixes; *p; p++)
        if (!strncmp(n, *p, strlen(*p)))
            return 1;
    return 0;
}

static int cmp_by_name(const void *pa, const void *pb)
{
    const tsa_range *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

int tsa_top_call_starts(const tsa_rank *r, int64_t **starts, size_t *n_starts)
{
    *starts = NULL;
    *n_starts = 0;
    size_t n = r->n_top_calls;
    if (n < MIN_REPEATS)
        return 0;
    const tsa_range *c = r->top_calls;
    int64_t span = c[n - 1].end_ns - c[0].start_ns;
    for (size_t i = 0; i < n; i++)
        if (c[i].end_ns - c[0].start_ns > span)
            span = c[i].end_ns - c[0].start_ns;
    tsa_range *by = malloc(n * sizeof *by);
    if (!by)
        return -1;
    memcpy(by, c, n * sizeof *by);
    qsort(by, n, sizeof *by, cmp_by_name);
    /* the repeated call that takes the most time */
    size_t best_from = 0, best_n = 0;
    int64_t best_time = 0;
    for (size_t g = 0; g < n;) {
        size_t e = g;
        int64_t t = 0;
        while (e < n && by[e].name == by[g].name) {
            t += by[e].end_ns - by[e].start_ns;
            e++;
        }
        if (e - g >= MIN_REPEATS && (double)t >= MIN_SHARE * (double)span && t > best_time &&
            !tsa_is_library_call(tsa_rank_string(r, by[g].name))) {
            best_time = t;
            best_from = g;
            best_n = e - g;
        }
        g = e;
    }
    int rc = 0;
    if (best_n) {
        *starts = malloc(best_n * sizeof **starts);
        if (*starts) {
            for (size_t k = 0; k < best_n; k++)
                (*starts)[k] = by[best_from + k].start_ns;
            *n_starts = best_n;
        } else {
            rc = -1;
        }
    }
    free(by);
    return rc;
}
