/* A recording thread's slot and the recorder's hot path, inline.
 *
 * An intercepted NCCL call is worth tens of nanoseconds to the job; going
 * through the recorder's functions cost it a state check and a thread
 * lookup in each of four calls.  The wrappers take the thread's slot once
 * (tsc_rec_thread) and do the rest here, inline: the descriptor stamp, the
 * in-flight marker, the exit record.  The slot's type is rec_slot.h; the
 * registry and the slow paths declared below are rec_thread.c.
 */
#ifndef TSC_REC_THREAD_H
#define TSC_REC_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "intern.h"
#include "rec_counters.h"
#include "rec_slot.h"
#include "rec_state.h"
#include "ring.h"
#include "tsc_format.h"

/* Out of line: set-up on first use, registration of a new thread; NULL
 * when not recording or when the thread cannot have a slot (then the one
 * record the caller was about to make is counted as dropped). */
tsc_thread *tsc_rec_thread_slow(void);
/* Out of line: wake the writer when the ring is half full. */
void tsc_rec_wake_for(tsc_thread *t, uint64_t used);
/* Out of line: a slot for this thread (claimed or new) with its name as
 * its first record; NULL when TSCOPE_MAX_THREADS slots are taken (said
 * once) or memory is short.  Only while recording. */
tsc_thread *tsc_rec_thread_register(void);

/* The slot this thread registered in this process (not a fork parent's),
 * or NULL. */
static inline tsc_thread *tsc_rec_thread_mine(void)
{
    tsc_thread *t = tsc_rec_tls_thr;
    return t && tsc_rec_tls_epoch == atomic_load_explicit(&tsc_rec_epoch_g, memory_order_relaxed)
               ? t
               : NULL;
}

/* This thread's slot, registering it on its first record; NULL when it
 * cannot have one.  Only while recording. */
static inline tsc_thread *tsc_rec_thread_get(void)
{
    tsc_thread *t = tsc_rec_thread_mine();
    return __builtin_expect(t != NULL, 1) ? t : tsc_rec_thread_register();
}

/* This thread's slot while recording, else NULL. */
static inline tsc_thread *tsc_rec_thread(void)
{
    if (__builtin_expect(atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire) ==
                             TSC_REC_ACTIVE,
                         1)) {
        tsc_thread *t = tsc_rec_thread_mine();
        if (__builtin_expect(t != NULL, 1))
            return t;
    }
    return tsc_rec_thread_slow();
}

/* Changes whenever t's descriptor ids stop being valid (its table wiped,
 * a new dump generation; a fork child's threads are of a new epoch).
 * Never 0.  Callers that keep ids across calls compare it. */
static inline uint64_t tsc_rec_thread_stamp(tsc_thread *t)
{
    uint64_t gen = atomic_load_explicit(&tsc_rec_intern_gen_g, memory_order_relaxed);
    if (__builtin_expect(t->intern_gen != gen, 0)) {
        tsc_intern_reset(&t->intern);
        t->intern_gen = gen;
    }
    return (uint64_t)t->epoch << 40 ^ t->intern.resets;
}

/* The entry marker of an NCCL call, right before the real call: the
 * thread's in-flight record (descriptor the wrapper already interned,
 * entry time, sequence number), a few stores and no ring slot.  Every
 * drain writes the record of a call still in flight as one
 * TSC_EV_NCCL_ENTER (once per call), and the TSCOPE_HANG_S watchdog reads
 * it; the call's exit record (tsc_rec_thread_call_done) closes it.  name is
 * a static string ("ncclAllReduce") for the watchdog's message. */
static inline void tsc_rec_thread_enter(tsc_thread *t, uint32_t desc, uint32_t bits,
                                        uint64_t t0, uint64_t seq, uint64_t comm_id,
                                        const char *name)
{
    if (!desc)
        return;
    atomic_store_explicit(&t->inflight_seq, seq, memory_order_relaxed);
    atomic_store_explicit(&t->inflight_comm, comm_id, memory_order_relaxed);
    atomic_store_explicit(&t->inflight_desc, desc, memory_order_relaxed);
    atomic_store_explicit(&t->inflight_bits, bits, memory_order_relaxed);
    atomic_store_explicit(&t->inflight_name, name, memory_order_relaxed);
    atomic_store_explicit(&t->inflight_t0, t0 ? t0 : 1, memory_order_release);
}

/* One event into t's ring (dropped and counted when full). */
static inline void tsc_rec_thread_put(tsc_thread *t, uint8_t kind, uint8_t flags, uint16_t aux,
                                      uint32_t desc, uint64_t start_ns, uint64_t end_ns,
                                      uint64_t val)
{
    tsc_event *e = tsc_ring_reserve1(&t->ring);
    if (!e)
        return;
    *e = (tsc_event){.kind = kind, .flags = flags, .aux = aux, .desc = desc,
                     .start_ns = start_ns, .end_ns = end_ns, .val = val};
    uint64_t used = tsc_ring_commit(&t->ring, 1);
    if (__builtin_expect(used * 2 >= tsc_ring_capacity(&t->ring), 0))
        tsc_rec_wake_for(t, used);
}

/* An NCCL call's exit record: no longer in flight (cleared even when the
 * record cannot be kept, so the watchdog never reports a call that ended);
 * nothing is written once recording stopped during the call. */
static inline void tsc_rec_thread_call_done(tsc_thread *t, uint8_t flags, uint16_t aux,
                                            uint32_t desc, uint64_t t0, uint64_t t1,
                                            uint64_t val)
{
    atomic_store_explicit(&t->inflight_t0, 0, memory_order_relaxed);
    if (__builtin_expect(atomic_load_explicit(&tsc_rec_state_g, memory_order_relaxed) !=
                             TSC_REC_ACTIVE || !desc,
                         0)) {
        if (!desc)
            tsc_rec_count_dropped(1); /* as tsc_rec_event counts a record without one */
        return;
    }
    tsc_rec_thread_put(t, TSC_EV_NCCL, flags, aux, desc, t0, t1, val);
}

#endif
