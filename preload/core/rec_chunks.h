/* The recorder's own chunks: the metadata (META) and the end marker (END),
 * and the counters they carry.  Drain lock held for the writes. */
#ifndef TSC_REC_CHUNKS_H
#define TSC_REC_CHUNKS_H

#include <stdint.h>

/* Records dropped so far: every thread's ring and those lost outside one. */
uint64_t tsc_rec_total_dropped(void);

/* The META chunk, now.  from_signal: no dlsym, bounded meta lock. */
void tsc_rec_write_meta_chunk(int from_signal);

/* The END chunk, closing the dump with `reason` ("exit", a signal...). */
void tsc_rec_write_end_chunk(const char *reason);

#endif
