/* NET.SLOW_LINK from the NCCL profiler plugin's proxy records: one pair of
 * ranks whose network steps are slower than every other pair's, step after
 * step (netlink.c; docs/findings.md). */
#ifndef TSA_FINDINGS_NETLINK_H
#define TSA_FINDINGS_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis.h"

/* A link's time on the wire per step over its peers': the other links of
 * its communicator on its channel (a ring's other hops), else, with fewer
 * than two of those, the job's links.  Compared by first quartile over
 * the link's operations (the peers': the median of theirs): scheduling
 * delays only ever add to a step, and on the loaded 2-core VM they added
 * 3-5x a simulated 200 us step at the median, squeezing a 4x link to
 * 1.3-1.8x its peers' medians (2026-11-28, load 16-24), while its quicker
 * steps still show the link. */
#define TSA_TH_LINK_RATIO 1.75
/* ... and at least this much slower per step, so jitter of fast steps
 * (a few microseconds) never makes a link "slow". */
#define TSA_TH_LINK_ABS_NS 20000.0
/* Share of the link's proxy operations above 1.5x its peers' first
 * quartile: slow across steps, not one bad moment.  A slow link is slow
 * in every operation; on 40 test-bed jobs at load 16-24 (2026-11-28)
 * noise put links at up to 80% (0.6 and 0.75 named 2-3 unrelated links
 * in the noisiest), the slow links all at 85% or more. */
#define TSA_TH_LINK_CONSISTENT 0.85
/* An end of the link whose other links (other peers, either direction)
 * are this much slower than their own peers, at the median, is slow on
 * all its links: a slow host or NIC, not this link. */
#define TSA_TH_LINK_END 1.5
/* A sender whose steps wait this much longer for the GPU than the median
 * rank's, on its receives, where that wait is the proxy's own polling,
 * by TSA_TH_LINK_ABS_NS and half the link's excess or more, is a starved
 * process: its slow sends are its CPU's, not the link's. */
#define TSA_TH_LINK_STARVED 1.5
/* Links needed for a median worth comparing against. */
#define TSA_LINK_MIN_PAIRS 3

/* One link: a direction between two ranks (global ranks) on one channel. */
typedef struct tsa_link_stat {
    int src, dst, channel;
    uint64_t comm_id;           /* the communicator with most of its operations */
    size_t ops;                 /* sender-side proxy operations */
    double step_ns_median;      /* time on the wire per step, median over ops */
    double step_ns_q1;          /* ... its first quartile (the rule's: below) */
    double base_ns;             /* its peers' median step (see TSA_TH_LINK_RATIO) */
    double base_q1_ns;          /* its peers' median first quartile */
    double consistent;          /* share of ops above 1.5x base_q1_ns */
    uint64_t bytes, wire_ns;    /* sums: bandwidth = bytes / wire */
    double recv_wait_ns_median; /* receiver's wait for data per step, median (-1 none) */
    double peer_rel;            /* step_ns_q1 / base_q1_ns */
    double src_other_rel;       /* median peer_rel of the sender's other links (-1 none) */
    double dst_other_rel;       /* ... of the receiver's other links (-1 none) */
    double src_gpu_rel;         /* sender's GPU wait per received step over the median
                                 * rank's (-1 unknown) */
    double src_gpu_excess_ns;   /* ... and by how much per step */
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

/* GB/s on the wire of the links of all[0..n) that are not slow (the
 * others NET.SLOW_LINK compares a slow link with): their bytes over their
 * time on the wire; NAN (unknown, never 0) when they have none. */
double tsa_other_links_gbps(const tsa_link_stat *all, size_t n);

/* For the verdict of a communication-bound job: ", paced by one slow
 * link: rank A -> rank B on channel C, Nx ... (NET.SLOW_LINK)" from the
 * largest NET.SLOW_LINK in a->findings; "" when there is none. */
void tsa_netlink_pacing(const tsa_analysis *a, char *buf, size_t len);

/* Where the job's plugin records are light capture (collectives, no proxy
 * operations): "; ..." saying that TSCOPE_NCCL_PROFILER=full times each
 * link and what it costs; "" otherwise. */
void tsa_netlink_light_hint(const tsa_analysis *a, char *buf, size_t len);

/* Where the NCCL plugin's proxy and channel events stop (the own-cost
 * budget's "fewer NCCL plugin events", a->plugin_cut): "proxy events end
 * at +X s on rank R (...)", or "" when no rank took the level.  The
 * findings and causes that read proxy steps name it in their evidence. */
void tsa_netlink_cut_note(const tsa_analysis *a, char *buf, size_t len);

#endif
