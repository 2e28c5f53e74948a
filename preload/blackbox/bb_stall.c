/* Data stall of summarized steps: see bb_stall.h.
 *
 * For step i: c = the start of its first host-to-device copy; the stall is
 * c - max(the step's start, the latest end of GPU work that started
 * before c), or 0.  GPU work that started before c is that of the earlier
 * steps and that of step i starting before c, so two passes over the
 * records suffice: the first finds each step's c, the second each step's
 * latest end before its c and its latest end overall. */
#include "bb_stall.h"

#include <string.h>

#define MAX_BATCH 1024

typedef struct stall_ctx {
    const bb_steps *t;
    const tsc_step_summary *s;
    size_t n;
    uint64_t prev_start;
    uint64_t first_copy[MAX_BATCH];      /* c per step, UINT64_MAX none */
    uint32_t copies[MAX_BATCH];
    uint64_t end_before[MAX_BATCH + 1];  /* [0]: the previous step; [i+1]: step i */
    uint64_t end_all[MAX_BATCH + 1];
} stall_ctx;

/* The step (0-based in the batch) an event that started at ns is in, -1
 * for the step before the batch, -2 for none. */
static long step_in_batch(const stall_ctx *c, uint64_t ns)
{
    if (ns <= c->prev_start || ns > c->s[c->n - 1].end_ns)
        return -2;
    if (ns <= c->s[0].start_ns)
        return -1;
    size_t lo = 0, hi = c->n; /* the last step whose start is before ns */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->s[mid].start_ns < ns)
            lo = mid;
        else
            hi = mid;
    }
    return (long)lo;
}

static int is_gpu(uint8_t kind)
{
    return kind == TSC_EV_KERNEL || kind == TSC_EV_KERNEL_LAUNCH || kind == TSC_EV_MEMCPY ||
           kind == TSC_EV_MEMSET;
}

static void find_copies(void *ctx, uint32_t tid, const tsc_event *e)
{
    (void)tid;
    stall_ctx *c = ctx;
    long i = e->kind == TSC_EV_MEMCPY ? step_in_batch(c, e->start_ns) : -2;
    if (i < 0 || bb_steps_copy_dir(c->t, e->desc) != TSC_COPY_H2D)
        return;
    c->copies[i]++;
    if (e->start_ns < c->first_copy[i])
        c->first_copy[i] = e->start_ns;
}

static void find_ends(void *ctx, uint32_t tid, const tsc_event *e)
{
    (void)tid;
    stall_ctx *c = ctx;
    long i = is_gpu(e->kind) ? step_in_batch(c, e->start_ns) : -2;
    if (i < -1)
        return;
    uint64_t end = e->kind == TSC_EV_KERNEL_LAUNCH ? e->start_ns + TSC_LO32(e->end_ns)
                                                   : e->end_ns;
    size_t k = (size_t)(i + 1);
    if (end > c->end_all[k])
        c->end_all[k] = end;
    if ((i < 0 || e->start_ns < c->first_copy[i]) && end > c->end_before[k])
        c->end_before[k] = end;
}

void bb_stall_fill(const bb_store *store, const bb_steps *t, const tsc_step_summary *s,
                   bb_step_extra *x, size_t n, uint64_t prev_start)
{
    static stall_ctx c; /* writer thread only; 28 KiB off the stack */
    if (!t->gpu_copies)
        return; /* no GPU copies captured: no figure */
    for (size_t done = 0; done < n;) {
        size_t m = n - done < MAX_BATCH ? n - done : MAX_BATCH;
        memset(&c, 0, sizeof c);
        c.t = t;
        c.s = s + done;
        c.n = m;
        c.prev_start = done ? s[done - 1].start_ns : prev_start;
        for (size_t i = 0; i < m; i++)
            c.first_copy[i] = UINT64_MAX;
        bb_store_visit(store, c.prev_start, s[done + m - 1].end_ns, find_copies, &c);
        bb_store_visit(store, c.prev_start, s[done + m - 1].end_ns, find_ends, &c);
        uint64_t earlier = c.end_all[0]; /* latest end of the steps before i */
        for (size_t i = 0; i < m; i++) {
            bb_step_extra *xi = &x[done + i];
            uint64_t copy = c.first_copy[i], from = c.end_before[i + 1];
            from = earlier > from ? earlier : from;
            from = c.s[i].start_ns > from ? c.s[i].start_ns : from;
            earlier = c.end_all[i + 1] > earlier ? c.end_all[i + 1] : earlier;
            if (c.s[i].step < 2) /* like its other sums: steps 0 and 1 carry none */
                continue;
            xi->h2d_copies = c.copies[i];
            xi->data_stall_ns = copy != UINT64_MAX && copy > from ? copy - from : 0;
        }
        done += m;
    }
}
