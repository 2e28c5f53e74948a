/* The hang watchdog (TSCOPE_HANG_S): NCCL calls in flight for too long. */
#ifndef TSC_REC_WATCHDOG_H
#define TSC_REC_WATCHDOG_H

#include <stddef.h>

/* Under the drain lock, after a drain (so each call's descriptor and
 * ENTER are in the file before its HANG slot).  Every thread inside an
 * NCCL call for at least TSCOPE_HANG_S gets one HANG slot in its own
 * stream and one line in msg; returns the length of msg.  Only reads the
 * threads' in-flight fields: the job's threads are never stopped or waited
 * for. */
size_t tsc_rec_check_hangs(char *msg, size_t cap);

#endif
