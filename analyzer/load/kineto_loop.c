#include "kineto_loop.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

/* A call holding this share of its level's call time is a wrapper. */
#define WRAPPER_SHARE 0.95
#define MAX_DEPTH 64

int kineto_loop_add(kineto_loop *l, int64_t s, int64_t e, uint32_t tid, uint32_t name)
{
    if (l->full)
        return 0;
    if (l->n >= KINETO_LOOP_MAX) {
        l->full = 1;
        return 0;
    }
    tsa_range c = {s, e > s ? e : s, tid, name};
    return TSA_VEC_PUSH(l->calls, l->n, l->cap, c);
}

/* By thread, then start; of calls starting together the longer (the
 * caller) first. */
static int cmp_call(const void *pa, const void *pb)
{
    const tsa_range *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->end_ns < b->end_ns) - (a->end_ns > b->end_ns);
}

/* Time taken by the top-level calls of c[from, to): those not inside an
 * earlier one.  *longest: the index of the longest. */
static int64_t level_time(const tsa_range *c, size_t from, size_t to, size_t *longest)
{
    int64_t sum = 0, end = INT64_MIN, best = -1;
    for (size_t i = from; i < to; i++) {
        if (c[i].start_ns < end)
            continue;
        end = c[i].end_ns;
        int64_t d = c[i].end_ns - c[i].start_ns;
        sum += d;
        if (d > best) {
            best = d;
            *longest = i;
        }
    }
    return sum;
}

/* The end of the calls inside c[i] (sorted, same thread). */
static size_t children_end(const tsa_range *c, size_t i, size_t to)
{
    size_t j = i + 1;
    while (j < to && c[j].start_ns < c[i].end_ns)
        j++;
    return j;
}

int kineto_loop_finish(kineto_loop *l, tsa_rank *r, int64_t base_ns)
{
    tsa_range *c = l->calls;
    size_t n = l->n;
    int rc = 0;
    if (l->full || n == 0)
        goto out;
    qsort(c, n, sizeof *c, cmp_call);
    /* the main thread: most top-level call time */
    size_t from = 0, to = 0, best_from = 0, best_to = 0;
    int64_t best = -1;
    while (from < n) {
        to = from;
        while (to < n && c[to].tid == c[from].tid)
            to++;
        size_t longest = from;
        int64_t t = level_time(c, from, to, &longest);
        if (t > best) {
            best = t;
            best_from = from;
            best_to = to;
        }
        from = to;
    }
    from = best_from;
    to = best_to;
    for (int depth = 0; depth < MAX_DEPTH && from < to; depth++) {
        size_t longest = from;
        int64_t t = level_time(c, from, to, &longest);
        int64_t d = c[longest].end_ns - c[longest].start_ns;
        if (t <= 0 || (double)d < WRAPPER_SHARE * (double)t)
            break;
        to = children_end(c, longest, to);
        from = longest + 1;
    }
    int64_t end = INT64_MIN;
    for (size_t i = from; i < to && !rc; i++) {
        if (c[i].start_ns < end)
            continue;
        end = c[i].end_ns;
        tsa_range t = c[i];
        t.start_ns += base_ns;
        t.end_ns += base_ns;
        rc = TSA_VEC_PUSH(r->top_calls, r->n_top_calls, r->cap_top_calls, t);
    }
out:
    free(l->calls);
    memset(l, 0, sizeof *l);
    return rc;
}
