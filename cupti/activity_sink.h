/* From CUPTI activity buffers to the recorder.
 *
 * Walks one completed buffer, translates each record (activity_xlate.h)
 * and writes it through preload/recorder.h: kernel and API names become
 * TSC_DESC_STRING descriptors (interned, so each name is written once per
 * producing thread), launch configurations and copy shapes become
 * descriptors, and every host thread seen in an API record gets a
 * TSC_DESC_THREAD with its name.  No CUPTI call here: the record iterator
 * is passed in, so tests feed hand-built records through the real path.
 */
#ifndef TSC_ACTIVITY_SINK_H
#define TSC_ACTIVITY_SINK_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_activity.h>

#include "activity_xlate.h"
#include "cupti_mode.h"

/* cuptiActivityGetNextRecord's shape. */
typedef CUptiResult (*tsc_next_record_fn)(uint8_t *buffer, size_t valid_size,
                                          CUpti_Activity **record);

typedef struct tsc_sink_stats {
    uint64_t records;      /* records read from buffers */
    uint64_t written;      /* events handed to the recorder */
    uint64_t skipped;      /* filtered or malformed */
    uint64_t overhead_ns;  /* CUPTI's own overhead (OVERHEAD records) */
} tsc_sink_stats;

/* Reset state (correlation cache, known threads, stats) and set the mode. */
void tsc_sink_reset(tsc_cupti_mode mode);

/* Translate and record every record of one buffer.  Safe from several
 * threads at once (CUPTI completes buffers on its own threads). */
void tsc_sink_buffer(uint8_t *buffer, size_t valid_size, tsc_next_record_fn next);

/* Record one translated record (interning its name and descriptor). */
void tsc_sink_emit(const tsc_xrec *x);

/* Define a TSC_DESC_THREAD for tid once per process, reading its name from
 * /proc/self/task/<tid>/comm when name is NULL. */
void tsc_sink_note_thread(uint32_t tid, const char *name);

tsc_sink_stats tsc_sink_get_stats(void);

#endif
