/* See launch_join.h. */
#include "launch_join.h"

#include <stdlib.h>

static int by_thread_then_start(const void *pa, const void *pb)
{
    const tsa_call_span *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The last span of `tid` starting at or before t, or NULL.  Calls of one
 * thread do not overlap, so it is the only one that can hold t. */
static const tsa_call_span *span_before(const tsa_call_span *s, size_t n, uint32_t tid,
                                        int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].tid < tid || (s[mid].tid == tid && s[mid].start_ns <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && s[lo - 1].tid == tid ? &s[lo - 1] : NULL;
}

int tsa_join_launches(tsa_call_span *spans, size_t n_spans, const tsa_launch_at *launches,
                      size_t n_launches, int (*emit)(void *ctx, uint64_t ext, uint32_t corr),
                      void *ctx)
{
    if (n_spans == 0 || n_launches == 0)
        return 0;
    qsort(spans, n_spans, sizeof *spans, by_thread_then_start);
    for (size_t i = 0; i < n_launches; i++) {
        const tsa_launch_at *l = &launches[i];
        const tsa_call_span *s = span_before(spans, n_spans, l->tid, l->t_ns);
        if (s && l->t_ns <= s->end_ns && emit(ctx, s->external_id, l->correlation))
            return -1;
    }
    return 0;
}

/* Room for one more element of `size` bytes: 0, or -1 without memory. */
static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    void *p = realloc(*arr, c * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

int tsa_launch_push(tsa_launch_at **arr, size_t *n, size_t *cap, tsa_launch_at v)
{
    if (grow((void **)arr, *n, cap, sizeof v))
        return -1;
    (*arr)[(*n)++] = v;
    return 0;
}

int tsa_node_push(tsa_graph_node **arr, size_t *n, size_t *cap, tsa_graph_node v)
{
    if (grow((void **)arr, *n, cap, sizeof v))
        return -1;
    (*arr)[(*n)++] = v;
    return 0;
}

int tsa_replay_push(tsa_replay **arr, size_t *n, size_t *cap, tsa_replay v)
{
    if (grow((void **)arr, *n, cap, sizeof v))
        return -1;
    (*arr)[(*n)++] = v;
    return 0;
}

static int by_node(const void *pa, const void *pb)
{
    const tsa_graph_node *a = pa, *b = pb;
    return (a->node > b->node) - (a->node < b->node);
}

int tsa_join_replays(tsa_graph_node *nodes, size_t n_nodes, const tsa_replay *replays,
                     size_t n_replays, int (*emit)(void *ctx, const tsa_replay *r, uint64_t ext),
                     void *ctx)
{
    if (n_nodes == 0 || n_replays == 0)
        return 0;
    qsort(nodes, n_nodes, sizeof *nodes, by_node);
    for (size_t i = 0; i < n_replays; i++) {
        size_t lo = 0, hi = n_nodes;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (nodes[mid].node < replays[i].node)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n_nodes && nodes[lo].node == replays[i].node && nodes[lo].external_id &&
            emit(ctx, &replays[i], nodes[lo].external_id))
            return -1;
    }
    return 0;
}
