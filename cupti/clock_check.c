/* Clock sanity verdicts; see clock_check.h. */
#include "clock_check.h"

#include <stdio.h>

void tsc_clock_init(tsc_clock_state *s)
{
    s->verdict = TSC_CLOCK_UNKNOWN;
    s->samples = 0;
    s->worst_offset_ns = 0;
    s->switched_at_ns = 0;
}

static int64_t signed_diff(uint64_t a, uint64_t b)
{
    /* Saturate rather than overflow for wildly different clocks. */
    if (a >= b) {
        uint64_t d = a - b;
        return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
    }
    uint64_t d = b - a;
    return d > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)d;
}

static uint64_t magnitude(int64_t v)
{
    return v < 0 ? (uint64_t)(-v) : (uint64_t)v;
}

void tsc_clock_feed(tsc_clock_state *s, uint64_t realtime_ns, uint64_t cupti_ns)
{
    if (cupti_ns == 0 || realtime_ns == 0)
        return;
    int64_t off = signed_diff(cupti_ns, realtime_ns);
    int good = magnitude(off) <= TSC_CLOCK_TOLERANCE_NS;
    if (magnitude(off) > magnitude(s->worst_offset_ns))
        s->worst_offset_ns = off;
    s->samples++;
    switch (s->verdict) {
    case TSC_CLOCK_UNKNOWN:
        s->verdict = good ? TSC_CLOCK_OK : TSC_CLOCK_OFFSET;
        break;
    case TSC_CLOCK_OK:
        if (!good) {
            s->verdict = TSC_CLOCK_SWITCHED;
            s->switched_at_ns = realtime_ns;
        }
        break;
    case TSC_CLOCK_OFFSET:
    case TSC_CLOCK_SWITCHED:
        break;
    }
}

size_t tsc_clock_status_text(const tsc_clock_state *s, char *buf, size_t cap)
{
    int n;
    switch (s->verdict) {
    case TSC_CLOCK_OK:
        n = snprintf(buf, cap, "ok");
        break;
    case TSC_CLOCK_OFFSET:
        n = snprintf(buf, cap, "offset:%lld", (long long)s->worst_offset_ns);
        break;
    case TSC_CLOCK_SWITCHED:
        n = snprintf(buf, cap, "switched_at:%llu:offset:%lld",
                     (unsigned long long)s->switched_at_ns,
                     (long long)s->worst_offset_ns);
        break;
    case TSC_CLOCK_UNKNOWN:
    default:
        n = snprintf(buf, cap, "unknown");
        break;
    }
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : (cap ? cap - 1 : 0);
}
