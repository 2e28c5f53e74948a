/* One process's share of a job (its loaded ranks and the problems met
 * loading them) as a flat byte buffer, so that tscope-report-mpi can ship
 * it to process 0.  The ranks go as remote ranks (tsa_rank.remote): their bulk records
 * stay on the sending process, which runs the per-rank stages on them
 * (stage_pack.h); what travels is what the job-level passes read (NCCL
 * calls, threads and names, calls in flight, memory events, telemetry,
 * the NCCL profiler plugin's records reduced: nprof_lean.h).  The buffer holds raw structs: writer and reader must be
 * the same build (one binary on a homogeneous cluster).  The reader still
 * bounds-checks every length, and fails cleanly on a short or bad buffer. */
#ifndef TSA_SHARE_PACK_H
#define TSA_SHARE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "pack_buf.h"

/* Appends job's ranks, as remote ranks, and its problems from index first_problem on;
 * home: the sending process.  -1 on OOM. */
int tsa_share_pack(const tsa_job *job, size_t first_problem, uint32_t home, tsa_pack_buf *out);

/* Moves the ranks and problems of a packed share into job (appended).
 * Returns 0, or -1 when the buffer is malformed or memory runs out (job
 * then holds what was appended before the failure, all of it valid). */
int tsa_share_unpack(const unsigned char *data, size_t len, tsa_job *job);

/* The same for a buffer this process packed (the streaming report): the
 * compact calls are taken as they are, not decoded again to be checked
 * (lean_calls.h). */
int tsa_share_unpack_own(const unsigned char *data, size_t len, tsa_job *job);

#endif
