/* What we know about each live communicator, keyed by its ncclComm_t
 * pointer.  Bounded open addressing; lookups (every collective) take no
 * lock, creation and destruction take a mutex.  Entries are never freed,
 * so a lookup racing with a destroy still reads valid memory. */
#ifndef TSC_COMM_REGISTRY_H
#define TSC_COMM_REGISTRY_H

#include <stdatomic.h>
#include <stdint.h>

#define TSC_COMM_CAPACITY 4096u  /* power of two */

/* One cache line each: threads on different communicators bump their own
 * seq without invalidating each other's line. */
typedef struct tsc_comm_info {
    _Alignas(64) _Atomic uintptr_t key; /* comm pointer; 0 empty, 1 removed */
    uint64_t comm_id;
    _Atomic int32_t rank;          /* -1 until known */
    _Atomic int32_t size;          /* 0 until known */
    _Atomic uint64_t seq;          /* next collective / p2p sequence number */
    _Atomic uint64_t splits;       /* splits of this comm so far */
    _Atomic uint64_t shrinks;      /* shrinks of this comm so far */
} tsc_comm_info;
_Static_assert(sizeof(tsc_comm_info) == 64, "one cache line per communicator");

/* NULL when unknown. */
tsc_comm_info *tsc_comm_lookup(const void *comm);
/* Registers (or re-registers, resetting counters) a communicator.  NULL
 * when the table is full. */
tsc_comm_info *tsc_comm_add(const void *comm, uint64_t comm_id, int32_t rank, int32_t size);
void tsc_comm_remove(const void *comm);
/* Number of live entries (tests). */
uint32_t tsc_comm_count_live(void);
/* Communicators registered since the start (or the last clear): 0 in a
 * process that never made one. */
uint32_t tsc_comm_count_ever(void);
/* Forget everything (tests). */
void tsc_comm_registry_clear(void);

#endif
