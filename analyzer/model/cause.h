/* Why a blamed rank or host is slow (findings/cause.c): for each rank the
 * cross-rank pass blames, and for a slow host, the causes the records
 * support, ranked by how much of its extra step time each explains, each
 * with the comparison against its peers (types only).  docs/findings.md
 * ("Causes") defines the rules, docs/report.md the output. */
#ifndef TSA_CAUSE_H
#define TSA_CAUSE_H

#include <stddef.h>
#include <stdint.h>

typedef enum tsa_cause_kind {
    TSA_CAUSE_DEVICE = 0,   /* the same kernels slower: the GPU (clocks, throttling) */
    TSA_CAUSE_WORK,         /* more kernels, bytes or CPU work per step than its peers */
    TSA_CAUSE_HOST,         /* the same work, but the host feeds it late: launch gaps,
                             * CPU contention */
    TSA_CAUSE_ARRIVAL,      /* not slow itself: it waits for other ranks first */
    TSA_CAUSE_LINK,         /* a slow network link it sends or receives over (NCCL profiler
                             * plugin, findings/cause_link.c) */
    TSA_CAUSE_GPU_LINK,     /* its GPU's PCIe or NVLink link errs or is down-trained, and
                             * its copies or sends/receives are slower than its peers' */
    TSA_CAUSE_NETWORK,      /* its host's InfiniBand/RoCE port errs, waits or is down, and
                             * its sends/receives are slower than its peers' */
    TSA_CAUSE_GPU_HEALTH,   /* its GPU reports XIDs, ECC errors, retired pages or remapped
                             * rows, and the same kernels run slower at normal clocks */
    TSA_CAUSE_KINDS
} tsa_cause_kind;

#define TSA_CAUSE_TEXT 768

typedef struct tsa_cause {
    tsa_cause_kind kind;
    int64_t explained_ns;       /* of the extra step time, per step */
    double share;               /* explained_ns / extra_ns, capped at 1 */
    const char *metric;         /* the main comparison: its name, */
    double own, peers;          /* this rank's (host's) figure and its peers' median */
    char evidence[TSA_CAUSE_TEXT]; /* the numbers, in words */
    const char *fix;            /* what to try (static) */
} tsa_cause;

typedef struct tsa_cause_block {
    int32_t rank;               /* global rank (a stage's: its median rank); -1 for a host
                                 * block */
    const char *host;           /* borrowed; the host of a host block */
    const char *blamed_as;      /* "straggler", "intermittent straggler", "imbalance", "slow host",
                                 * "upstream of a late rank" (the rank a late rank waits for),
                                 * "slow pipeline stage" (PIPE.SLOW_STAGE's stage, shown by
                                 * its median rank) */
    int64_t step_ns, peer_step_ns; /* median work per step (outside collectives) */
    int64_t extra_ns;           /* step_ns - peer_step_ns */
    size_t peers;               /* ranks compared with */
    tsa_cause causes[TSA_CAUSE_KINDS]; size_t n_causes; /* ranked, first = most */
    char checked[TSA_CAUSE_TEXT]; /* what was compared (all blocks; the list
                                   * when no cause is named) */
} tsa_cause_block;

typedef struct tsa_cause_result {
    tsa_cause_block *blocks; size_t n_blocks;
} tsa_cause_result;

/* "device", "work", "host", "arrival", "link", "gpu-link", "network", "gpu-health" */
const char *tsa_cause_kind_name(tsa_cause_kind k);

#endif
