/* CPU contention measured directly, for the host cause: the time the
 * blamed rank's main thread waited for a CPU while runnable, per second it
 * got on one, against its peers' (format 1.4 SCHED_WAIT/SCHED_RUN), and the
 * time its cgroup's CPU quota held it off the CPU (CPU_THROTTLE).
 * docs/findings.md ("CAUSE host") gives the rule. */
#ifndef TSA_CAUSE_CONTENTION_H
#define TSA_CAUSE_CONTENTION_H

#include "cause_peers.h"

/* Its main thread waits for a CPU per second on one at least this many
 * times its peers' rate (a busy machine makes every rank wait alike; a
 * rank sharing its cores with a stray process waits more per CPU second)... */
#define TSA_TH_CAUSE_WAIT_RATIO 1.5
/* ... or its cgroup was throttled at least this many times its peers' time. */
#define TSA_TH_CAUSE_THROTTLE_RATIO 2.0

/* Fills out (the host cause) when run-queue wait or cgroup throttling
 * beyond its peers' explains at least TSA_TH_CAUSE_REL of the peers' step:
 * the explained time is the excess, at most the rank's extra.  Returns 1
 * when it did. */
int cause_contention(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                     const tsa_cause_block *b, candidate *out);

/* 1 when the run-queue wait per CPU ms is recorded for the rank and its
 * peers (then the other signs of contention defer to it). */
int cause_contention_measured(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np);

/* The wall time a millisecond of main-thread CPU costs on the peers: the
 * millisecond plus the run-queue wait that comes with it on this machine;
 * NAN where the peers' run-queue wait is not recorded. */
double cause_cpu_pace(cause_ctx *c, const size_t *peers, size_t np);

/* "; main thread waited 4.10 vs 0.30 ms per step for a CPU (...)" and the
 * throttled time, appended at *at when recorded. */
void cause_contention_words(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                            char *buf, size_t cap, int *at);

#endif
