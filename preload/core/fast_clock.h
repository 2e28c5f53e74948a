/* CLOCK_REALTIME nanoseconds from the CPU's time-stamp counter.
 *
 * Every intercepted call takes two timestamps.  clock_gettime costs 25-40
 * ns through the vDSO on a KVM guest (kvm-clock), rdtsc about 11 ns: with
 * two per call that difference is most of tscope's cost per NCCL call.
 * Where the counter is safe to use (x86-64, constant and non-stop TSC, a
 * TSC-based kernel clocksource), the writer thread fits the counter to
 * CLOCK_REALTIME once a second and callers convert with one multiply.
 *
 * The fit never jumps: each update starts from where the previous line
 * stood at that instant and only changes the slope, steering towards
 * CLOCK_REALTIME within the next second (at most 200 ppm faster or slower),
 * so timestamps stay monotonic and continuous.  Only an error over 1 ms (the
 * system clock was set, the VM migrated) steps the line back onto the
 * system clock.  Until the first fit (the first 200 ms), on other CPUs,
 * with TSCOPE_OS_CLOCK=1, or in a child forked mid-update, callers read
 * clock_gettime as before.
 */
#ifndef TSC_FAST_CLOCK_H
#define TSC_FAST_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define TSC_HAVE_TSC 1
#else
#define TSC_HAVE_TSC 0
#endif

/* ns = base_ns + (counter - base_tsc) * mult / 2^32 */
typedef struct tsc_clock_line {
    uint64_t base_tsc;
    uint64_t base_ns;
    uint64_t mult;
} tsc_clock_line;

/* The line in use, behind a sequence count (odd while being rewritten);
 * active is 0 while callers must use the system clock. */
typedef struct tsc_clock_shared {
    _Atomic uint32_t seq;
    _Atomic uint32_t active;
    _Atomic uint64_t base_tsc, base_ns, mult;
} tsc_clock_shared;

extern tsc_clock_shared tsc_clock_g;

static inline uint64_t tsc_os_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A counter read a little before base_tsc (rdtsc is not ordered after
 * the loads) converts on the same line, backwards. */
static inline uint64_t tsc_clock_convert(const tsc_clock_line *l, uint64_t counter)
{
    uint64_t d = counter - l->base_tsc;
    if (__builtin_expect((int64_t)d >= 0, 1))
        return l->base_ns + (uint64_t)(((unsigned __int128)d * l->mult) >> 32);
    return l->base_ns - (uint64_t)(((unsigned __int128)(0 - d) * l->mult) >> 32);
}

/* The line as it stands, for several timestamps: 0 when callers must use
 * the system clock.  Two tries: a writer rewrites the line for a few
 * nanoseconds once a second; a reader that keeps losing (or a fork child
 * that inherited an odd count) falls back to the system clock. */
static inline int tsc_clock_load(tsc_clock_line *l, uint32_t *seq)
{
#if TSC_HAVE_TSC
    for (int tries = 0; tries < 2; tries++) {
        uint32_t s = atomic_load_explicit(&tsc_clock_g.seq, memory_order_acquire);
        if (!atomic_load_explicit(&tsc_clock_g.active, memory_order_relaxed) || (s & 1))
            return 0;
        l->base_tsc = atomic_load_explicit(&tsc_clock_g.base_tsc, memory_order_relaxed);
        l->base_ns = atomic_load_explicit(&tsc_clock_g.base_ns, memory_order_relaxed);
        l->mult = atomic_load_explicit(&tsc_clock_g.mult, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&tsc_clock_g.seq, memory_order_relaxed) == s) {
            *seq = s;
            return 1;
        }
    }
#else
    (void)l;
    (void)seq;
#endif
    return 0;
}

/* Two timestamps of one call on one line (a call's start and end): the
 * second reuses the line unless the writer moved it meanwhile. */
typedef struct tsc_clock_pair {
    tsc_clock_line line;
    uint32_t seq;
    int fast;
} tsc_clock_pair;

static inline uint64_t tsc_clock_first(tsc_clock_pair *p)
{
#if TSC_HAVE_TSC
    p->fast = tsc_clock_load(&p->line, &p->seq);
    if (p->fast)
        return tsc_clock_convert(&p->line, __rdtsc());
#else
    p->fast = 0;
#endif
    return tsc_os_realtime_ns();
}

static inline uint64_t tsc_clock_now(void)
{
    tsc_clock_pair p;
    return tsc_clock_first(&p);
}

static inline uint64_t tsc_clock_second(const tsc_clock_pair *p)
{
#if TSC_HAVE_TSC
    if (p->fast && atomic_load_explicit(&tsc_clock_g.seq, memory_order_relaxed) == p->seq)
        return tsc_clock_convert(&p->line, __rdtsc());
#endif
    return tsc_clock_now();
}

/* The writer's fit, kept apart from the counter so tests can feed it
 * samples.  All times in ns, counters in ticks. */
typedef struct tsc_clock_fit {
    int have_start;
    int fitted;
    uint64_t start_tsc, start_ns;   /* first sample since the last step */
    tsc_clock_line line;            /* what callers use */
    uint64_t steps;                 /* times the line was reset */
} tsc_clock_fit;

#define TSC_CLOCK_FIRST_FIT_NS 200000000ull  /* 200 ms of samples before the first line */
#define TSC_CLOCK_STEP_NS 1000000ll          /* larger errors step, smaller ones slew */
#define TSC_CLOCK_SLEW_PPM 200               /* slope change at most */
#define TSC_CLOCK_SLEW_NS 1000000000ll       /* errors are closed over about 1 s */

/* One (counter, CLOCK_REALTIME) sample.  Returns 1 when fit->line changed
 * and should be published. */
int tsc_clock_fit_feed(tsc_clock_fit *fit, uint64_t counter, uint64_t ns);

/* Library side: whether the counter may be used (reads /proc and /sys
 * once; os_clock forces no), a sample and publish, and the fork reset. */
void tsc_clock_setup(int os_clock);
void tsc_clock_tick(void);
/* How long the writer may wait before the next tick (ns): 250 ms while
 * fitting, 1 s after; 0 when the counter is not used. */
uint64_t tsc_clock_tick_period_ns(void);
void tsc_clock_after_fork(void);
/* "tsc 2.995 GHz", "os (reason)": for the dump's metadata. */
const char *tsc_clock_describe(void);

#endif
