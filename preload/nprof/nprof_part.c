/* The NCCL profiler plugin as the capture's core sees it (core/parts.h):
 * NCCL's plugin loader pointed here from the library constructor, the
 * plugin's counters in the metadata, its stalled proxy ops recorded at
 * each drain, and the check that NCCL loaded it once a communicator
 * exists. */
#include "nprof.h"
#include "parts.h"

const tsc_part tsc_nprof_part = {
    .name = "nprof",
    .activate = tsc_np_env_setup,
    .own_records = tsc_np_stalled_ops,
    .meta = tsc_np_publish_meta,
    .comm_created = tsc_np_after_init,
};
