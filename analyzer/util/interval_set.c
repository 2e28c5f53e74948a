#include "interval_set.h"

#include <stdlib.h>
#include <string.h>

#include "record_sort.h"

void tsa_ivset_init(tsa_ivset *set)
{
    memset(set, 0, sizeof *set);
}

void tsa_ivset_free(tsa_ivset *set)
{
    free(set->v);
    memset(set, 0, sizeof *set);
}

void tsa_ivset_clear(tsa_ivset *set)
{
    set->n = 0;
}

static int reserve(tsa_ivset *set, size_t n)
{
    if (n <= set->cap)
        return 0;
    size_t cap = set->cap ? set->cap : 16;
    while (cap < n)
        cap *= 2;
    tsa_iv *v = realloc(set->v, cap * sizeof *v);
    if (!v)
        return -1;
    set->v = v;
    set->cap = cap;
    return 0;
}

int tsa_ivset_push(tsa_ivset *set, int64_t s, int64_t e)
{
    if (e <= s)
        return 0;
    if (reserve(set, set->n + 1))
        return -1;
    set->v[set->n].s = s;
    set->v[set->n].e = e;
    set->n++;
    return 0;
}

static int by_start(const void *pa, const void *pb)
{
    const tsa_iv *a = pa, *b = pb;
    return (a->s > b->s) - (a->s < b->s);
}

void tsa_ivset_normalize(tsa_ivset *set)
{
    if (set->n == 0)
        return;
    /* The merge below needs start order only (the union is the same
     * whatever the order of equal starts).  Most callers push in start
     * order, or in a few sorted runs (one per stream): the record sort
     * checks, fixes or merges those in linear time, where a comparison
     * sort took an eighth of a whole report.  Out of memory, the
     * comparison sort needs none. */
    if (tsa_sort_records((void **)&set->v, &set->cap, set->n, sizeof set->v[0], NULL) < 0)
        qsort(set->v, set->n, sizeof set->v[0], by_start);
    size_t w = 0;
    for (size_t i = 1; i < set->n; i++) {
        if (set->v[i].s <= set->v[w].e) {
            if (set->v[i].e > set->v[w].e)
                set->v[w].e = set->v[i].e;
        } else {
            set->v[++w] = set->v[i];
        }
    }
    set->n = w + 1;
}

int64_t tsa_ivset_length(const tsa_ivset *set)
{
    int64_t t = 0;
    for (size_t i = 0; i < set->n; i++)
        t += set->v[i].e - set->v[i].s;
    return t;
}

int tsa_ivset_union(const tsa_ivset *a, const tsa_ivset *b, tsa_ivset *out)
{
    out->n = 0;
    if (reserve(out, a->n + b->n))
        return -1;
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        tsa_iv next;
        if (j >= b->n || (i < a->n && a->v[i].s <= b->v[j].s))
            next = a->v[i++];
        else
            next = b->v[j++];
        if (out->n && next.s <= out->v[out->n - 1].e) {
            if (next.e > out->v[out->n - 1].e)
                out->v[out->n - 1].e = next.e;
        } else {
            out->v[out->n++] = next;
        }
    }
    return 0;
}

int tsa_ivset_copy(const tsa_ivset *a, tsa_ivset *out)
{
    out->n = 0;
    if (reserve(out, a->n))
        return -1;
    if (a->n)
        memcpy(out->v, a->v, a->n * sizeof a->v[0]);
    out->n = a->n;
    return 0;
}

int tsa_ivset_intersect(const tsa_ivset *a, const tsa_ivset *b, tsa_ivset *out)
{
    out->n = 0;
    if (reserve(out, a->n + b->n))
        return -1;
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
        int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
        if (s < e) {
            out->v[out->n].s = s;
            out->v[out->n].e = e;
            out->n++;
        }
        if (a->v[i].e < b->v[j].e)
            i++;
        else
            j++;
    }
    return 0;
}

int tsa_ivset_subtract(const tsa_ivset *a, const tsa_ivset *b, tsa_ivset *out)
{
    out->n = 0;
    if (reserve(out, a->n + b->n))
        return -1;
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        int64_t s = a->v[i].s, e = a->v[i].e;
        while (j < b->n && b->v[j].e <= s)
            j++;
        size_t k = j;
        while (k < b->n && b->v[k].s < e) {
            if (b->v[k].s > s) {
                out->v[out->n].s = s;
                out->v[out->n].e = b->v[k].s;
                out->n++;
            }
            if (b->v[k].e >= e) {
                s = e;
                break;
            }
            s = b->v[k].e;
            k++;
        }
        if (s < e) {
            out->v[out->n].s = s;
            out->v[out->n].e = e;
            out->n++;
        }
    }
    return 0;
}

/* First interval whose end is after t (binary search). */
static size_t first_ending_after(const tsa_ivset *a, int64_t t)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->v[mid].e <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t tsa_ivset_next_start(const tsa_ivset *a, int64_t t)
{
    size_t i = first_ending_after(a, t);
    if (i == a->n)
        return INT64_MAX;
    return a->v[i].s > t ? a->v[i].s : t;
}

int64_t tsa_ivset_length_in(const tsa_ivset *a, int64_t s, int64_t e)
{
    int64_t t = 0;
    for (size_t i = first_ending_after(a, s); i < a->n && a->v[i].s < e; i++) {
        int64_t lo = a->v[i].s > s ? a->v[i].s : s;
        int64_t hi = a->v[i].e < e ? a->v[i].e : e;
        if (lo < hi)
            t += hi - lo;
    }
    return t;
}

int64_t tsa_ivset_intersect_length(const tsa_ivset *a, const tsa_ivset *b)
{
    int64_t t = 0;
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
        int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
        if (s < e)
            t += e - s;
        if (a->v[i].e < b->v[j].e)
            i++;
        else
            j++;
    }
    return t;
}

void tsa_ivset_clip(tsa_ivset *set, int64_t s, int64_t e)
{
    size_t w = 0;
    for (size_t i = 0; i < set->n; i++) {
        int64_t lo = set->v[i].s > s ? set->v[i].s : s;
        int64_t hi = set->v[i].e < e ? set->v[i].e : e;
        if (lo < hi) {
            set->v[w].s = lo;
            set->v[w].e = hi;
            w++;
        }
    }
    set->n = w;
}
