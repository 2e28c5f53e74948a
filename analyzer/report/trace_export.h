/* Chrome trace / Perfetto JSON of a whole job on the aligned clock.
 *
 * One process per rank ("rank N (host)"), tracks for each GPU stream and
 * each host thread, a "steps" track, a "phases" track and a "comm" track;
 * NCCL calls carry bytes, communicator, sequence number, and the wait and
 * transfer of their collective instance; flows join each host call to the
 * kernel it launched.  docs/views.md describes the layout. */
#ifndef TSA_TRACE_EXPORT_H
#define TSA_TRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct tsa_trace_options {
    long step_first, step_last;   /* inclusive step indices; -1: no window */
    uint64_t max_bytes;           /* > 0: start a new part file past this size */
    int gzip;                     /* 1 force, 0 never, -1 by the name (.gz) */
    /* --- appended --- */
    const struct tsa_pipe_result *pipe; /* pipeline what-if (whatif/whatif.h): the
                                         * critical path of each step as flows, NULL none */
} tsa_trace_options;

void tsa_trace_default_options(tsa_trace_options *opt);

/* Fixed track ids inside each rank's process. */
#define TSA_TRACE_TID_STEPS 2100000001
#define TSA_TRACE_TID_PHASES 2100000002
#define TSA_TRACE_TID_COMM 2100000003
/* GPU stream tracks: base + device * 1e6 + stream. */
#define TSA_TRACE_TID_GPU_BASE 1000000000

/* Process id of a rank's process in the trace. */
int64_t tsa_trace_pid(const tsa_rank *r, size_t index);

/* Writes the trace to path (part 1) and, when max_bytes splits it,
 * stem.part2.json[.gz], ...  *files receives the paths written (free each
 * and the array).  Uses job->ranks[i].clock_offset_ns, .steps and kernel
 * phases when the analysis filled them.  Returns 0, or -1 with a message
 * in err. */
int tsa_trace_export(const tsa_job *job, const tsa_trace_options *opt, const char *path,
                     char ***files, size_t *n_files, char *err, size_t errlen);

/* Name of part k (1-based) of a trace written to path. */
char *tsa_trace_part_path(const char *path, size_t k);

#endif
