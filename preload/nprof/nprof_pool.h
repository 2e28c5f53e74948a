/* Fixed pools of the NCCL profiler plugin's event handles, shared by every
 * communicator of the process (nprof.h).
 *
 * NCCL keeps a plugin's handle while the event is open and, for a
 * collective, after its stop too: the proxy operations it posted name it
 * as their parent when the proxy thread gets to them.  A pool slot is
 * therefore never taken while its event is open (started, not stopped):
 * when the slots tried are all open the new event is dropped and counted.
 * And the handle NCCL holds is not a pointer but the slot's index with
 * the slot's generation (how many times it was taken), so a late use of a
 * handle whose slot has since been taken again (a stop, a state, a child
 * naming it as parent) is seen as stale, dropped and counted instead of
 * mixing two events' times.  Every operation is a few atomic loads, one
 * compare-and-swap to take, one store to give back: no lock, no
 * allocation after np_pools_init. */
#ifndef TSC_NPROF_POOL_H
#define TSC_NPROF_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

_Static_assert(sizeof(void *) == 8, "a plugin handle holds a slot and its generation");

/* Handle kinds: the low 3 bits of a handle, never 0 (NULL is "no event"). */
enum np_kind { NP_COLL = 1, NP_OP, NP_STEP, NP_SPAN, NP_KINDS };

typedef struct np_pool {
    _Atomic uint64_t *state;   /* per slot: generation << 1 | open */
    _Atomic uint64_t *ident;   /* per slot: what children read of it (np_read_ident) */
    unsigned char *slots;
    size_t slot_size;
    uint32_t n;                /* a power of two */
    _Atomic uint32_t cursor;
} np_pool;

/* Default slot counts (TSCOPE_NP_POOLS="colls,ops,steps,spans" sets them,
 * nprof_env.c); they hold far more than NCCL keeps open (per proxy op at
 * most 8 steps in flight). */
#define NP_POOL_COLLS 4096u
#define NP_POOL_OPS 8192u
#define NP_POOL_STEPS 32768u
#define NP_POOL_SPANS 8192u
#define NP_POOL_MIN 4u
#define NP_POOL_MAX 65536u

/* Allocates the pools once (later calls return at once): count[k] slots
 * (rounded up to a power of two within [NP_POOL_MIN, NP_POOL_MAX]; 0
 * leaves a pool empty, so every take from it is dropped) of slot_size[k]
 * bytes, index 0 unused.  0, or -1 out of memory. */
int np_pools_init(const uint32_t count[NP_KINDS], const size_t slot_size[NP_KINDS]);
/* The pool of a kind; NULL before init. */
np_pool *np_pool_of(enum np_kind k);

/* The kind of a handle (its low bits), 0 for NULL or what is not one. */
enum np_kind np_kind_of(void *handle);

/* Takes a free slot: its handle, or NULL (counted lost) when the slots
 * tried are all open.  *slot receives the slot's memory, for the taker to
 * fill before it hands the handle out. */
void *np_take(enum np_kind k, void **slot);
/* The slot of a handle that is open and of this generation (the owner's
 * stop and states), else NULL (stale or not a handle of kind k: counted
 * lost; NULL: not counted). */
void *np_owned(enum np_kind k, void *handle);
/* np_owned without counting: for a second look at a handle its first
 * look counts (a step's states touching its op). */
void *np_peek(enum np_kind k, void *handle);
/* Every slot of kind k that is open now, for a reader that is not its
 * owner (the writer thread, looking for stalled proxy ops): fn(slot,
 * handle, arg).  What fn reads of the slot belongs to the event as long
 * as np_peek(k, handle) still gives the slot after it read. */
void np_each_open(enum np_kind k, void (*fn)(void *slot, void *handle, void *arg), void *arg);
/* Gives the slot back (after np_owned). */
void np_release(enum np_kind k, void *handle);

/* Reads the 64-bit identity word of the slot a handle names, open or
 * stopped, as long as its slot was not taken again: 1, or 0 when stale
 * (counted lost) or NULL (not counted).  The word is written by the taker
 * (np_set_ident). */
int np_read_ident(enum np_kind k, void *handle, uint64_t *ident);
void np_set_ident(enum np_kind k, void *handle, uint64_t ident);

/* Events NCCL reported that could not be recorded: no free slot, or a
 * stale handle.  Monotonic, any thread. */
uint64_t np_lost(void);
void np_count_lost(void);

#endif
