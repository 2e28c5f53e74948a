/* Options of tsc-testbed-rank: command line first, then TSC_TESTBED_*
 * environment variables (so a launcher line stays short), then defaults. */
#ifndef TB_RANK_OPTIONS_H
#define TB_RANK_OPTIONS_H

#include <stddef.h>

#define TB_MAX_BUCKETS 16
#define TB_MAX_SLOW 64
#define TB_STOP_AT_INIT (-2)

typedef struct tb_options {
    int steps;
    long compute_us;           /* per step, per rank */
    long cpu_us;               /* before it, this much of the main thread's CPU time (--cpu-us) */
    int spin;                  /* busy-wait instead of sleeping; 2: until the main
                                * thread has used compute_us of CPU (--cpu-work) */
    size_t buckets[TB_MAX_BUCKETS]; /* gradient bucket sizes in bytes (float32) */
    int nbuckets;
    int grouped_buckets;       /* the last N buckets of a step go in one group */
    size_t fsdp_bytes;         /* per-rank shard for AllGather/ReduceScatter, 0 = off */
    size_t ring_bytes;         /* grouped send/recv ring, 0 = off */
    size_t bcast_bytes;        /* broadcast at start, 0 = off */
    int extras;                /* one of each remaining collective at the end */
    int slow_ranks[TB_MAX_SLOW];
    int nslow;
    double slow_factor;        /* compute multiplier on slow ranks */
    long slow_ms;              /* added to compute on slow ranks */
    int slow_from, slow_to;    /* slow only in steps [from, to] (--slow-steps); -1: all */
    int threads;               /* extra threads, each with its own communicator */
    size_t thread_bytes;
    int fork_child;            /* fork a child that never touches NCCL */
    int mark_after;            /* after this many steps create mark_file.<rank> */
    const char *mark_file;
    const char *expect_file;
    int fail_rank;             /* this rank exits with status fail_code ... */
    int fail_step;             /* ... in this step, after its compute (-1: never) */
    int fail_code;             /* 9 unless --fail-at R:S:CODE */
    int stop_rank, stop_step;  /* that rank stops calling NCCL before that step and
                                * sleeps until killed (a hang), -1: never,
                                * TB_STOP_AT_INIT: before creating its communicator */
    int desync_rank, desync_step; /* that rank calls AllGather where the others call
                                   * the step's first AllReduce, -1: never */
    int burn_rank, burn_threads; /* that rank runs N busy threads (-1: none) */
    int pin_rank, pin_cpu;     /* that rank pins itself to one CPU (-1: none) */
    int nice_rank, nice;       /* that rank runs at this nice value (-1: none) */
    int up_rank, up_from;      /* that rank waits each step, before its compute, for a
                                * message from up_from, sent after up_from's compute: a
                                * pipeline-style dependency on an upstream rank (-1: none) */
    int usr2_count;            /* a SIGUSR2 handler that counts; printed at the end */
    int term_exit;             /* >= 0: a SIGTERM handler that says so and _exit()s with it */
} tb_options;

/* Returns 0, or prints a message and returns -1. */
int tb_parse_options(tb_options *o, int argc, char **argv);

/* Is `rank` one of the slow ranks in step `step`? */
int tb_is_slow(const tb_options *o, int rank, int step);

#endif
