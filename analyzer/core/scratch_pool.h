/* Reuse of large loader buffers from one rank to the next. */
#ifndef TSA_SCRATCH_POOL_H
#define TSA_SCRATCH_POOL_H

#include <stddef.h>

/* While the pool is open (one loader, one thread), buffers of 1 MiB and
 * more that are given back are kept instead of freed, and a later request
 * takes the smallest kept buffer that is large enough.  A fresh buffer
 * costs a page fault and the kernel's zeroing of every page on first
 * touch: with ranks of similar size, the sort keys, merge buffers and
 * unsorted record arrays of one rank become the next rank's.  Closed (the
 * default), take is malloc and give is free. */
void tsa_scratch_open(void);
/* Frees every kept buffer and closes the pool. */
void tsa_scratch_close(void);

/* A buffer of at least bytes (NULL when out of memory); *got, when not
 * NULL, receives its usable size (>= bytes). */
void *tsa_scratch_take(size_t bytes, size_t *got);
/* Gives back p, of usable size bytes (as taken or as allocated). */
void tsa_scratch_give(void *p, size_t bytes);

#endif
