/* NET.SLOW_LINK from the NCCL profiler plugin's proxy records: one pair of
 * ranks whose network steps are slower than every other pair's, step after
 * step (netlink.c; docs/findings.md). */
#ifndef TSA_FINDINGS_NETLINK_H
#define TSA_FINDINGS_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis.h"

/* A pair's median time on the wire per step, over the median pair's. */
#define TSA_TH_LINK_RATIO 2.0
/* ... and at least this much slower per step, so jitter of fast steps
 * (a few microseconds) never makes a link "slow". */
#define TSA_TH_LINK_ABS_NS 20000.0
/* Share of the pair's proxy operations above 1.5x the median pair:
 * slow across steps, not one bad moment. */
#define TSA_TH_LINK_CONSISTENT 0.6
/* Pairs needed for a median worth comparing against. */
#define TSA_LINK_MIN_PAIRS 3

/* One direction between two ranks (global ranks), over all channels. */
typedef struct tsa_link_stat {
    int src, dst;
    size_t ops;                 /* sender-side proxy operations */
    double step_ns_median;      /* time on the wire per step, median over ops */
    double consistent;          /* share of ops above 1.5x the median pair */
    uint64_t bytes, wire_ns;    /* sums: bandwidth = bytes / wire */
    uint32_t channels_slow;     /* bit c: channel c's median >= ratio x the median pair */
    double recv_wait_ns_median; /* receiver's wait for data per step, median (-1 none) */
} tsa_link_stat;

/* Every pair with sender-side step records, and the median pair's step
 * time; the caller frees *out.  0, or -1 when out of memory. */
int tsa_link_stats(const tsa_job *job, tsa_link_stat **out, size_t *n, double *median_ns);

int tsa_netlink_findings(const tsa_analysis *a, tsa_findings *out);

#endif
