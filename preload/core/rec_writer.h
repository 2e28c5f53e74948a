/* The writer thread: drains the rings once per flush period, or sooner
 * when a ring is half full, rewrites the metadata, runs the hang watchdog
 * and the own-cost governor. */
#ifndef TSC_REC_WRITER_H
#define TSC_REC_WRITER_H

/* At set-up; without a thread (said once) events are written only at exit. */
void tsc_rec_writer_start(void);

/* At exit: stop it, waiting at most 3 s (a writer stuck on a hung file
 * system must not keep the process from exiting). */
void tsc_rec_writer_stop(void);

/* In a forked child: the parent's writer and its wake-up fd are not ours. */
void tsc_rec_writer_after_fork(void);

#endif
