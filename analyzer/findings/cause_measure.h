/* What the cause pass (cause.c) compares between a blamed rank and its
 * peers, measured per rank over its analysis window: its kernels by
 * signature, its work per step, the gaps its host leaves the device, its
 * CPU use and its GPU's clocks. */
#ifndef TSA_CAUSE_MEASURE_H
#define TSA_CAUSE_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "load/rank_telemetry.h"
#include "model/analysis.h"

/* One kernel signature (name, grid, block) on one rank: how many ran in
 * the window and their median duration. */
typedef struct cm_sig {
    uint64_t sig;
    uint32_t n;
    int64_t median_ns;
} cm_sig;

#define CM_RECV_PEERS 4

typedef struct cm_rank {
    size_t kernels;             /* compute kernels in the window (0: none or remote) */
    cm_sig *sigs; size_t n_sigs; /* sorted by sig */
    double kernels_step;        /* compute kernels per step */
    double busy_step_ns;        /* their summed duration per step */
    double bytes_step;          /* copied and communicated bytes per step */
    double gap_median_ns;       /* median idle gap between consecutive compute kernels */
    double idle_step_ns;        /* those gaps summed per step, leaving out the gaps
                                 * an NCCL call starts in (waits for other ranks) */
    tsa_cpu_window cpu;
    double main_cpu_step_ns;    /* the main thread's CPU time per step, -1 unknown */
    double stray_cpus;          /* CPUs used by threads other than main, NCCL, tscope */
    double switches_step;       /* the main thread's involuntary context switches per
                                 * step, -1 not recorded */
    double faults_step;         /* the process's major page faults per step, -1 not recorded */
    double wait_step_ns;        /* the main thread's run-queue wait per step (runnable,
                                 * not running), -1 not recorded */
    double run_step_ns;         /* its time on the CPU per step (schedstat), -1 not recorded */
    double throttled_step_ns;   /* the cgroup's CPU throttled time per step, -1 not recorded */
    double copy_step_ns, copy_bytes_step; /* host-device copies: time and bytes per step */
    double p2p_step_ns, p2p_bytes_step;   /* NCCL send/recv: the time they stand for (a
                                           * grouped call: its share of its GroupEnd) */
    tsa_net_window net;
    int cpu_stat;               /* 1 cgroup cpu.stat sampled, 0 none, -1 not recorded */
    tsa_gpu_window gpu;
    double recv_step_ns;        /* time inside Recv calls per step */
    int32_t recv_peer[CM_RECV_PEERS]; /* ranks it received from, most time first */
    double recv_peer_ns[CM_RECV_PEERS];
    size_t n_recv_peers;
} cm_rank;

/* Measures rank index i, whose records r holds (a->job->ranks[i], or the
 * same rank read again), over a->ranks[i]'s window and a->steps steps.
 * Returns 0, or -1 when out of memory. */
int cm_measure(const tsa_analysis *a, size_t i, const tsa_rank *r, cm_rank *m);
void cm_free(cm_rank *m);

/* Median duration of signature sig on rank m, -1 when it has none. */
int64_t cm_sig_median(const cm_rank *m, uint64_t sig);

#endif
