/* Hangs, desyncs and early exits, from the ranks' dumps alone
 * (docs/findings.md: DIST.HANG, DIST.DESYNC, RANK.EXITED_EARLY; docs/hangs.md).
 *
 * Inputs per rank (analyzer/model.h): the completed NCCL calls, the calls
 * entered and never left (tsa_rank.pending, from ENTER records), how the
 * process ended (tsa_rank.end) and its steps.  Ranks are global ranks; a
 * rank of the world without a dump is "no data", never "missing": nothing
 * is known about it. */
#ifndef TSA_HANG_H
#define TSA_HANG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/findings.h"
#include "model/model.h"

/* A set of global ranks, sorted and unique after tsa_rank_list_sort. */
typedef struct tsa_rank_list {
    int32_t *v;
    size_t n, cap;
} tsa_rank_list;

int tsa_rank_list_add(tsa_rank_list *l, int32_t rank);  /* 0, -1 on OOM */
void tsa_rank_list_sort(tsa_rank_list *l);
void tsa_rank_list_free(tsa_rank_list *l);
/* "rank 3", "ranks 0,2-5,9": runs compressed, so 1,000 ranks stay one short
 * line; cut with "..." past cap.  "-" when empty.  Returns buf. */
char *tsa_rank_list_format(const tsa_rank_list *l, char *buf, size_t cap);

/* -------------------------------------------------------- process end */


/* 1 when the process ended of its own accord (exit, _exit, a crash or an
 * abort), 0 when it was stopped from outside (SIGTERM, SIGINT, SIGHUP,
 * SIGKILL: a launcher tearing the job down) or the dump has no END. */
int tsa_end_by_itself(const tsa_rank_end *end);
/* "exit code 3", "signal 6 (SIGABRT)", "no END record": into buf. */
char *tsa_end_describe(const tsa_rank_end *end, char *buf, size_t cap);

/* ------------------------------------------------------ stuck on GPU */

/* Pure matching rule for CUPTI data (unit-tested without a GPU): given a
 * rank's completed host calls on one communicator in sequence order and,
 * per call, whether its NCCL kernel's completion record was linked to it
 * (kernel >= 0), the first call whose kernel never completed.  A kernel
 * that never ends blocks its stream, so every later NCCL kernel of the
 * communicator is missing too: the answer is the start of a suffix of
 * unlinked calls that follows at least one linked call (so linking is
 * known to work in this dump).  Returns its index, or -1. */
long tsa_gpu_first_unfinished(const tsa_nccl_op *const *calls, size_t n);

/* ------------------------------------------------------------ result */

typedef enum tsa_hang_kind {
    TSA_HANG_HANG = 0,          /* DIST.HANG */
    TSA_HANG_DESYNC,            /* DIST.DESYNC */
    TSA_HANG_EXITED,            /* RANK.EXITED_EARLY */
} tsa_hang_kind;

/* One group of ranks that did the same thing: one output line. */
typedef struct tsa_hang_group {
    tsa_rank_list ranks;
    char *what;                 /* "never entered; last call AllReduce seq 83" */
} tsa_hang_group;

/* A link whose proxy steps stopped (hang_proxy.c): src sends to dst on
 * channel. */
typedef struct tsa_hang_link {
    int32_t src, dst;
    uint8_t channel;
    int64_t step;               /* the step the sender posted, -1 unknown */
    int sender_posted;          /* the sender's op was seen posted, never completed */
    int receiver_waits;         /* the receiver's op was seen waiting for the data */
} tsa_hang_link;

typedef struct tsa_hang_item {
    tsa_hang_kind kind;
    const char *id;             /* static */
    char *title;                /* also the finding's title */
    uint8_t op;                 /* HANG/DESYNC: the call; EXITED: last call */
    uint64_t comm_id, seq;
    int64_t in_flight_ns;       /* HANG: longest time a stuck rank spent inside */
    int watchdog;               /* HANG: reported live by TSCOPE_HANG_S */
    int on_gpu;                 /* HANG: host returned, the kernel never completed */
    tsa_rank_list missing, stuck, exited, no_data;  /* HANG */
    tsa_rank_list ranks;        /* EXITED: the ranks that ended; DESYNC: all involved */
    int has_exit_code;          /* EXITED */
    int32_t exit_code, signal;
    tsa_hang_group *groups;     /* detail lines */
    size_t n_groups;
    tsa_hang_link *links;       /* HANG: where the proxy steps stopped (NCCL profiler plugin) */
    size_t n_links;
} tsa_hang_item;

typedef struct tsa_hang_result {
    tsa_hang_item *items;
    size_t n, cap;
    long last_step;             /* last step every rank with data completed, -1 unknown */
    int32_t world_size;         /* -1 unknown */
    tsa_rank_list no_data;      /* ranks of the world without a dump */
} tsa_hang_result;

/* Needs the step pass to have run (tsa_rank.steps) for step numbers and the
 * hang threshold; works without.  NULL only on OOM. */
tsa_hang_result *tsa_hang_analyze(const tsa_job *job);
void tsa_hang_free(tsa_hang_result *h);

/* One finding per item (critical), in tsa_findings. 0 or -1 on OOM. */
int tsa_hang_add_findings(const tsa_hang_result *h, tsa_findings *f);


/* Internals shared by the detectors (hang_result.c). */
tsa_hang_item *tsa_hang_new_item(tsa_hang_result *h, tsa_hang_kind kind);
int tsa_hang_add_group(tsa_hang_item *it, const tsa_rank_list *ranks, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tsa_hang_find_hangs(const tsa_job *job, tsa_hang_result *h);
/* Communicators whose creation never completed (hang_init.c). */
int tsa_hang_find_init_stalls(const tsa_job *job, tsa_hang_result *h);
int tsa_hang_find_desyncs(const tsa_job *job, tsa_hang_result *h);
int tsa_hang_find_exits(const tsa_job *job, tsa_hang_result *h);
/* Each DIST.HANG's stopped links from the plugin's stalled proxy ops
 * (hang_proxy.c): links, detail lines, the title. */
int tsa_hang_pin_links(const tsa_job *job, tsa_hang_result *h);
/* Global rank of job->ranks[i] (its index when the dump did not say). */
int32_t tsa_hang_rank_id(const tsa_job *job, size_t i);
/* Collectives and send/recv: the calls that carry a sequence number. */
int tsa_hang_sequenced(uint8_t op);

#endif
