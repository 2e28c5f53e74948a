/* The recorder's event API (recorder.h): descriptors interned per thread
 * and events appended to the calling thread's ring.  No lock: only the
 * calling thread's slot is touched. */
#include <stdatomic.h>

#include "fast_clock.h"
#include "intern.h"
#include "rec_thread.h"
#include "recorder.h"

uint64_t tsc_now_ns(void) { return tsc_clock_now(); }

/* A descriptor this thread has not defined (yet, or since a wipe): define
 * it in the stream and remember it.  Out of line: its encoding buffer is
 * 4 KiB of stack the common path does not need. */
static uint32_t __attribute__((noinline)) intern_define(tsc_thread *t, uint8_t desc_type,
                                                        const void *payload, uint16_t len,
                                                        uint64_t h)
{
    uint32_t id = atomic_fetch_add_explicit(&tsc_rec_next_desc_g, 1, memory_order_relaxed);
    tsc_event slots[1 + (TSC_DESC_MAX_PAYLOAD + TSC_SLOT_SIZE - 1) / TSC_SLOT_SIZE];
    size_t n = tsc_encode_desc(slots, sizeof slots / sizeof slots[0], desc_type, id, payload, len);
    if (!n)
        return 0;
    uint64_t used = tsc_ring_push(&t->ring, slots, n);
    if (!used)
        return 0; /* not defined in the stream: do not remember it */
    tsc_rec_wake_for(t, used);
    tsc_intern_insert(&t->intern, desc_type, payload, len, h, id);
    return id;
}

uint32_t tsc_rec_intern(uint8_t desc_type, const void *payload, uint16_t len)
{
    if (atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire) != TSC_REC_ACTIVE)
        return 0;
    if (len > TSC_DESC_MAX_PAYLOAD || (len && !payload))
        return 0;
    tsc_thread *t = tsc_rec_thread_get();
    if (!t)
        return 0;
    uint64_t gen = atomic_load_explicit(&tsc_rec_intern_gen_g, memory_order_relaxed);
    if (__builtin_expect(t->intern_gen != gen, 0)) {
        tsc_intern_reset(&t->intern);
        t->intern_gen = gen;
    }
    uint64_t h = 0;
    uint32_t id = tsc_intern_lookup(&t->intern, desc_type, payload, len, &h);
    if (__builtin_expect(id != 0, 1))
        return id;
    return intern_define(t, desc_type, payload, len, h);
}

uint32_t tsc_rec_string(const char *s, size_t len)
{
    if (!s)
        return 0;
    if (len > TSC_DESC_MAX_PAYLOAD)
        len = TSC_DESC_MAX_PAYLOAD; /* long names are cut, not refused */
    return tsc_rec_intern(TSC_DESC_STRING, s, (uint16_t)len);
}

void tsc_rec_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
                   uint64_t start_ns, uint64_t end_ns, uint64_t val)
{
    if (atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire) != TSC_REC_ACTIVE)
        return;
    tsc_thread *t;
    if (__builtin_expect((desc == 0 && tsc_event_needs_desc(kind)) || kind == 0 ||
                             kind == TSC_EV_DESC || !(t = tsc_rec_thread_get()),
                         0)) {
        atomic_fetch_add_explicit(&tsc_rec_dropped_extra_g, 1, memory_order_relaxed);
        return;
    }
    /* The call's exit record: it is no longer in flight (cleared even if
     * the ring is full, so the watchdog never reports a call that ended). */
    if (kind == TSC_EV_NCCL)
        atomic_store_explicit(&t->inflight_t0, 0, memory_order_relaxed);
    tsc_rec_thread_put(t, kind, flags, aux, desc, start_ns, end_ns, val);
}
