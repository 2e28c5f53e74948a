/* See rec_thread.h: the thread registry (a slot for each recording
 * thread, reused after the thread ends) and the hot path's two slow
 * paths. */
#include "rec_thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder.h"
#include "recorder_internal.h"
#include "self_cost.h"
#include "spin.h"

static TSC_TLS uint32_t tls_refused_epoch; /* over TSCOPE_MAX_THREADS in this epoch */

static pthread_key_t g_thread_key; /* its destructor marks slots exited */
static int g_thread_key_ok;
static pthread_once_t g_thread_key_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *p)
{
    tsc_thread *t = p;
    /* Anything this dying thread records after this point (other
     * libraries' destructors) is dropped, not written into a slot that may
     * already belong to another thread. */
    uint32_t epoch = atomic_load(&tsc_rec_epoch_g);
    tsc_rec_tls_thr = NULL;
    tls_refused_epoch = epoch;
    if (t && t->epoch == epoch)
        atomic_store_explicit(&t->slot, TSC_SLOT_EXITED, memory_order_release);
}

/* Once per process image (a forked child inherits the key). */
static void make_thread_key(void)
{
    g_thread_key_ok = pthread_key_create(&g_thread_key, on_thread_exit) == 0;
}

/* A drained slot of a thread that ended, or NULL. */
static tsc_thread *claim_reusable_slot(void)
{
    uint32_t n = atomic_load_explicit(&tsc_rec_g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        int expect = TSC_SLOT_REUSABLE;
        if (atomic_compare_exchange_strong(&tsc_rec_g.threads[i]->slot, &expect,
                                           TSC_SLOT_CLAIMED))
            return tsc_rec_g.threads[i];
    }
    return NULL;
}

/* A fresh slot (published as CLAIMED, which the writer skips), or NULL
 * when TSCOPE_MAX_THREADS slots exist or memory is short. */
static tsc_thread *new_slot(void)
{
    if (!tsc_rec_g.threads || atomic_load(&tsc_rec_g.nthreads) >= tsc_rec_g.max_threads)
        return NULL;
    tsc_thread *t = calloc(1, sizeof *t);
    if (!t || tsc_ring_init(&t->ring, tsc_rec_g.ring_bytes) < 0) {
        free(t);
        return NULL;
    }
    atomic_store(&t->slot, TSC_SLOT_CLAIMED);
    tsc_spin_lock(&tsc_rec_g.reg_lock);
    uint32_t n = atomic_load(&tsc_rec_g.nthreads);
    int ok = n < tsc_rec_g.max_threads;
    if (ok) {
        tsc_rec_g.threads[n] = t;
        atomic_store_explicit(&tsc_rec_g.nthreads, n + 1, memory_order_release);
    }
    tsc_spin_unlock(&tsc_rec_g.reg_lock);
    if (!ok) {
        tsc_ring_free(&t->ring);
        free(t);
        return NULL;
    }
    return t;
}

tsc_thread *tsc_rec_thread_register(void)
{
    uint32_t epoch = atomic_load_explicit(&tsc_rec_epoch_g, memory_order_relaxed);
    if (tls_refused_epoch == epoch)
        return NULL;
    int saved = errno;
    tsc_thread *t = claim_reusable_slot();
    if (!t)
        t = new_slot();
    if (!t) {
        tls_refused_epoch = epoch;
        tsc_warn_once("threads", "more than TSCOPE_MAX_THREADS=%u threads record; events of "
                      "the others are dropped and counted", tsc_rec_g.max_threads);
        errno = saved;
        return NULL;
    }
    /* The ring is empty (new, or drained after its thread ended) and only
     * this thread will produce into it from now on. */
    t->epoch = epoch;
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->intern_gen = atomic_load(&tsc_rec_intern_gen_g);
    tsc_intern_reset(&t->intern);
    memset(t->name, 0, sizeof t->name);
    prctl(PR_GET_NAME, t->name, 0, 0, 0);
    atomic_store(&t->wake_pending, 0);
    atomic_store(&t->inflight_t0, 0); /* a reused slot's last thread may have died in a call */
    t->reported_t0 = t->persisted_t0 = 0;
    /* The slot's previous thread's count moves to the retired total (base
     * first: a reader in between undercounts, never counts twice). */
    uint64_t old_base = atomic_load(&t->slots_base), have = tsc_slot_ring_slots(&t->ring);
    int was_own = atomic_load(&t->own);
    atomic_store(&t->slots_base, have);
    if (!was_own && have > old_base)
        atomic_fetch_add(&tsc_rec_g.job_slots_retired, have - old_base);
    atomic_store(&t->own, tsc_cost_own_thread());
    atomic_store_explicit(&t->slot, TSC_SLOT_LIVE, memory_order_release);
    pthread_once(&g_thread_key_once, make_thread_key);
    if (g_thread_key_ok)
        pthread_setspecific(g_thread_key, t);
    /* The thread's name, before any of its events. */
    tsc_event slots[2];
    tsc_ring_push(&t->ring, slots, tsc_slot_name_desc(t, t->name, slots));
    tsc_rec_tls_thr = t;
    tsc_rec_tls_epoch = epoch;
    errno = saved;
    return t;
}

tsc_thread *tsc_rec_thread_slow(void)
{
    if (!tsc_rec_active())
        return NULL;
    tsc_thread *t = tsc_rec_thread_get();
    if (!t) /* over TSCOPE_MAX_THREADS: the caller's record is lost */
        atomic_fetch_add_explicit(&tsc_rec_dropped_extra_g, 1, memory_order_relaxed);
    return t;
}

void tsc_rec_wake_for(tsc_thread *t, uint64_t used)
{
    if (__builtin_expect(used * 2 < tsc_ring_capacity(&t->ring), 1) ||
        atomic_load_explicit(&t->wake_pending, memory_order_relaxed))
        return;
    /* `used` is measured against the producer's cached tail, which lags
     * behind the writer's drains: look at the real tail before waking the
     * writer, or every call after the first drain would wake it again. */
    tsc_ring *r = &t->ring;
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if ((atomic_load_explicit(&r->head, memory_order_relaxed) - r->tail_cache) * 2 <
        tsc_ring_capacity(r))
        return;
    atomic_store_explicit(&t->wake_pending, 1, memory_order_relaxed);
    tsc_rec_wake_writer();
}
