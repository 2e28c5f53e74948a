/* Pairing CUPTI's NVTX marker records into ranges.
 *
 * With NVTX routed through CUPTI, a range arrives as two MARKER records:
 * START (with the name) and END (same id, no name), possibly in different
 * buffers handled on different threads.  The pairer keeps open ranges with
 * a copy of their name (CUPTI's name pointer and a descriptor id interned
 * on another thread cannot be kept), and turns each END into a closed
 * range.  Instantaneous markers are ranges of zero length.  Pure; not
 * thread-safe (the sink locks).
 */
#ifndef TSC_NVTX_PAIR_H
#define TSC_NVTX_PAIR_H

#include <stdint.h>

#define TSC_NVTX_OPEN_MAX 512u
#define TSC_NVTX_NAME_MAX 128u
#define TSC_NVTX_DOMAIN_MAX 32u

typedef struct tsc_nvtx_range {
    uint32_t id;
    uint32_t tid;                    /* host thread, 0 if unknown */
    uint64_t start_ns, end_ns;
    char name[TSC_NVTX_NAME_MAX];    /* NUL-terminated, cut if longer */
    char domain[TSC_NVTX_DOMAIN_MAX]; /* "" for the default domain (the user's) */
} tsc_nvtx_range;

typedef struct tsc_nvtx_pairer {
    tsc_nvtx_range open[TSC_NVTX_OPEN_MAX];
    uint32_t n_open;
    uint64_t unmatched_ends;   /* END with no START seen */
    uint64_t overflow;         /* START refused: too many open ranges */
} tsc_nvtx_pairer;

void tsc_nvtx_init(tsc_nvtx_pairer *p);

/* A START marker of `domain` (NULL: the default one).  0, or -1 when the
 * table is full (counted). */
int tsc_nvtx_start(tsc_nvtx_pairer *p, uint32_t id, uint64_t ts, uint32_t tid, const char *name,
                   const char *domain);

/* An END marker: 1 and the closed range in *out, 0 when no START matches. */
int tsc_nvtx_end(tsc_nvtx_pairer *p, uint32_t id, uint64_t ts, tsc_nvtx_range *out);

#endif
