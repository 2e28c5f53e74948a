/* The counters every recorder stream shares: descriptor ids, the intern
 * generation, records lost before the recorder.  They sit under the
 * recorder in their own file so that the streams beside it (the GPU
 * stream, the inline per-thread path) use them without calling up into
 * the recorder's files above them, which call down. */
#ifndef TSC_REC_COUNTERS_H
#define TSC_REC_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

/* The next descriptor id (ids start at 1, unique in the file). */
extern _Atomic uint32_t tsc_rec_next_desc_g;
/* Bumped when descriptors may be lost (a failed write). */
extern _Atomic uint64_t tsc_rec_intern_gen_g;
/* Records lost outside any thread's ring (no buffer, CUPTI's own drops). */
extern _Atomic uint64_t tsc_rec_dropped_extra_g;

/* A fresh descriptor id (unique in the file). */
uint32_t tsc_rec_new_desc_id(void);

/* Changes when a failed write may have lost descriptor definitions: every
 * stream must define its descriptors again. */
uint64_t tsc_rec_intern_generation(void);

/* Count records that were lost before reaching the recorder (e.g. CUPTI's
 * own dropped records), so the dump says what it misses. */
void tsc_rec_count_dropped(uint64_t n);

#endif
