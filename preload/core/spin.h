/* Small lock and clock helpers shared by the recorder's files.  The locks
 * are plain atomics, not pthread mutexes, so a signal-handler flush can try
 * them (with a deadline) without risking a deadlock. */
#ifndef TSC_SPIN_H
#define TSC_SPIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t tsc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void tsc_spin_lock(_Atomic int *l)
{
    int spins = 0;
    for (;;) {
        int expect = 0;
        if (atomic_compare_exchange_weak_explicit(l, &expect, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (++spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Gives up after max_ms: a signal may arrive while this very thread holds
 * the lock, and waiting for ourselves would hang the process. */
static inline int tsc_spin_lock_bounded(_Atomic int *l, unsigned max_ms)
{
    uint64_t deadline = tsc_mono_ns() + (uint64_t)max_ms * 1000000ull;
    for (;;) {
        int expect = 0;
        if (atomic_compare_exchange_strong_explicit(l, &expect, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return 1;
        if (tsc_mono_ns() > deadline)
            return 0;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

/* One attempt, no wait. */
static inline int tsc_spin_trylock(_Atomic int *l)
{
    int expect = 0;
    return atomic_compare_exchange_strong_explicit(l, &expect, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void tsc_spin_unlock(_Atomic int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

/* Async-signal-safe unsigned to decimal; returns a pointer into buf. */
static inline char *tsc_u64_to_str(uint64_t v, char buf[24])
{
    char *p = buf + 23;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

#endif
