/* The recorder: the one way code inside the preload library (NCCL wrappers,
 * CUPTI capture) puts records into this process's dump.
 *
 * Every call is safe from any thread at any time: before set-up, after the
 * final flush, in a forked child, with recording disabled or the buffers
 * full.  In those cases it records nothing (and counts what it dropped).
 * Set-up is lazy: the first call that needs to record opens the dump, so a
 * process that never records writes no file.  No call takes a lock on the
 * hot path; each thread appends to its own bounded buffer and a background
 * writer drains the buffers into chunks.
 */
#ifndef TSC_RECORDER_H
#define TSC_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "rec_counters.h"
#include "rec_meta.h"
#include "tsc_format.h"
#include "warn.h"

/* CLOCK_REALTIME in nanoseconds: the time scale of every record. */
uint64_t tsc_now_ns(void);

/* 1 when records from this process can be kept (not disabled, set-up did
 * not fail, not a child after fork).  Performs the lazy set-up on first
 * call.  Wrappers call it before timing so a disabled process pays only
 * this check. */
int tsc_rec_active(void);

/* Descriptor id for (type, payload) in the calling thread's intern table,
 * defining it in the thread's stream the first time.  0 when it could not
 * be recorded (the event that would refer to it should then be dropped:
 * tsc_rec_event with desc 0 is counted as dropped for kinds that need one). */
uint32_t tsc_rec_intern(uint8_t desc_type, const void *payload, uint16_t len);

/* Shorthand for a TSC_DESC_STRING descriptor. */
uint32_t tsc_rec_string(const char *s, size_t len);

/* Append one event to the calling thread's buffer. */
void tsc_rec_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
                   uint64_t start_ns, uint64_t end_ns, uint64_t val);

/* Drain every thread's buffer to the dump now (periodic flush, exit,
 * signals).  Async-signal-safe. */
void tsc_rec_flush(void);

/* Ask the writer thread to drain soon (CUPTI handed a buffer back).
 * Never blocks; errno is kept. */
void tsc_rec_wake_writer(void);

/* From one of CUPTI's threads (never the application's) when the writer
 * falls behind: translate the CUPTI buffers waiting now on this thread,
 * if no drain is running (otherwise it will get to them).  errno kept. */
void tsc_rec_help_drain(void);


#endif
