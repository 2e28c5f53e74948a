/* One dump record as a JSON object: the single encoding behind both
 * `dump --json` (printed as is) and plain `dump` (printed as key=value).
 * 64-bit integers are written as exact JSON numbers (raw text), never via
 * double; ids that are addresses or hashes (comm, stream of an NCCL call,
 * external correlation id) are hex strings "0x%016llx". */
#ifndef TSR_RECORD_JSON_H
#define TSR_RECORD_JSON_H

#include <cjson/cJSON.h>

#include "dump_reader.h"
#include "utf8_clean.h"

/* Common keys rank, kind, start_ns, end_ns, tid, then the kind's keys.
 * tid: host events (nccl, gemm, nvtx, clock) the chunk's thread; sync and
 * api the calling thread from their descriptor; kernel, memcpy, memset and
 * extcorr the thread that wrote the CUPTI records (not meaningful).
 * A record whose descriptor is missing has "desc" (the id) and "error".
 * nccl_op: the kernel's NCCL op (kernels only), or NULL.  NULL on OOM. */
cJSON *tsr_event_json(const tsr_file *f, const tsr_event *e, int rank, const char *nccl_op);

/* {"rank","kind":"meta","chunk":"META"|"END","key","value"} */
cJSON *tsr_meta_json(int rank, const char *key, const char *value, int end_chunk);

/* {"rank","kind":"desc","id","type","len","tid",...} */
cJSON *tsr_desc_json(const tsr_desc *d, int rank);

#endif
