/* Per-rank memory numbers over the analysed steps; see memory.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "tsc_format.h"
#include "load/memory_timeline.h"
#include "load/rank_view.h"

/* Running sums of one rank's walk through its steps. */
typedef struct step_acc {
    const tsa_rank *r;
    tsa_mem_rank *out;
    size_t cur;                  /* step the walk is in (or before) */
    uint64_t alloc_b, free_b;    /* device bytes allocated / freed in step cur */
    uint64_t allocs;             /* device allocations in step cur */
    uint64_t prev_end;           /* reserved at the end of the previous analysed step */
    size_t grew;                 /* analysed step-to-step changes that grew */
    size_t churn_steps;
    uint64_t churn_sum, allocs_sum;
} step_acc;

static void close_step(step_acc *s, uint64_t reserved)
{
    const tsa_step *st = &s->r->steps[s->cur];
    if (!st->warmup) {
        tsa_mem_rank *o = s->out;
        if (o->steps == 0)
            o->first_step_bytes = reserved;
        else if (reserved > s->prev_end)
            s->grew++;
        o->steps++;
        o->last_step_bytes = reserved;
        s->prev_end = reserved;
        uint64_t churn = s->alloc_b < s->free_b ? s->alloc_b : s->free_b;
        s->churn_steps += churn > 0;
        s->churn_sum = churn > UINT64_MAX - s->churn_sum ? UINT64_MAX : s->churn_sum + churn;
        s->allocs_sum += s->allocs;
    }
    s->alloc_b = s->free_b = s->allocs = 0;
    s->cur++;
}

/* Device-level traffic (what the caching allocator asks the driver for):
 * stream-ordered operations are served from their pool, not counted. */
static void count_in_step(step_acc *s, const tsa_mem_event *e)
{
    if (s->cur >= s->r->n_steps || e->t_ns < s->r->steps[s->cur].start_ns ||
        e->source == TSC_MEM_SRC_ASYNC || e->op == TSA_MEM_POOL)
        return;
    uint64_t *sum = e->op == TSA_MEM_ALLOC ? &s->alloc_b : &s->free_b;
    *sum = e->bytes > UINT64_MAX - *sum ? UINT64_MAX : *sum + e->bytes;
    s->allocs += e->op == TSA_MEM_ALLOC;
}

/* a - b of two byte counts as a signed number, saturated: a damaged dump
 * may hold sizes near 2^64. */
static int64_t signed_diff(uint64_t a, uint64_t b)
{
    if (a >= b)
        return a - b > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(a - b);
    return b - a > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(b - a);
}

static void finish(tsa_mem_rank *o, const step_acc *s, const tsa_rank *r, uint64_t at_info)
{
    if (o->steps >= 2) {
        o->growth_per_step =
            signed_diff(o->last_step_bytes, o->first_step_bytes) / (int64_t)(o->steps - 1);
        o->growth_share = (double)s->grew / (double)(o->steps - 1);
    }
    if (o->steps > 0) {
        o->allocs_per_step = (double)s->allocs_sum / (double)o->steps;
        o->churn_bytes_per_step = s->churn_sum / o->steps;
        o->churn_share = (double)s->churn_steps / (double)o->steps;
    }
    /* cuMemGetInfo's free memory excludes what this process held then. */
    if (r->mem_free_bytes > 0)
        o->capacity_bytes = at_info > UINT64_MAX - r->mem_free_bytes ? UINT64_MAX
                                                                       : r->mem_free_bytes + at_info;
    else
        o->capacity_bytes = r->mem_total_bytes;
    o->nccl_peak_bytes = r->mem_nccl_peak_bytes;
    if (o->capacity_bytes > 0) {
        uint64_t held = o->peak_bytes > UINT64_MAX - o->nccl_peak_bytes
                            ? UINT64_MAX
                            : o->peak_bytes + o->nccl_peak_bytes;
        o->headroom_bytes = signed_diff(o->capacity_bytes, held);
        o->peak_share = (double)o->peak_bytes / (double)o->capacity_bytes;
    }
}

int tsa_mem_rank_measure(tsa_rank *r, tsa_mem_rank *out)
{
    memset(out, 0, sizeof *out);
    out->rank = r->rank;
    out->peak_step = -1;
    out->growth_share = NAN;
    out->churn_share = NAN;
    out->peak_share = NAN;
    if (r->n_mem == 0)
        return -1;
    tsa_mem_sort(r->mem, r->n_mem);
    tsa_mem_walk w;
    tsa_mem_walk_init(&w, tsa_mem_has_pools(r->mem, r->n_mem));
    step_acc s = {.r = r, .out = out};
    uint64_t at_info = 0;
    int info_seen = r->mem_info_ns == 0;
    for (size_t i = 0; i < r->n_mem; i++) {
        const tsa_mem_event *e = &r->mem[i];
        uint64_t before = tsa_mem_walk_reserved(&w);
        /* A step ends before what happens at its end time. */
        while (s.cur < r->n_steps && r->steps[s.cur].end_ns <= e->t_ns)
            close_step(&s, before);
        if (!info_seen && e->t_ns >= r->mem_info_ns) {
            at_info = before;
            info_seen = 1;
        }
        count_in_step(&s, e);
        tsa_mem_walk_apply(&w, e);
        out->allocs_seen |= e->source != TSA_MEM_SRC_ALLOCATOR_TOTAL;
        out->allocs += e->op == TSA_MEM_ALLOC;
        out->frees += e->op == TSA_MEM_FREE;
        if (e->op == TSA_MEM_ALLOC)
            out->alloc_bytes = e->bytes > UINT64_MAX - out->alloc_bytes ? UINT64_MAX
                                                                       : out->alloc_bytes + e->bytes;
        uint64_t now = tsa_mem_walk_reserved(&w);
        if (now > out->peak_bytes) {
            out->peak_bytes = now;
            out->peak_ns = e->t_ns;
            out->peak_step = s.cur < r->n_steps && e->t_ns >= r->steps[s.cur].start_ns
                                 ? (int)s.cur : -1;
        }
    }
    uint64_t last = tsa_mem_walk_reserved(&w);
    while (s.cur < r->n_steps)
        close_step(&s, last);
    if (!info_seen)
        at_info = last;
    finish(out, &s, r, at_info);
    return 0;
}

int tsa_memory_measure(tsa_job *job, tsa_memory *out)
{
    memset(out, 0, sizeof *out);
    out->peak_rank = -1;
    size_t n = 0;
    for (size_t i = 0; i < job->n_ranks; i++)
        n += job->ranks[i].n_mem > 0;
    if (n == 0)
        return 0;
    out->ranks = calloc(n, sizeof *out->ranks);
    if (!out->ranks)
        return -1;
    for (size_t i = 0; i < job->n_ranks; i++) {
        /* Only ranks with records take one of the n slots. */
        if (job->ranks[i].n_mem == 0)
            continue;
        tsa_mem_rank *m = &out->ranks[out->n_ranks];
        tsa_rank_view v;
        /* the view shares r's memory records: sorted there */
        tsa_rank *r = tsa_view_open_mut(&job->ranks[i], TSA_VIEW_STEPS, &v);
        int skip = r ? tsa_mem_rank_measure(r, m) : -1;
        tsa_view_close(&v);
        if (!r)
            return -1;
        if (skip)
            continue;
        out->n_ranks++;
        if (out->peak_rank < 0 || m->peak_bytes > out->peak_bytes) {
            out->peak_rank = m->rank;
            out->peak_bytes = m->peak_bytes;
        }
    }
    return 0;
}

void tsa_memory_free(tsa_memory *m)
{
    free(m->ranks);
    memset(m, 0, sizeof *m);
    m->peak_rank = -1;
}
