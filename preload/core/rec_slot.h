/* A recording thread's slot: its ring, its descriptor table and the NCCL
 * call it is inside.  Only the type and what reads a slot's own fields;
 * the registry that hands slots out is rec_thread.c, the inline hot path
 * that fills them rec_thread.h. */
#ifndef TSC_REC_SLOT_H
#define TSC_REC_SLOT_H

#include <stdatomic.h>
#include <stdint.h>

#include <string.h>

#include "dump_file.h"
#include "intern.h"
#include "rec_counters.h"
#include "ring.h"
#include "tsc_format.h"

/* A slot's life: claimed by a new thread, live while it records, exited
 * when the thread ends, reusable once the writer has drained it; so
 * threads that come and go do not use up TSCOPE_MAX_THREADS. */
enum { TSC_SLOT_CLAIMED = 0, TSC_SLOT_LIVE, TSC_SLOT_EXITED, TSC_SLOT_REUSABLE };

typedef struct tsc_thread {
    tsc_ring ring;
    _Atomic int slot;
    uint32_t epoch;             /* tsc_rec_epoch_g when claimed */
    uint32_t tid;
    _Atomic int wake_pending;   /* producer asked the writer for a drain */
    uint64_t intern_gen;
    char name[17];              /* last name written (writer's view) */
    /* The NCCL call this thread is inside, for the hang watchdog: the
     * fields are stored first, the entry time (0 = none) last. */
    _Atomic uint64_t inflight_t0;
    _Atomic uint64_t inflight_seq, inflight_comm;
    _Atomic uint32_t inflight_desc;
    _Atomic uint32_t inflight_bits;          /* flags | aux << 16 */
    _Atomic(const char *) inflight_name;
    uint64_t reported_t0;                    /* drainer only: last one the watchdog reported */
    uint64_t persisted_t0;                   /* drainer only: last one written as ENTER */
    /* The job's cost counter (self_cost.h) is the ring's own head: slots
     * before slots_base belong to a thread that had the slot before. */
    _Atomic uint64_t slots_base;
    _Atomic int own;                         /* a tscope thread's: not the job's cost */
    tsc_intern intern;
} tsc_thread;

/* A ring's slots ever filled or refused: the job's cost counter. */
static inline uint64_t tsc_slot_ring_slots(tsc_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_relaxed) +
           atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

/* A consistent copy of a thread's in-flight record (the thread may be
 * leaving the call or entering the next one meanwhile). */
typedef struct tsc_inflight {
    uint64_t t0, seq, comm;
    uint32_t desc, bits;
    const char *name;
} tsc_inflight;

/* 1 when t is inside a call, with its record in *f. */
static inline int tsc_slot_read_inflight(tsc_thread *t, tsc_inflight *f)
{
    f->t0 = atomic_load_explicit(&t->inflight_t0, memory_order_acquire);
    if (!f->t0)
        return 0;
    f->seq = atomic_load_explicit(&t->inflight_seq, memory_order_relaxed);
    f->comm = atomic_load_explicit(&t->inflight_comm, memory_order_relaxed);
    f->desc = atomic_load_explicit(&t->inflight_desc, memory_order_relaxed);
    f->bits = atomic_load_explicit(&t->inflight_bits, memory_order_relaxed);
    f->name = atomic_load_explicit(&t->inflight_name, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&t->inflight_t0, memory_order_relaxed) == f->t0;
}

/* A THREAD descriptor naming t `name` (its tid and up to 16 bytes), in
 * slots; returns the number of slots used (0 when it did not fit). */
static inline size_t tsc_slot_name_desc(const tsc_thread *t, const char *name,
                                        tsc_event slots[2])
{
    unsigned char payload[8 + 16];
    tsc_desc_thread d = {.tid = t->tid, .name_len = (uint32_t)strlen(name)};
    memcpy(payload, &d, 8);
    memcpy(payload + 8, name, d.name_len);
    return tsc_encode_desc(slots, 2, TSC_DESC_THREAD, atomic_fetch_add(&tsc_rec_next_desc_g, 1),
                           payload, (uint16_t)(8 + d.name_len));
}

#endif
