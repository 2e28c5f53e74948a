/* Black-box mode (TSCOPE_MODE=blackbox, docs/blackbox.md): the recorder's
 * drained records go to bounded memory (bb_store) instead of the dump; the
 * dump gets one tsc_step_summary per step (bb_steps); triggers (anomaly,
 * hang, SIGUSR2, `tscope-ctl capture`) write the records of a step range
 * as a capture window, a complete dump per rank in
 * <TSCOPE_OUT>/capture-<trigger>/.  Every function but tsc_bb_signal runs
 * on the writer thread (or at exit) with the recorder's drain lock held:
 * the application's threads never wait for any of it. */
#ifndef TSC_BLACKBOX_H
#define TSC_BLACKBOX_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "dump_file.h"
#include "identity.h"
#include "tsc_format.h"

/* At set-up.  0, or -1 (no memory: said once; the caller records as in
 * the default mode). */
int tsc_bb_setup(const tsc_config *cfg, const tsc_identity *id, const char *host, uint32_t pid);
int tsc_bb_on(void);
/* Bytes of memory black-box mode holds for records (0 when off). */
size_t tsc_bb_memory_bytes(void);

/* Drained slots of one thread (or the GPU stream). */
void tsc_bb_take(uint32_t tid, const tsc_event *slots, size_t n);

/* Once per flush period: step summaries into the dump, the trigger
 * folder read, anomalies and SIGUSR2 turned into triggers, windows that
 * are due written, retention applied, the metrics file rewritten. */
void tsc_bb_period(tsc_dump *dump, uint64_t dropped_total);

/* The hang watchdog found a call in flight for TSCOPE_HANG_S. */
void tsc_bb_hang(uint64_t comm, uint64_t seq, const char *what);

/* At exit: the last summaries, and pending windows with what is there. */
void tsc_bb_exit(tsc_dump *dump);

/* The /metrics socket for the writer's poll (-1: none), and its answer
 * when it is readable. */
int tsc_bb_http_fd(void);
void tsc_bb_http_serve(void);

/* From the SIGTERM handler (async-signal-safe): ask the writer thread for
 * the window of the last steps (reason "term") and wait for it at most ms
 * milliseconds.  1 when it was written in time. */
int tsc_bb_term_window(unsigned ms);
int tsc_bb_term_pending(void);

/* Writer thread, drain lock held, after a drain: the SIGTERM window, the
 * summaries and the metrics file, then the handler is told. */
void tsc_bb_term(tsc_dump *dump, uint64_t dropped_total);

/* From the SIGUSR2 handler: async-signal-safe. */
void tsc_bb_signal(void);
int tsc_bb_signal_pending(void);

/* Black-box mode as the recorder's other sink (core/sink.h). */
struct tsc_sink;
extern const struct tsc_sink tsc_bb_sink;

#endif
