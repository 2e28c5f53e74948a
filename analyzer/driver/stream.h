/* The streaming report: a job of any size in bounded memory.
 *
 * tsa_stream_load reads the main run's dumps on `jobs` threads, one rank at
 * a time per thread: each rank is loaded in full, run through per-rank
 * stage 1 (its steps), and reduced to the lean rank tscope-report-mpi ships
 * (load/share_pack.h: NCCL calls, calls in flight, memory events,
 * telemetry, thread names) plus its steps and GEMMs; its kernels, copies,
 * syncs and API calls are freed before the thread takes the next dump.
 * The job that comes back holds only lean ranks (tsa_rank.remote).
 *
 * The analysis then runs with tsa_stream_runner: stage 2 runs on the lean
 * ranks (it reads only steps and GEMMs); stage 3, which needs the arrival
 * of every collective from the cross-rank pass, reads each rank's dump a
 * second time on `jobs` threads, runs stages 1 to 3 on it and keeps the
 * digest; the cause pass reads the few ranks it measures a third time.
 * Memory: the lean ranks, their results and digests, and one full rank per
 * thread.  The answer is the in-memory path's, byte for byte: the same
 * stage functions on the same records (tests/analyzer/test_stream_same.sh). */
#ifndef TSA_STREAM_H
#define TSA_STREAM_H

#include <stddef.h>

#include "load/job_load.h"
#include "model/model.h"
#include "passes/rank_stages.h"

typedef struct tsa_stream tsa_stream;

/* A job whose dumps take at most this many MiB is held whole by default
 * (tscope-report --stream-above): reading every dump once is faster than
 * streaming's two reads (three for the cause pass's ranks), and holding
 * it takes about 1.6 times its dumps.  256 MiB: the 8-rank, 0.5M-events-
 * a-rank job of scripts/bench-stream.sh (132 MiB) is held, 256 ranks x
 * 1,000 steps (454 MiB) streams. */
#define TSA_STREAM_ABOVE_MB 256

typedef struct tsa_stream_limits {
    int jobs;                       /* threads; < 1: the cores available */
    /* > 0: a dump larger than that is refused (a problem naming it; the
     * other ranks are loaded), so that one huge or hostile rank cannot
     * break the memory bound; 0: a quarter of the memory over the threads */
    unsigned long long max_rank_bytes;
    /* the main run's dumps take at most that many bytes: hold the job whole */
    unsigned long long stream_above;
} tsa_stream_limits;

/* Loads dir as tsa_job_load_ex does (same ranks, problems in the same
 * order, same errors), reduced as above.  0 with *job and *st set; 1 when
 * the dumps are small enough to be held whole (nothing loaded, *job and
 * *st NULL); -1 with err. */
int tsa_stream_load(const char *dir, const tsa_load_options *opt, const char *marker,
                    const tsa_stream_limits *lim, tsa_job **job, tsa_stream **st, char *err,
                    size_t err_len);

/* 1 when a pass of the analysis needs every rank's records at once, so
 * the job must be loaded whole (--in-memory) for the same answer: the
 * pipeline what-if (whatif/) replays every rank's kernels, and a job with
 * any Send or Recv call may be a pipeline (wi_topo.c); without one it
 * never is, and the what-if gives nothing either way. */
int tsa_stream_needs_whole(const tsa_job *job);

/* The runner for tsa_analyze_with on that job; valid until tsa_stream_free. */
const tsa_rank_runner *tsa_stream_runner(tsa_stream *st);

void tsa_stream_free(tsa_stream *st);

#endif
