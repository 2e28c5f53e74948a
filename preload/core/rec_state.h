/* The recorder's shared state: what its files (one per job, listed in
 * rec_lifecycle.c's opening comment) hold in common, at the bottom of the
 * recorder so that every one of them reads it without calling another.
 *
 * Locking: the hot path touches only the calling thread's slot
 * (rec_thread.h) and the state word below.  Everything else is guarded by
 * spin locks on atomics (spin.h) rather than pthread mutexes, so the
 * signal-handler flush can try them without deadlocking: the drain lock
 * (one consumer at a time for every ring, and the dump file) and the
 * registry lock (a new thread's slot). */
#ifndef TSC_REC_STATE_H
#define TSC_REC_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "dump_file.h"
#include "sink.h"
#include "tsc_format.h"
#include "tsc_tls.h"

/* The recorder's life in this process. */
enum { TSC_REC_UNINIT = 0, TSC_REC_INITIALIZING, TSC_REC_ACTIVE, TSC_REC_OFF, TSC_REC_CLOSED };

struct tsc_thread;

extern _Atomic int tsc_rec_state_g;
extern _Atomic uint32_t tsc_rec_epoch_g;       /* bumped in a forked child */
extern TSC_TLS struct tsc_thread *tsc_rec_tls_thr;
extern TSC_TLS uint32_t tsc_rec_tls_epoch;

typedef struct tsc_recorder {
    tsc_config cfg;                   /* read once (rec_config.c) */
    pid_t pid;                        /* the process that owns the dump */
    char host[256];
    int rank_id;                      /* global rank, for messages */
    tsc_dump dump;
    /* The sink besides the dump file (sink.h); NULL when none is registered. */
    const tsc_sink *sink;
    uint64_t events_written;          /* drain lock */
    tsc_event *scratch;               /* the drain's copy of a wrapped ring */
    size_t scratch_slots;
    size_t ring_bytes;
    /* The thread registry (rec_thread.c): slots appended under reg_lock,
     * published by nthreads, never removed until a fork forgets them. */
    struct tsc_thread **threads;
    _Atomic uint32_t nthreads;
    uint32_t max_threads;
    _Atomic uint64_t job_slots_retired; /* of slots since reused by another thread */
    _Atomic int drain_lock, reg_lock;
    _Atomic int exit_code;            /* status given to exit/_exit, -1 before */
} tsc_recorder;

extern tsc_recorder tsc_rec_g;

/* 1 while the other sink takes the records instead of the dump. */
static inline int tsc_rec_sink_on(void) { return tsc_rec_g.sink && tsc_rec_g.sink->on(); }

#endif
