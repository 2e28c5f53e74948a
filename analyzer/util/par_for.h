/* Runs fn over the indices 0..n-1 on a few threads, each index once.  The
 * streaming report (driver/stream.h) loads and reduces ranks this way:
 * each index writes only its own slot, so the result does not depend on
 * the number of threads. */
#ifndef TSA_PAR_FOR_H
#define TSA_PAR_FOR_H

#include <stddef.h>

/* worker: 0..threads-1, the thread running the call (for per-thread
 * scratch).  fn returns 0, or nonzero to stop: the indices not yet
 * started are skipped and tsa_par_for returns -1.  threads < 1: 1. */
int tsa_par_for(size_t n, int threads, int (*fn)(void *ctx, size_t i, int worker), void *ctx);

/* The cores this process may run on (at least 1). */
int tsa_cores_available(void);

#endif
