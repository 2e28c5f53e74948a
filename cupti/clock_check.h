/* Is CUPTI's timestamp still CLOCK_REALTIME?
 *
 * CUPTI stamps activity records with CLOCK_REALTIME nanoseconds by default,
 * the scale of every tscope record.  Another tool can replace the clock
 * (Kineto registers an rdtsc timestamp callback when torch.profiler runs),
 * after which GPU records no longer line up with host records.  The capture
 * samples (CLOCK_REALTIME, cuptiGetTimestamp) pairs taken back to back and
 * feeds them here.  Pure functions.
 */
#ifndef TSC_CLOCK_CHECK_H
#define TSC_CLOCK_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Largest |cupti - realtime| in one sample still called "the same clock".
 * The two reads are a few microseconds apart; 2 ms also absorbs a
 * descheduled sampler without hiding a real switch (rdtsc or a monotonic
 * clock differ from the epoch by years). */
#define TSC_CLOCK_TOLERANCE_NS 2000000ull

typedef enum tsc_clock_verdict {
    TSC_CLOCK_OK = 0,        /* every sample matches CLOCK_REALTIME */
    TSC_CLOCK_UNKNOWN = 1,   /* no usable sample (no CUPTI timestamp) */
    TSC_CLOCK_OFFSET = 2,    /* a different clock from the start */
    TSC_CLOCK_SWITCHED = 3,  /* matched first, then stopped matching */
} tsc_clock_verdict;

typedef struct tsc_clock_state {
    tsc_clock_verdict verdict;
    uint64_t samples;          /* usable samples seen */
    int64_t worst_offset_ns;   /* largest |offset| seen, with its sign */
    uint64_t switched_at_ns;   /* realtime of the first bad sample after good ones */
} tsc_clock_state;

void tsc_clock_init(tsc_clock_state *s);

/* Feed one sample; cupti_ns == 0 means CUPTI gave no timestamp and is
 * ignored.  Verdicts only get worse: once SWITCHED or OFFSET, they stay. */
void tsc_clock_feed(tsc_clock_state *s, uint64_t realtime_ns, uint64_t cupti_ns);

/* Metadata text for clock_status: "ok", "unknown",
 * "offset:<ns>" or "switched_at:<realtime ns>:offset:<ns>". */
size_t tsc_clock_status_text(const tsc_clock_state *s, char *buf, size_t cap);

#endif
