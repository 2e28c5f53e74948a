/* Shared state of the cross-rank pass, between its stages:
 *   match -> clock_align -> blame -> steps -> straggler -> whatif -> findings.
 * Not part of the analyzer's public API. */
#ifndef TSA_XR_INTERNAL_H
#define TSA_XR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "model/xrank.h"

#define XR_GAP_UNKNOWN INT64_MIN

/* Plausibility bounds that keep all arithmetic inside int64 on corrupt
 * input: times between 1933 and 2079, a call, a gap or an
 * instance's spread of arrivals under 73 minutes, clock offsets under 36
 * years.  Real data is orders of magnitude inside them. */
#define XR_T_MIN (-(INT64_C(1) << 60))
#define XR_T_MAX ((INT64_C(1) << 61) + (INT64_C(1) << 60))
#define XR_SPAN_MAX (INT64_C(1) << 42)
#define XR_OFFSET_MAX (INT64_C(1) << 60)

/* One rank's part in one collective instance, as xr_members gives it. */
typedef struct xr_member {
    int64_t arrive;     /* GPU start (or host enter) on its own clock, aligned after clock_align */
    int64_t end;
    int64_t gap;        /* its work since its previous collective ended, XR_GAP_UNKNOWN */
    int32_t rank;       /* index into job->ranks */
} xr_member;

/* One collective call, matched across ranks by (comm_id, seq). */
typedef struct xr_instance {
    uint64_t seq;
    uint32_t first;     /* its members' first block (members.c), in rank index order */
    uint32_t n;
    uint32_t comm;      /* index into xr_ctx.comm_ids */
    uint8_t op;
    uint8_t symmetric;  /* AllReduce / AllGather / ReduceScatter: clock anchor */
    uint8_t complete;   /* every rank seen in this communicator took part */
    uint8_t usable;     /* complete, all members aligned: blame and steps use it */
    int32_t step;       /* -1: none / warm-up */
    int32_t model_step; /* the first member's step in the step pass's steps, -1 none */
    int32_t last;       /* rank index of the unique last arriver, -1 tie */
    int64_t latest, second;  /* latest and second latest aligned arrival */
    int64_t gap_median; /* median member gap, XR_GAP_UNKNOWN */
    uint64_t sig;       /* (comm, op, bytes) signature for period detection */
} xr_instance;

typedef struct xr_ctx {
    tsa_job *job;
    const tsa_xrank_options *opt;
    size_t n_ranks;

    /* Every instance's members, compact (members.c): 41 million members
     * of a 10,000-rank job take ~8 bytes each instead of 40.  Read them
     * with xr_members. */
    struct xr_blocks {
        unsigned char **arena;
        size_t n_arenas;
        uint32_t n_blocks;
    } blocks;
    size_t n_m;
    int aligned;        /* offsets found: xr_members puts members on the common clock */
    xr_instance *inst; size_t n_inst;
    uint64_t *comm_ids; size_t n_comms;

    /* hosts: ranks on one host share a clock */
    int32_t *host_of;   /* per rank: host index; host 0 is rank index 0's */
    int32_t *host_rep;  /* per host: one rank index on it (names it) */
    size_t n_hosts;
    int64_t *offset;    /* per rank */
    int32_t *comp;      /* per rank: clock component; one clock within a component */
    int32_t ref_comp;   /* the reference rank's component */

    /* per step statistics, n_ranks x n_steps, row = rank */
    size_t n_steps;
    int64_t *work;      /* work outside collectives, -1 unusable */
    int64_t *wait;
    double *rel;        /* work / step's median rank - 1, NAN unusable */
} xr_ctx;

/* members.c: an instance's members are written while the ranks are
 * placed, rank by rank, each instance growing in a chain of blocks of its
 * own.  xr_member_add appends m to the chain *first (0: none yet; made
 * then), whose last block is *last and whose last member was prev ({-1}
 * before the first).  0, or -1 when out of memory. */
int xr_member_add(struct xr_blocks *b, uint32_t *first, uint32_t *last, const xr_member *m,
                  const xr_member *prev);
void xr_blocks_free(struct xr_blocks *b);
/* members.c: in's members into out[0 .. in->n), on the common clock once
 * c->aligned. */
void xr_members(const xr_ctx *c, const xr_instance *in, xr_member *out);

/* match.c: instances and members from every rank's NCCL calls. */
int xr_match(xr_ctx *c);
/* match.c: members of the largest instance, at least 1 (a scratch size);
 * xr_scratch_members: a buffer of that many members (free it), NULL on OOM. */
size_t xr_largest_instance(const xr_ctx *c);
xr_member *xr_scratch_members(const xr_ctx *c);
/* clock_align.c: per-rank offsets (sets job clock_offset_ns) and residual. */
int xr_clock_align(xr_ctx *c, tsa_xrank_result *out);
/* blame.c: arrivals, waits, transfers, who was last; per-rank totals. */
int xr_blame(xr_ctx *c, tsa_xrank_result *out);
/* steps.c: assigns instances to steps and fills work/wait/rel. */
int xr_steps(xr_ctx *c, tsa_xrank_result *out);
/* straggler.c: persistence, slowdown, classification. */
int xr_classify(xr_ctx *c, tsa_xrank_result *out);
/* whatif.c: job time saved if the ranks in mask ran at the median speed;
 * per_step (optional, n_steps entries) receives the saving per step. */
int64_t xr_whatif(const xr_ctx *c, const uint8_t *mask, int64_t *per_step);
/* xr_findings.c */
void xr_emit_findings(const xr_ctx *c, const tsa_xrank_result *r, tsa_findings *f);

/* idmap.c: uint64 key -> dense index in insertion order. */
typedef struct xr_idmap {
    uint64_t *keys;
    uint32_t *vals;     /* index + 1; 0 = empty slot */
    size_t cap, n;
} xr_idmap;
/* Index of key; when absent and insert, the next index (-1 out of memory);
 * when absent and not insert, -1. */
int64_t xr_idmap_get(xr_idmap *m, uint64_t key, int insert);
void xr_idmap_free(xr_idmap *m);

/* stats.c: selection in place (reorders v). */
int64_t xr_median_i64(int64_t *v, size_t n);
/* The k-th smallest of v[0..n) (k < n, 0-based). */
int64_t xr_kth_i64(int64_t *v, size_t n, size_t k);
double xr_median_d(double *v, size_t n);
int xr_is_symmetric_op(uint8_t op);
int xr_is_blame_op(uint8_t op);

#endif
