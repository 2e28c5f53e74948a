/* The GPU part as the capture's core sees it (core/parts.h): CUPTI set up
 * from the library constructor, its buffers handed over at each flush and
 * translated at each drain, stopped at exit, and the external correlation
 * ids pushed around NCCL calls. */
#include "cupti_control.h"
#include "parts.h"

const tsc_part tsc_cupti_part = {
    .name = "cupti",
    .activate = tsc_cupti_constructor_hook,
    .flush = tsc_cupti_flush_hook,
    .drain = tsc_cupti_drain_hook,
    .exit = tsc_cupti_exit_hook,
    .saw_no_device_work = tsc_cupti_saw_no_device_work,
    .push_corr = tsc_cupti_push_extcorr,
    .pop_corr = tsc_cupti_pop_extcorr,
};
