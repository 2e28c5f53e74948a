/* Which NCCL operation a GPU kernel belongs to, within one dump.
 *
 * NCCL host calls push a CUPTI external correlation id derived from their
 * own event (TSC_EXTCORR_ID(desc, seq)); CUPTI's EXTCORR records tie that
 * id to the correlation id of the launch API call, which the kernel shares.
 * The records may come in any order in the file (different threads' chunks),
 * so the join is built in a first pass and queried in a second. */
#ifndef TSR_NCCL_JOIN_H
#define TSR_NCCL_JOIN_H

#include "dump_reader.h"
#include "u64_map.h"

typedef struct tsr_nccl_join {
    tsr_u64_map ext_to_op;    /* external id -> enum tsc_nccl_op */
    tsr_u64_map corr_to_ext;  /* CUPTI correlation id -> external id */
} tsr_nccl_join;

/* First pass: feed every event (NCCL and EXTCORR are used). */
void tsr_nccl_join_add(tsr_nccl_join *j, const tsr_event *e);

/* Second pass: the NCCL op of a kernel event, or NULL.  Prefers the
 * correlation join; a kernel launched by GroupEnd (grouped calls) or not
 * joined falls back to the op named in an NCCL kernel name. */
const char *tsr_nccl_join_kernel_op(const tsr_nccl_join *j, const tsr_file *f,
                                    const tsr_event *e);

void tsr_nccl_join_free(tsr_nccl_join *j);

#endif
