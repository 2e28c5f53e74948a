/* Plugin handle pools (nprof_pool.h).
 *
 * A handle is kind (bits 0-2) | slot << 8 | generation << 32: never NULL,
 * never a pointer (NCCL only stores and passes it back).  A slot's state
 * word is its generation << 1 | open; taking it is one compare-and-swap
 * from closed to open with the next generation, so two threads can never
 * hold one slot, and a handle of an older generation never matches. */
#include "nprof_pool.h"

#include <pthread.h>
#include <stdlib.h>

#define H_KIND(h) ((unsigned)((uintptr_t)(h) & 7u))
#define H_SLOT(h) ((uint32_t)(((uintptr_t)(h) >> 8) & 0xffffu))
#define H_GEN(h) ((uint32_t)((uintptr_t)(h) >> 32))
/* Bits a handle of ours never has set: garbage (or another process's
 * handle) fails the check before any slot is read. */
#define H_ZERO_BITS ((uintptr_t)0xf8u | (uintptr_t)0xff000000u)

/* Slots tried per take: a long-lived event (a stalled channel's op) does
 * not make the pool drop while the slots after it are free. */
#define NP_PROBES 4

static np_pool g_pools[NP_KINDS];
static _Atomic int g_ready;
static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t g_lost;

uint64_t np_lost(void) { return atomic_load_explicit(&g_lost, memory_order_relaxed); }
void np_count_lost(void) { atomic_fetch_add_explicit(&g_lost, 1, memory_order_relaxed); }

static uint32_t pow2_within(uint32_t n)
{
    if (!n)
        return 0;
    uint32_t p = NP_POOL_MIN;
    while (p < n && p < NP_POOL_MAX)
        p <<= 1;
    return p;
}

static int pool_alloc(np_pool *p, uint32_t n, size_t slot_size)
{
    p->n = pow2_within(n);
    p->slot_size = slot_size;
    if (!p->n)
        return 0;
    p->state = calloc(p->n, sizeof *p->state);
    p->ident = calloc(p->n, sizeof *p->ident);
    p->slots = calloc(p->n, slot_size);
    return p->state && p->ident && p->slots ? 0 : -1;
}

int np_pools_init(const uint32_t count[NP_KINDS], const size_t slot_size[NP_KINDS])
{
    if (atomic_load_explicit(&g_ready, memory_order_acquire))
        return 0;
    pthread_mutex_lock(&g_init_mu);
    int rc = 0;
    if (!atomic_load_explicit(&g_ready, memory_order_relaxed)) {
        for (int k = NP_COLL; k < NP_KINDS && !rc; k++)
            rc = pool_alloc(&g_pools[k], count[k], slot_size[k]);
        if (!rc)
            atomic_store_explicit(&g_ready, 1, memory_order_release);
        else
            for (int k = NP_COLL; k < NP_KINDS; k++) {
                free(g_pools[k].state), free(g_pools[k].ident), free(g_pools[k].slots);
                g_pools[k] = (np_pool){0};
            }
    }
    pthread_mutex_unlock(&g_init_mu);
    return rc;
}

np_pool *np_pool_of(enum np_kind k)
{
    if (k < NP_COLL || k >= NP_KINDS || !atomic_load_explicit(&g_ready, memory_order_acquire))
        return NULL;
    return &g_pools[k];
}

static void *handle_of(enum np_kind k, uint32_t slot, uint64_t gen)
{
    return (void *)((uintptr_t)k | (uintptr_t)slot << 8 | (uintptr_t)(uint32_t)gen << 32);
}

void *np_take(enum np_kind k, void **slot)
{
    np_pool *p = np_pool_of(k);
    for (int probe = 0; p && p->n && probe < NP_PROBES; probe++) {
        uint32_t i = atomic_fetch_add_explicit(&p->cursor, 1, memory_order_relaxed) & (p->n - 1);
        uint64_t s = atomic_load_explicit(&p->state[i], memory_order_relaxed);
        if (s & 1)
            continue; /* open: its event is not done */
        uint64_t gen = (s >> 1) + 1;
        if ((uint32_t)gen == 0)
            gen++; /* generation 0 is never handed out */
        if (!atomic_compare_exchange_strong_explicit(&p->state[i], &s, gen << 1 | 1,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        /* A child reading the slot's identity under an older generation
         * must see the new generation if it sees anything written after
         * this point (np_read_ident). */
        atomic_thread_fence(memory_order_release);
        *slot = p->slots + (size_t)i * p->slot_size;
        return handle_of(k, i, gen);
    }
    np_count_lost();
    return NULL;
}

enum np_kind np_kind_of(void *handle)
{
    unsigned k = H_KIND(handle);
    return handle && !((uintptr_t)handle & H_ZERO_BITS) && k < NP_KINDS ? (enum np_kind)k : 0;
}

/* The pool and slot of a handle of kind k, or NULL when it is not one. */
static np_pool *decode(enum np_kind k, void *handle, uint32_t *slot)
{
    np_pool *p = np_pool_of(k);
    if (!p || !handle || H_KIND(handle) != (unsigned)k || ((uintptr_t)handle & H_ZERO_BITS))
        return NULL;
    *slot = H_SLOT(handle);
    return *slot < p->n ? p : NULL;
}

void *np_owned(enum np_kind k, void *handle)
{
    if (!handle)
        return NULL; /* no event (NCCL's, or one dropped at its start) */
    uint32_t i;
    np_pool *p = decode(k, handle, &i);
    uint64_t s = p ? atomic_load_explicit(&p->state[i], memory_order_acquire) : 0;
    if (!p || !(s & 1) || (uint32_t)(s >> 1) != H_GEN(handle)) {
        np_count_lost();
        return NULL;
    }
    return p->slots + (size_t)i * p->slot_size;
}

void *np_peek(enum np_kind k, void *handle)
{
    uint32_t i;
    np_pool *p = handle ? decode(k, handle, &i) : NULL;
    uint64_t s = p ? atomic_load_explicit(&p->state[i], memory_order_acquire) : 0;
    return p && (s & 1) && (uint32_t)(s >> 1) == H_GEN(handle)
               ? p->slots + (size_t)i * p->slot_size
               : NULL;
}

void np_each_open(enum np_kind k, void (*fn)(void *slot, void *handle, void *arg), void *arg)
{
    np_pool *p = np_pool_of(k);
    for (uint32_t i = 0; p && i < p->n; i++) {
        uint64_t s = atomic_load_explicit(&p->state[i], memory_order_acquire);
        if (s & 1)
            fn(p->slots + (size_t)i * p->slot_size, handle_of(k, i, s >> 1), arg);
    }
}

void np_release(enum np_kind k, void *handle)
{
    uint32_t i;
    np_pool *p = decode(k, handle, &i);
    if (!p)
        return;
    uint64_t s = atomic_load_explicit(&p->state[i], memory_order_relaxed);
    if ((s & 1) && (uint32_t)(s >> 1) == H_GEN(handle))
        atomic_store_explicit(&p->state[i], s & ~(uint64_t)1, memory_order_release);
}

void np_set_ident(enum np_kind k, void *handle, uint64_t ident)
{
    uint32_t i;
    np_pool *p = decode(k, handle, &i);
    if (p)
        atomic_store_explicit(&p->ident[i], ident, memory_order_relaxed);
}

/* A sequence lock on the generation: the word is the slot's only if the
 * generation was the handle's before and after reading it. */
int np_read_ident(enum np_kind k, void *handle, uint64_t *ident)
{
    if (!handle)
        return 0; /* no parent: nothing lost here */
    uint32_t i;
    np_pool *p = decode(k, handle, &i);
    if (p) {
        uint64_t s1 = atomic_load_explicit(&p->state[i], memory_order_acquire);
        uint64_t x = atomic_load_explicit(&p->ident[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        uint64_t s2 = atomic_load_explicit(&p->state[i], memory_order_relaxed);
        if ((uint32_t)(s1 >> 1) == H_GEN(handle) && s1 >> 1 == s2 >> 1) {
            *ident = x;
            return 1;
        }
    }
    np_count_lost();
    return 0;
}
