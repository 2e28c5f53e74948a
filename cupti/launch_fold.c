/* Folding kernels into their launch calls; see launch_fold.h.
 *
 * Two open-addressing tables keyed by correlation id (linear probing,
 * deletion by backward shift): calls, one per id, and kernels, where a
 * graph's kernels share their launch's id.  They start small and double
 * while half full, up to the cap given at creation: what waits is usually
 * a few thousand entries, but when CUPTI's worker falls behind the
 * application, kernels come tens of thousands of launches after their
 * calls.  A table full at its cap gives up what waited longest. */
#include "launch_fold.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define RECENT_SLOTS 64u     /* threads that launch, direct-mapped by tid */
#define GIVE_UP_AGE 2u       /* periods */
#define FIRST_LOG2 12u

/* Both tables' slots begin alike (used, then the correlation id at the
 * same offset), so one set of functions probes, removes and rehashes
 * either. */
typedef struct slot_head {
    uint8_t used;
    uint32_t corr;
} slot_head;

typedef struct call_slot {
    uint8_t used, has_call, has_ext, ext_out;
    uint32_t corr;
    uint8_t fresh, ext_kind;
    uint32_t folded;           /* kernels written with this call */
    uint32_t epoch;            /* period it arrived in */
    uint64_t ext;
    tsc_fold_call call;
} call_slot;

typedef struct kernel_slot {
    uint8_t used;
    uint32_t corr;             /* k.corr */
    uint32_t epoch;
    tsc_kernel_rec k;
} kernel_slot;

_Static_assert(offsetof(call_slot, corr) == offsetof(slot_head, corr) &&
                   offsetof(kernel_slot, corr) == offsetof(slot_head, corr),
               "slots begin with a slot_head");

typedef struct recent_call {
    uint8_t used;
    uint32_t tid, corr;
    uint64_t start, end;
} recent_call;

struct tsc_fold {
    call_slot *calls;
    size_t call_mask, n_calls;
    kernel_slot *kernels;
    size_t kernel_mask, n_kernels;
    unsigned max_log2;
    uint32_t *fresh;           /* ids of calls filled since the last settle */
    size_t n_fresh, cap_fresh;
    recent_call recent[RECENT_SLOTS];
    uint32_t epoch;
    int ext_redundant;
    tsc_fold_stats stats;
};

static size_t home(uint32_t corr, size_t mask)
{
    return (size_t)(corr * 2654435761u) & mask;
}

tsc_fold *tsc_fold_new(unsigned max_log2)
{
    tsc_fold *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    size_t n = (size_t)1 << FIRST_LOG2;
    f->max_log2 = max_log2 < FIRST_LOG2 ? FIRST_LOG2 : max_log2;
    f->calls = calloc(n, sizeof *f->calls);
    f->kernels = calloc(n, sizeof *f->kernels);
    f->call_mask = f->kernel_mask = n - 1;
    if (f->calls == NULL || f->kernels == NULL) {
        tsc_fold_free(f);
        return NULL;
    }
    return f;
}

void tsc_fold_free(tsc_fold *f)
{
    if (f == NULL)
        return;
    free(f->calls);
    free(f->kernels);
    free(f->fresh);
    free(f);
}

void tsc_fold_set_ext_redundant(tsc_fold *f, int redundant)
{
    f->ext_redundant = redundant;
}

/* ----------------------------------------------------------- tables */

/* A table: n slots of `size` bytes at base, mask = slots - 1. */
typedef struct table {
    unsigned char *base;
    size_t size, mask;
} table;

static table calls_of(tsc_fold *f)
{
    return (table){(unsigned char *)f->calls, sizeof *f->calls, f->call_mask};
}

static table kernels_of(tsc_fold *f)
{
    return (table){(unsigned char *)f->kernels, sizeof *f->kernels, f->kernel_mask};
}

static slot_head *slot_at(const table *t, size_t i)
{
    return (slot_head *)(t->base + i * t->size);
}

/* The slot holding corr, or NULL. */
static void *table_find(const table *t, uint32_t corr)
{
    for (size_t i = home(corr, t->mask);; i = (i + 1) & t->mask) {
        slot_head *s = slot_at(t, i);
        if (!s->used)
            return NULL;
        if (s->corr == corr)
            return s;
    }
}

/* The free slot where corr goes (the load bound guarantees one). */
static void *table_free_slot(const table *t, uint32_t corr)
{
    size_t i = home(corr, t->mask);
    while (slot_at(t, i)->used)
        i = (i + 1) & t->mask;
    return slot_at(t, i);
}

/* Backward-shift deletion: later entries of the run move up, so lookups
 * never need tombstones. */
static void table_remove(const table *t, void *slot)
{
    size_t i = (size_t)((unsigned char *)slot - t->base) / t->size;
    memset(slot, 0, t->size);
    for (size_t j = (i + 1) & t->mask; slot_at(t, j)->used; j = (j + 1) & t->mask) {
        size_t h = home(slot_at(t, j)->corr, t->mask);
        /* Move j into the hole when its home is not between the hole and j. */
        if (((j - h) & t->mask) >= ((j - i) & t->mask)) {
            memcpy(slot_at(t, i), slot_at(t, j), t->size);
            memset(slot_at(t, j), 0, t->size);
            i = j;
        }
    }
}

/* *t at twice its size, every entry moved; -1 (t unchanged) without
 * memory. */
static int table_grow(table *t)
{
    table n = {calloc((t->mask + 1) * 2, t->size), t->size, (t->mask + 1) * 2 - 1};
    if (n.base == NULL)
        return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        slot_head *s = slot_at(t, i);
        if (s->used)
            memcpy(table_free_slot(&n, s->corr), s, t->size);
    }
    free(t->base);
    *t = n;
    return 0;
}

static call_slot *call_find(tsc_fold *f, uint32_t corr)
{
    table t = calls_of(f);
    return table_find(&t, corr);
}

static kernel_slot *kernel_find(tsc_fold *f, uint32_t corr)
{
    table t = kernels_of(f);
    return table_find(&t, corr);
}

static void call_remove(tsc_fold *f, call_slot *c)
{
    table t = calls_of(f);
    table_remove(&t, c);
    f->n_calls--;
}

static void kernel_remove(tsc_fold *f, kernel_slot *k)
{
    table t = kernels_of(f);
    table_remove(&t, k);
    f->n_kernels--;
}

/* Fresh calls are found again by id at settle, so moving them is safe. */
static int call_grow(tsc_fold *f)
{
    table t = calls_of(f);
    if (table_grow(&t))
        return -1;
    f->calls = (call_slot *)t.base;
    f->call_mask = t.mask;
    return 0;
}

static int kernel_grow(tsc_fold *f)
{
    table t = kernels_of(f);
    if (table_grow(&t))
        return -1;
    f->kernels = (kernel_slot *)t.base;
    f->kernel_mask = t.mask;
    return 0;
}

/* --------------------------------------------------------- writing */

static void give_up_call(tsc_fold *f, call_slot *c, const tsc_fold_actions *a)
{
    if (c->has_call && c->folded == 0) {
        a->call_alone(a->ctx, &c->call);
        f->stats.calls_alone++;
    }
    /* Without a folded kernel the analyzer joins by this record. */
    if (c->has_ext && !c->ext_out && (c->folded == 0 || !f->ext_redundant))
        a->extcorr(a->ctx, c->corr, c->ext, c->ext_kind);
    call_remove(f, c);
}

static void give_up_kernel(tsc_fold *f, kernel_slot *k, const tsc_fold_actions *a)
{
    tsc_kernel_rec x = k->k; /* the slot is reused by the removal */
    a->kernel_alone(a->ctx, &x);
    f->stats.kernels_alone++;
    kernel_remove(f, k);
}

static void fold_one(tsc_fold *f, call_slot *c, const tsc_kernel_rec *k,
                     const tsc_fold_actions *a)
{
    a->both(a->ctx, k, &c->call);
    c->folded++;
    f->stats.folded++;
    if (c->has_ext && !c->ext_out && !f->ext_redundant) {
        a->extcorr(a->ctx, c->corr, c->ext, c->ext_kind);
        c->ext_out = 1;
    }
}

/* A folded call of one kernel has nothing left to wait for; a graph
 * launch waits for the rest of its graph's kernels. */
static void release_if_done(tsc_fold *f, call_slot *c)
{
    if (c->folded && !c->call.graph)
        call_remove(f, c);
}

/* Everything that arrived `min_age` periods ago or earlier is written
 * alone.  A removal's backward shift moves entries into the hole it left
 * (looked at again by the inner loop); only a run wrapping around the
 * table's end can move an already scanned entry, so a second pass makes
 * sure, and the scan repeats until a pass removes nothing. */
enum { CALLS = 1, KERNELS = 2 };

static void give_up_older_in(tsc_fold *f, int tables, uint32_t min_age,
                             const tsc_fold_actions *a)
{
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; (tables & CALLS) && i <= f->call_mask; i++) {
            call_slot *c = &f->calls[i];
            while (c->used && !c->fresh && f->epoch - c->epoch >= min_age) {
                give_up_call(f, c, a);
                again = 1;
            }
        }
        for (size_t i = 0; (tables & KERNELS) && i <= f->kernel_mask; i++) {
            kernel_slot *k = &f->kernels[i];
            while (k->used && f->epoch - k->epoch >= min_age) {
                give_up_kernel(f, k, a);
                again = 1;
            }
        }
    }
}

static void give_up_older(tsc_fold *f, uint32_t min_age, const tsc_fold_actions *a)
{
    give_up_older_in(f, CALLS | KERNELS, min_age, a);
}

/* The older half by correlation id (ids grow with time): entries below
 * the middle of the ids waiting.  Fresh calls stay. */
static void give_up_older_half(tsc_fold *f, const tsc_fold_actions *a)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i <= f->call_mask; i++)
        if (f->calls[i].used) {
            lo = f->calls[i].corr < lo ? f->calls[i].corr : lo;
            hi = f->calls[i].corr > hi ? f->calls[i].corr : hi;
        }
    for (size_t i = 0; i <= f->kernel_mask; i++)
        if (f->kernels[i].used) {
            lo = f->kernels[i].k.corr < lo ? f->kernels[i].k.corr : lo;
            hi = f->kernels[i].k.corr > hi ? f->kernels[i].k.corr : hi;
        }
    uint32_t mid = lo + (hi - lo) / 2;
    for (size_t i = 0; i <= f->call_mask; i++)
        while (f->calls[i].used && !f->calls[i].fresh && f->calls[i].corr <= mid)
            give_up_call(f, &f->calls[i], a);
    for (size_t i = 0; i <= f->kernel_mask; i++)
        while (f->kernels[i].used && f->kernels[i].k.corr <= mid)
            give_up_kernel(f, &f->kernels[i], a);
}

/* Room for one more entry: grow while allowed, else give up what waited
 * longest (all but this period's, then the older half by id, then all). */
static void make_room(tsc_fold *f, size_t n, size_t mask, int calls, const tsc_fold_actions *a)
{
    if ((n + 1) * 2 <= mask + 1)
        return;
    if (((mask + 1) >> f->max_log2) == 0 && (calls ? call_grow(f) : kernel_grow(f)) == 0)
        return;
    if ((n + 1) * 4 <= (mask + 1) * 3)
        return; /* at the cap, still under three quarters */
    uint64_t before = f->stats.calls_alone + f->stats.kernels_alone;
    give_up_older(f, 1, a);
    if ((calls ? f->n_calls : f->n_kernels) * 4 >= (mask + 1) * 3)
        give_up_older_half(f, a);
    if ((calls ? f->n_calls : f->n_kernels) * 4 >= (mask + 1) * 3) {
        /* Still full (all fresh calls): match what can be matched, then
         * give up the rest of this table. */
        tsc_fold_settle(f, a);
        give_up_older_in(f, calls ? CALLS : KERNELS, 0, a);
    }
    f->stats.pushed_out += f->stats.calls_alone + f->stats.kernels_alone - before;
}

/* ------------------------------------------------------------ input */

void tsc_fold_add_kernel(tsc_fold *f, const tsc_kernel_rec *k, const tsc_fold_actions *a)
{
    uint32_t corr = k->corr;
    call_slot *c = call_find(f, corr);
    if (c && c->has_call && !c->fresh) {
        fold_one(f, c, k, a);
        release_if_done(f, c);
        return;
    }
    make_room(f, f->n_kernels, f->kernel_mask, 0, a);
    table t = kernels_of(f);
    kernel_slot *slot = table_free_slot(&t, corr);
    *slot = (kernel_slot){.used = 1, .corr = corr, .epoch = f->epoch, .k = *k};
    f->n_kernels++;
}

static void widen(tsc_fold_call *into, const tsc_fold_call *outer)
{
    into->start = outer->start;
    into->end = outer->end;
    into->name = outer->name;
    into->cbid = outer->cbid;
    into->domain = outer->domain;
    into->graph |= outer->graph;
}

static void note_fresh(tsc_fold *f, uint32_t corr)
{
    if (f->n_fresh == f->cap_fresh) {
        size_t cap = f->cap_fresh ? f->cap_fresh * 2 : 1024;
        uint32_t *p = realloc(f->fresh, cap * sizeof *p);
        if (p == NULL)
            return; /* matched when its kernel comes, or given up by age */
        f->fresh = p;
        f->cap_fresh = cap;
    }
    f->fresh[f->n_fresh++] = corr;
}

/* A call slot for corr, made if needed. */
static call_slot *call_slot_for(tsc_fold *f, uint32_t corr, const tsc_fold_actions *a)
{
    call_slot *c = call_find(f, corr);
    if (c)
        return c;
    make_room(f, f->n_calls, f->call_mask, 1, a);
    table t = calls_of(f);
    c = table_free_slot(&t, corr);
    memset(c, 0, sizeof *c);
    c->used = 1;
    c->corr = corr;
    c->epoch = f->epoch;
    f->n_calls++;
    return c;
}

void tsc_fold_add_call(tsc_fold *f, const tsc_fold_call *l, const tsc_fold_actions *a)
{
    recent_call *r = &f->recent[l->tid % RECENT_SLOTS];
    /* Strictly around it on one side at least: a runtime call does work
     * before and after its driver call; two calls with the very same span
     * are two calls. */
    int spans_last = r->used && r->tid == l->tid && l->start <= r->start && r->end <= l->end &&
                     (l->start < r->start || r->end < l->end);
    if (spans_last) {
        /* The outer call of a nested pair: its kernel carries the inner
         * call's id (the same id, or the inner one's own). */
        call_slot *c = call_find(f, r->corr);
        if (c && c->has_call)
            widen(&c->call, l);
        r->start = l->start;
        r->end = l->end;
        f->stats.nested++;
        return;
    }
    call_slot *c = call_slot_for(f, l->corr, a);
    if (c->has_call) {
        /* The same id again without spanning the last call: still one call. */
        if (l->start < c->call.start)
            c->call.start = l->start;
        if (l->end > c->call.end)
            c->call.end = l->end;
        f->stats.nested++;
        return;
    }
    c->has_call = 1;
    c->call = *l;
    c->epoch = f->epoch;
    c->fresh = 1;
    note_fresh(f, l->corr);
    *r = (recent_call){.used = 1, .tid = l->tid, .corr = l->corr, .start = l->start, .end = l->end};
}

void tsc_fold_add_ext(tsc_fold *f, uint32_t corr, uint64_t id, uint8_t kind,
                      const tsc_fold_actions *a)
{
    call_slot *c = call_slot_for(f, corr, a);
    c->has_ext = 1;
    c->ext = id;
    c->ext_kind = kind;
    c->ext_out = 0;
    if (c->folded && !f->ext_redundant) {
        a->extcorr(a->ctx, corr, id, kind);
        c->ext_out = 1;
    }
}

void tsc_fold_settle(tsc_fold *f, const tsc_fold_actions *a)
{
    for (size_t n = 0; n < f->n_fresh; n++) {
        call_slot *c = call_find(f, f->fresh[n]);
        if (c == NULL || !c->fresh)
            continue;
        c->fresh = 0;
        kernel_slot *k;
        while (c->used && (k = kernel_find(f, c->corr)) != NULL) {
            tsc_kernel_rec x = k->k;
            kernel_remove(f, k);
            fold_one(f, c, &x, a);
        }
        release_if_done(f, c);
    }
    f->n_fresh = 0;
}

void tsc_fold_age(tsc_fold *f, const tsc_fold_actions *a)
{
    f->epoch++;
    give_up_older(f, GIVE_UP_AGE, a);
}

void tsc_fold_drain(tsc_fold *f, const tsc_fold_actions *a)
{
    tsc_fold_settle(f, a);
    give_up_older(f, 0, a);
}

tsc_fold_stats tsc_fold_get_stats(const tsc_fold *f)
{
    tsc_fold_stats s = f->stats;
    s.table_bytes = (f->call_mask + 1) * sizeof(call_slot) +
                    (f->kernel_mask + 1) * sizeof(kernel_slot);
    return s;
}
