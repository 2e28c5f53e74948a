/* The capture's optional parts, the one place that names them all.  Each
 * part's table (core/parts.h), and black-box mode as the recorder's other
 * sink (core/sink.h), are registered here before any other code of the
 * library runs; the parts in the order the core calls them at each moment
 * (the GPU part stops before the sampler at exit; the NCCL version is in
 * the metadata before the plugin's counters). */
#include "parts.h"

#include "blackbox.h"
#ifdef TSC_HAVE_CUPTI
#include "cupti_control.h"
#endif
#include "nccl_wrap.h"
#include "nprof.h"
#include "process.h"
#include "sink.h"
#include "telemetry.h"

static const tsc_part process_part = {.name = "process", .setup = tsc_lifecycle_on_setup};

static const tsc_part *const all_parts[] = {
#ifdef TSC_HAVE_CUPTI
    &tsc_cupti_part,
#endif
    &tsc_nccl_part, &tsc_nprof_part, &tsc_telemetry_part, &process_part,
};

_Static_assert(sizeof all_parts / sizeof all_parts[0] <= TSC_PARTS_MAX,
               "more parts than core/parts.h makes room for");

/* Priority 101: before the library's other constructors (lifecycle.c's
 * activates the parts), so a recorder set up early knows its parts too. */
__attribute__((constructor(101))) static void register_parts(void)
{
    for (size_t i = 0; i < sizeof all_parts / sizeof all_parts[0]; i++)
        tsc_parts_register(all_parts[i]);
    tsc_sink_register(&tsc_bb_sink);
}
