/* The GPU record stream: what the writer thread translates from CUPTI's
 * activity buffers goes straight into the dump from here, in chunks of
 * its own (tid TSC_GPU_STREAM_TID), with descriptors interned for this
 * stream alone.
 *
 * CUPTI hands back tens of thousands of records per buffer, far more than
 * a thread's ring holds, so they never pass through a ring: nothing is
 * dropped for lack of ring space, and no application thread does the
 * work.  Every function here must be called with the recorder's drain
 * lock held (only the drain hook, tsc_cupti_drain_hook, does), which also
 * orders these chunks with the rest of the file.  Records are staged and
 * written as a chunk when the staging area fills or on tsc_bulk_commit.
 */
#ifndef TSC_BULK_STREAM_H
#define TSC_BULK_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* Descriptor id in this stream (defined in it on first use), 0 when it
 * could not be. */
uint32_t tsc_bulk_intern(uint8_t desc_type, const void *payload, uint16_t len);
uint32_t tsc_bulk_string(const char *s, size_t len);

/* Stage one event.  Kinds that need a descriptor are dropped (and
 * counted) when desc is 0. */
void tsc_bulk_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc, uint64_t start_ns,
                    uint64_t end_ns, uint64_t val);

/* Write what is staged as one chunk. */
void tsc_bulk_commit(void);

/* Changes whenever descriptors defined before may be missing from the file
 * (a chunk failed to write): ids from tsc_bulk_intern must be asked again. */
uint64_t tsc_bulk_generation(void);

/* Kernel records (TSC_EV_KERNEL, TSC_EV_KERNEL_LAUNCH) in chunks that
 * could not be written (full disk, I/O error). */
uint64_t tsc_bulk_kernels_lost(void);

/* A forked child starts with an empty stream. */
void tsc_bulk_reset(void);

#endif
