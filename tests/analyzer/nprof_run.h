/* Test-bed jobs under the preload whose test NCCL loads tscope as its
 * profiler plugin: what test_nprof_e2e.c and test_nprof_events.c share.
 * Every job is 4 ranks, 4 steps, FAKENCCL_CHANNELS=3, with the extra
 * environment a test gives (which may set those again); dumps go to a folder per tag under a base
 * removed at the end.  The checks use cmocka's asserts. */
#ifndef NPROF_RUN_H
#define NPROF_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "load/job_load.h"

#define NP_RANKS 4
#define NP_CHANNELS 3
#define NP_STEPS 4   /* network steps per proxy op (the test NCCL's default) */

/* 0 when the test bed is built (TB_* variables), else 77 (skip). */
int np_ready(void);
/* The base folder (mkdir); np_done removes it (not with TSC_NP_KEEP set).  0 or -1. */
int np_begin(const char *name);
int np_done(void);

/* Runs the job; dir receives its dump folder.  The job's exit status.
 * A job that ran is reported by TB_REPORT streaming and --in-memory: the
 * two must print the same (JSON and text), or the test fails (a job with
 * send/recv, which may be a pipeline, is held whole by both: only a job
 * without them streams its ranks lean).
 * _with: more arguments for each rank (tsc-testbed-rank's options). */
int np_run(const char *tag, const char *env, char *dir, size_t cap);
int np_run_with(const char *tag, const char *env, const char *rank_args, char *dir, size_t cap);
tsa_job *np_load(const char *dir);   /* asserts 4 ranks */

int np_log_has(const char *dir, const char *needle);
/* 1 when a dump in dir holds the META pair key=value. */
int np_meta_has(const char *dir, const char *key, const char *value);
/* 1 when `tscope-report DIR ARGS` (TB_REPORT) prints needle. */
int np_report_has(const char *dir, const char *args, const char *needle);

int np_is_coll(uint8_t op);
int np_is_p2p(uint8_t op);
/* The size of a communicator, from the rank's NCCL calls (0 unknown). */
uint32_t np_comm_size(const tsa_rank *r, uint64_t comm_id);

#endif
