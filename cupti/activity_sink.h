/* From CUPTI activity buffers to dump records.
 *
 * Walks one completed buffer, translates each record (activity_xlate.h),
 * folds each kernel into the call that launched it (launch_fold.h) and
 * writes the result through an output: kernel and API names become
 * TSC_DESC_STRING descriptors, launch configurations and copy shapes
 * become descriptors, and every host thread seen gets a TSC_DESC_THREAD
 * with its name.  Buffers are translated on the recorder's writer thread
 * into the GPU record stream (preload/core/bulk_stream.h); records made by
 * callbacks on an application thread (memory_capture.c) go through that
 * thread's ring.  No CUPTI call here: the record iterator is passed in,
 * so tests feed hand-built records through the real path.
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

/* Where records go (recorder.h's calls, or bulk_stream.h's). */
typedef struct tsc_sink_out {
    uint32_t (*intern)(uint8_t desc_type, const void *payload, uint16_t len);
    uint32_t (*string)(const char *s, size_t len);
    void (*event)(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc, uint64_t start_ns,
                  uint64_t end_ns, uint64_t val);
    /* Changes when ids handed out before may no longer be defined in the
     * file; NULL: ids are not cached for this output. */
    uint64_t (*generation)(void);
} tsc_sink_out;

/* The calling thread's ring. */
extern const tsc_sink_out tsc_sink_to_ring;

typedef struct tsc_sink_stats {
    uint64_t records;          /* records read from buffers */
    uint64_t written;          /* events handed to the output */
    uint64_t skipped;          /* filtered or malformed */
    uint64_t incomplete;       /* handed over unfinished (CUPTI_ERROR_INVALID_KIND) */
    uint64_t overhead_ns;      /* CUPTI's own overhead (OVERHEAD records) */
    uint64_t kernels;          /* kernel records written, with their call or alone */
    uint64_t kernels_folded;   /* of those, with their call */
    uint64_t calls_alone;      /* launch calls written without their kernel (which may
                                * have come alone, or never) */
    uint64_t light_launches_not_nccl; /* light mode: cuLaunchKernelEx calls made outside
                                       * NCCL's calls, left out (nccl_launch_gate.h) */
    uint64_t device_work;      /* copies, memsets, syncs and API records written (kernels
                                * and launch calls alone are counted above) */
} tsc_sink_stats;

/* Reset state (correlation cache, known threads, fold, stats) and set the
 * mode.  0, or -1 when the fold's tables could not be allocated (kernels
 * and their calls are then written apart). */
int tsc_sink_reset(tsc_cupti_mode mode);

/* A full-mode sink stepped down to light by the budget (light_step.h):
 * new launch calls are filtered as light mode does; the fold stays, for
 * the kernels still on their way.  on = 0 steps back to full.  Nothing
 * in a sink that did not start in full mode. */
void tsc_sink_set_light(int on);

/* Translate and write every record of one buffer.  One thread at a time
 * (the writer): the fold is not shared. */
void tsc_sink_buffer(uint8_t *buffer, size_t valid_size, tsc_next_record_fn next,
                     const tsc_sink_out *out);

/* One flush period passed: halves that waited too long for their partner
 * are written alone.  ext_redundant: CUPTI's clock is tscope's, so a
 * folded kernel's external correlation record can be left out. */
void tsc_sink_age(const tsc_sink_out *out, int ext_redundant);

/* The end: everything still waiting is written. */
void tsc_sink_finish(const tsc_sink_out *out);

/* Record one translated record (interning its name and descriptor). */
void tsc_sink_emit(const tsc_xrec *x, const tsc_sink_out *out);

/* Define a TSC_DESC_THREAD for tid once per process, reading its name from
 * /proc/self/task/<tid>/comm when name is NULL. */
void tsc_sink_note_thread(uint32_t tid, const char *name, const tsc_sink_out *out);

tsc_sink_stats tsc_sink_get_stats(void);

/* Memory the fold's tables hold (they never shrink).  The thread that
 * translates buffers only. */
uint64_t tsc_sink_fold_bytes(void);

#endif
