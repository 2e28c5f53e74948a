/* NET.SLOW_LINK from the NCCL profiler plugin's proxy records: one pair of
 * ranks whose network steps are slower than every other pair's, step after
 * step (netlink.c; docs/findings.md). */
#ifndef TSA_FINDINGS_NETLINK_H
#define TSA_FINDINGS_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis.h"

/* A link's median time on the wire per step, over the median link's, and
 * over the median of its sender's other links.  Balanced 8-rank jobs on the
 * loaded 2-core VM gave at most 1.22 and 1.32 (2026-11-25); a 4x slow link
 * read 2.0-2.8 there, because scheduling delay adds the same few hundred
 * microseconds to every step. */
#define TSA_TH_LINK_RATIO 1.75
/* ... and at least this much slower per step, so jitter of fast steps
 * (a few microseconds) never makes a link "slow". */
#define TSA_TH_LINK_ABS_NS 20000.0
/* Share of the link's proxy operations above 1.5x the median link:
 * slow across steps, not one bad moment. */
#define TSA_TH_LINK_CONSISTENT 0.6
/* The receiver's wait for the data per step over its other links'
 * (looser: its wait starts when it posts the receive, not when data
 * leaves). */
#define TSA_TH_LINK_RECV_RATIO 1.5
/* Links needed for a median worth comparing against. */
#define TSA_LINK_MIN_PAIRS 3

/* One link: a direction between two ranks (global ranks) on one channel. */
typedef struct tsa_link_stat {
    int src, dst, channel;
    size_t ops;                 /* sender-side proxy operations */
    double step_ns_median;      /* time on the wire per step, median over ops */
    double consistent;          /* share of ops above 1.5x the median link */
    uint64_t bytes, wire_ns;    /* sums: bandwidth = bytes / wire */
    double recv_wait_ns_median; /* receiver's wait for data per step, median (-1 none) */
    double sender_rel;          /* step median over the sender's other links' (-1 none) */
    double receiver_rel;        /* receiver's wait over its other links' (-1 none) */
} tsa_link_stat;

/* Every link with sender-side step records, sorted by (src, dst, channel),
 * and the median link's step time; the caller frees *out.  0, or -1 when
 * out of memory. */
int tsa_link_stats(const tsa_job *job, tsa_link_stat **out, size_t *n, double *median_ns);

/* The links NET.SLOW_LINK's rule names (is_slow in netlink.c), with the
 * median link's time per step on the wire (send) and waiting for the
 * data (receive); the caller frees *out.  0, or -1 when out of memory. */
int tsa_slow_links(const tsa_job *job, tsa_link_stat **out, size_t *n, double *median_send_ns,
                   double *median_recv_ns);

int tsa_netlink_findings(const tsa_analysis *a, tsa_findings *out);

#endif
