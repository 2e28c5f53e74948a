/* See rec_drain.h: from the threads' rings to the file, and the flushes
 * (periodic, signal, exit) that ask for it from outside the writer. */
#include "rec_drain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dump_file.h"
#include "fast_clock.h"
#include "parts.h"
#include "rec_chunks.h"
#include "rec_counters.h"
#include "rec_state.h"
#include "recorder.h"
#include "recorder_internal.h"
#include "spin.h"

static void note_write_failure(int from_signal, uint64_t lost_before)
{
    tsc_dump *d = &tsc_rec_g.dump;
    if (d->bytes_lost == lost_before)
        return;
    /* The lost chunk may have defined descriptors: make every thread
     * define its descriptors again. */
    atomic_fetch_add(&tsc_rec_intern_gen_g, 1);
    if (!from_signal)
        tsc_warn_once("write", "cannot write %s: %s; the job goes on, lost bytes are counted "
                      "in the dump", d->path, strerror(d->last_errno));
}

static uint64_t count_events(const tsc_event *s, size_t n)
{
    uint64_t ev = 0;
    for (size_t i = 0; i < n;) {
        if (s[i].kind == TSC_EV_DESC) {
            const tsc_desc_head *h = (const tsc_desc_head *)&s[i];
            i += tsc_desc_slots(h->payload_len);
        } else {
            ev++;
            i++;
        }
    }
    return ev;
}

/* Where drained slots go: the dump, or the other sink (black-box mode's
 * memory). */
static int put_slots(uint32_t tid, const void *slots, size_t n)
{
    if (tsc_rec_sink_on()) {
        tsc_rec_g.sink->take(tid, slots, n);
        return 0;
    }
    return tsc_dump_write_chunk(&tsc_rec_g.dump, TSC_CHUNK_EVENTS, tid, slots,
                                (uint32_t)(n * TSC_SLOT_SIZE));
}

/* Slots holding `events` events of one stream; counted as written, or
 * as lost bytes (said once). */
static int put_counted(uint32_t tid, const tsc_event *slots, size_t n, uint64_t events,
                       int from_signal)
{
    uint64_t lost = tsc_rec_g.dump.bytes_lost;
    if (put_slots(tid, slots, n) == 0) {
        tsc_rec_g.events_written += events;
        return 0;
    }
    note_write_failure(from_signal, lost);
    return -1;
}

/* PyTorch names its backward threads after they start; a thread first
 * seen under its creator's name gets a second THREAD descriptor. */
static void check_thread_rename(tsc_thread *t)
{
    char path[64], name[17];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, name, 16);
    close(fd);
    if (n <= 0)
        return;
    if (name[n - 1] == '\n')
        n--;
    name[n] = '\0';
    if (strcmp(name, t->name) == 0)
        return;
    memcpy(t->name, name, (size_t)n + 1);
    tsc_event slots[2];
    size_t k = tsc_slot_name_desc(t, name, slots);
    if (k)
        put_slots(t->tid, slots, k);
}

void tsc_rec_write_call_slot(tsc_thread *t, const tsc_inflight *f, uint8_t kind,
                             uint64_t end_ns, int from_signal)
{
    tsc_event e = {.kind = kind, .flags = (uint8_t)f->bits, .aux = (uint16_t)(f->bits >> 16),
                   .desc = f->desc, .start_ns = f->t0, .end_ns = end_ns, .val = f->seq};
    put_counted(t->tid, &e, 1, 1, from_signal);
}

/* The ENTER marker of a call in flight, once per call: every call leaves
 * its in-flight record before the real call (tsc_rec_thread_enter); only one
 * still open when the dump is written needs to be on disk, since a call
 * that returned is proven entered by its own record.  Written at every
 * drain (periodic, signal, exit), so a stuck call reaches the file within
 * one flush period. */
static void persist_inflight(tsc_thread *t, const tsc_inflight *f, int from_signal)
{
    if (f->t0 == t->persisted_t0 || !f->desc)
        return;
    t->persisted_t0 = f->t0;
    tsc_rec_write_call_slot(t, f, TSC_EV_NCCL_ENTER, 0, from_signal);
}

/* What the parts record from their own state (the NCCL profiler plugin's
 * proxy ops that stopped moving: a hung collective's never stop, and an
 * op's records are written at its stop), after the threads' own records. */
static void persist_parts_records(int from_signal)
{
    tsc_event e[32];
    uint32_t tids[32];
    size_t n = tsc_parts_own_records(tsc_clock_now(), e, tids, 32);
    for (size_t i = 0; i < n; i++)
        put_counted(tids[i], &e[i], 1, 1, from_signal);
}

/* One thread's slot: its ring, then its call in flight, then its name. */
static void drain_thread(tsc_thread *t, int from_signal, int check_names)
{
    int slot = atomic_load_explicit(&t->slot, memory_order_acquire);
    if (slot != TSC_SLOT_LIVE && slot != TSC_SLOT_EXITED)
        return; /* being set up for a new thread, or empty */
    /* The call in flight is read before the ring is: its descriptor
     * was pushed before the call was marked, so the drain below writes
     * the definition before the ENTER slot that refers to it (read the
     * other way round, a call entered between the two would refer to a
     * descriptor the file defines only in the next drain).  It is
     * written only if still in flight after the drain: a call that
     * ended meanwhile may have its exit record in this drain already,
     * and an ENTER after it would read as a call never left. */
    tsc_inflight f;
    int in_call = slot == TSC_SLOT_LIVE && tsc_slot_read_inflight(t, &f);
    /* Written straight from the ring (the producer does not touch
     * published slots until they are consumed), copied out only when
     * they wrap around its end. */
    const tsc_event *src;
    size_t k = tsc_ring_peek_span(&t->ring, &src);
    if (!k) {
        k = tsc_ring_peek(&t->ring, tsc_rec_g.scratch, tsc_rec_g.scratch_slots);
        src = tsc_rec_g.scratch;
    }
    if (k) {
        put_counted(t->tid, src, k, count_events(src, k), from_signal);
        tsc_ring_consume(&t->ring, k);
    }
    atomic_store_explicit(&t->wake_pending, 0, memory_order_relaxed);
    if (in_call && atomic_load_explicit(&t->inflight_t0, memory_order_acquire) == f.t0)
        persist_inflight(t, &f, from_signal);
    /* After the ring, so a new name follows the first one in the
     * thread's stream. */
    if (check_names && !from_signal && slot == TSC_SLOT_LIVE)
        check_thread_rename(t);
    /* An exited thread's producer side is gone: once its last events
     * are out, the slot can serve a new thread. */
    if (slot == TSC_SLOT_EXITED && tsc_ring_is_empty(&t->ring))
        atomic_store_explicit(&t->slot, TSC_SLOT_REUSABLE, memory_order_release);
}

void tsc_rec_drain_all(int from_signal, int check_names)
{
    /* Black-box memory allocates: never from a handler (what a signal
     * would have flushed stays in RAM, or is lost with the process). */
    if (from_signal && tsc_rec_sink_on())
        return;
    /* Translating CUPTI buffers takes locks and time: never in a handler. */
    if (!from_signal)
        tsc_parts_drain();
    uint32_t n = atomic_load_explicit(&tsc_rec_g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        drain_thread(tsc_rec_g.threads[i], from_signal, check_names);
    persist_parts_records(from_signal);
}

int tsc_rec_write_slots_locked(uint32_t tid, const tsc_event *slots, size_t n, uint64_t events)
{
    if (n == 0)
        return 0;
    return put_counted(tid, slots, n, events, 0);
}

void tsc_rec_help_drain(void)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) == TSC_REC_ACTIVE && tsc_rec_owned_here() &&
        tsc_parts_have_drain() && tsc_spin_trylock(&tsc_rec_g.drain_lock)) {
        tsc_parts_drain();
        tsc_spin_unlock(&tsc_rec_g.drain_lock);
    }
    errno = saved;
}

void tsc_rec_flush(void)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) == TSC_REC_ACTIVE && tsc_rec_owned_here() &&
        tsc_spin_lock_bounded(&tsc_rec_g.drain_lock, 200)) {
        tsc_rec_drain_all(1, 0);
        tsc_rec_write_meta_chunk(1);
        tsc_spin_unlock(&tsc_rec_g.drain_lock);
    }
    errno = saved;
}

void tsc_rec_finish(const char *reason, int from_signal)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) != TSC_REC_ACTIVE || !tsc_rec_owned_here())
        goto out;
    if (!tsc_spin_lock_bounded(&tsc_rec_g.drain_lock, from_signal ? 300 : 3000)) {
        /* The writer (or a drain on CUPTI's thread) kept the dump: exit
         * goes on rather than wait, and the user hears that the dump ends
         * early (the report reads it as cut). */
        tsc_warn_fixed_once("finish", "the dump could not be finished at exit (the writer held "
                            "it too long): it ends without its last records, metadata and end "
                            "marker");
        goto out;
    }
    tsc_rec_drain_all(from_signal, !from_signal);
    if (!from_signal && tsc_rec_sink_on())
        tsc_rec_g.sink->exit(&tsc_rec_g.dump);
    tsc_rec_write_meta_chunk(from_signal);
    tsc_rec_write_end_chunk(reason);
    tsc_spin_unlock(&tsc_rec_g.drain_lock);
out:
    errno = saved;
}
