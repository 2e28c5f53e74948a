/* Recorder functions used only inside the preload library (lifecycle,
 * NCCL wrappers) and by the capture tests; not part of the API that the
 * CUPTI capture uses (that is recorder.h). */
#ifndef TSC_RECORDER_INTERNAL_H
#define TSC_RECORDER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "rec_counters.h"
#include "warn.h"

/* The configuration read at start (loaded on first use if the constructor
 * did not run, e.g. in tests). */
const tsc_config *tsc_rec_config(void);

/* Constructor: read the environment once.  With TSCOPE_DISABLE=1 the
 * recorder is off for the life of the process. */
void tsc_rec_load_config(void);

/* getenv as the configuration reads it (the identity too). */
const char *tsc_rec_getenv(const char *name);

/* 1 when this process (not a vfork child sharing our memory) owns an
 * active dump. */
int tsc_rec_owned_here(void);

/* Drain everything, write META and an END chunk with end_reason `reason`.
 * from_signal: only async-signal-safe work, bounded wait for the drain
 * lock.  Leaves the recorder active (the process may go on). */
void tsc_rec_finish(const char *reason, int from_signal);

/* atexit: CUPTI exit hook, stop the writer thread, final flush + END,
 * then nothing more is recorded. */
void tsc_rec_exit(void);

/* The META payload as the dump's META chunk has it (every stored pair,
 * the clock anchors and counters) plus n extra pairs.  Drain lock held.
 * Returns the length, 0 if it did not fit. */
size_t tsc_rec_meta_payload(char *buf, size_t cap, const char *const *keys,
                            const char *const *vals, size_t n, int from_signal);

/* Host name as written in the metadata (empty before set-up). */
const char *tsc_rec_host(void);

/* For the GPU record stream (bulk_stream.c), drain lock held: write n
 * slots (holding `events` events) as one EVENTS chunk of thread `tid`.
 * 0, or -1 when the write failed (counted as lost bytes, said once). */
int tsc_rec_write_slots_locked(uint32_t tid, const tsc_event *slots, size_t n, uint64_t events);

/* The NCCL calls in flight now (threads inside one, as the hang
 * watchdog sees them) and the entry time of the oldest (0 when none).
 * Only reads the threads' in-flight records. */
void tsc_rec_inflight(uint32_t *calls, uint64_t *oldest_t0);

/* 1 while the writer thread runs and has not been told to stop. */
int tsc_rec_writer_alive(void);

/* The status the process is exiting with (exit, _exit): the END chunk
 * records it as exit_code. */
void tsc_rec_set_exit_code(int code);

/* What tscope's own cost figure needs from the recorder (self_cost.h):
 * counters it keeps anyway.  Any thread. */
struct tsc_cost_inputs;
void tsc_rec_cost_inputs(struct tsc_cost_inputs *in);

/* Counters for tests and the benchmark. */
typedef struct tsc_rec_stats {
    uint64_t events_written;
    uint64_t dropped;
    uint64_t bytes_written;
    uint64_t bytes_lost;
    uint32_t threads;
    char path[4096];
} tsc_rec_stats;
void tsc_rec_get_stats(tsc_rec_stats *s);

#endif
