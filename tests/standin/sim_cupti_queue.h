/* Activity buffers of the stand-in CUPTI: where records are written and
 * how they are handed to the client.
 *
 * Two kinds of queue, as CUPTI keeps them: one global queue for records
 * not tied to a stream (API calls, synchronisations, external
 * correlations, markers), and one per context for device work.  Each
 * queue fills the buffer the client gave it (bufferRequested, called on
 * the thread that writes the record); a record that finds no buffer is
 * dropped and counted for cuptiActivityGetNumDroppedRecords.
 *
 * Device work becomes a record only when it has finished (its end time
 * has passed): until then it waits in flight.  A forced flush writes what
 * is still in flight as incomplete records (zero timestamps), which
 * cuptiActivityGetNextRecord reports as CUPTI_ERROR_INVALID_KIND.
 *
 * Delivery: the worker thread hands over full buffers; FlushAll hands
 * over every non-empty buffer on the calling thread, once the batch the
 * worker was writing is in its buffer.
 */
#ifndef SIM_CUPTI_QUEUE_H
#define SIM_CUPTI_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "sim_seam.h"

/* Size of one record of this kind as written into buffers (0: unknown). */
size_t simq_record_size(CUpti_ActivityKind kind);

void simq_set_callbacks(CUpti_BuffersCallbackRequestFunc req,
                        CUpti_BuffersCallbackCompleteFunc done);
int simq_have_callbacks(void);

/* Append a finished record to the global queue (ctx NULL) or a context's. */
void simq_append(CUcontext ctx, const void *rec, size_t size);

/* Device work in flight: turned into a record by simq_complete once done. */
void simq_work(CUcontext ctx, const sim_work *w);

/* Write every finished piece of work; a forced flush: also those still
 * running, as incomplete records.  A flush waits for the batch the worker
 * may be writing (STANDIN_WORKER_PARKS: see sim_cupti_park.h). */
typedef enum { SIMQ_WORKER, SIMQ_FLUSH, SIMQ_FLUSH_FORCED } simq_completer;
void simq_complete(simq_completer who);

/* Hand buffers to the client on this thread: only full ones, or all
 * non-empty ones. */
void simq_deliver(int only_full);

/* cuptiActivityGetNumDroppedRecords: read and reset. */
size_t simq_take_dropped(CUcontext ctx);

/* Totals for the stand-in's own report (STANDIN_TRUTH). */
typedef struct simq_totals {
    uint64_t records[64];       /* written, by CUpti_ActivityKind (clamped) */
    uint64_t dropped_kind[64];  /* of those, by kind */
    uint64_t dropped;           /* no buffer */
    uint64_t dropped_device;    /* of those, in a context's queue (device work) */
    uint64_t incomplete;        /* written incomplete by a forced flush */
    uint64_t buffers_delivered;
    uint64_t buffers_requested;
    uint64_t buffers_refused;
} simq_totals;
void simq_get_totals(simq_totals *t);

/* Convert a realtime timestamp to the clock records use (the client's
 * timestamp callback, if it registered one). */
uint64_t simq_timestamp(uint64_t realtime_ns);
void simq_set_timestamp_fn(uint64_t (*fn)(void));
uint64_t simq_now(void);

#endif
