/* The kinds of event slot a dump holds: one line each, and everything else
 * follows from it: the dump's kind codes (enum tsc_event_kind), which kinds
 * the writer refuses without a descriptor (preload/core/rec_events.c, the GPU
 * bulk stream), the reader's names and descriptor checks, the keys of
 * `dump --json` (analyzer/reader/record_json.c) and the loader's routing of
 * a block of kinds to its reader (analyzer/load/job_load.c).
 *
 *   X(ID, CODE, NAME, DESC, RANGE, TIMES, JSON)
 *
 *   ID     enum suffix: TSC_EV_<ID>
 *   CODE   byte 0 of the slot in dumps: append-only, never reused, never 0
 *          (zeroed memory is garbage); docs/format.md lists them
 *   NAME   the kind's name in `dump` and `dump --json`
 *   DESC   the descriptor type `desc` refers to, TSC_DESC_<DESC>; NONE: the
 *          slot's desc holds something else (a count, a plugin id, 0) and
 *          the writer takes the record without one
 *   RANGE  the block of codes it belongs to (TSC_EVENT_RANGES below): the
 *          loader hands a whole block to one reader, which skips the codes
 *          of a newer dump it does not know
 *   TIMES  1: start_ns/end_ns are times of the record; 0: they hold
 *          something else (0, 0 or durations), so a reader that orders or
 *          windows records by time leaves them out
 *   JSON   the kind's own keys in `dump --json`, after rank, kind,
 *          start_ns, end_ns and tid, as analyzer/reader/record_json.c
 *          writes them: DESCR(layout), json_<layout> from the descriptor
 *          ("undefined descriptor" when it is not usable); SLOT(layout),
 *          json_<layout> from the slot's fields alone; VAL(key), val as
 *          the one key; NONE, no keys
 *
 * Adding a kind: one line here (a free CODE in its block), the call that
 * records it (its producer), the code that reads it (its consumer: the
 * block's reader or the loader), its row in docs/format.md, and a json_
 * function only when neither VAL nor an existing layout describes it
 * (docs/architecture.md, "Adding an event kind"). */
#ifndef TSC_EVENT_KINDS_H
#define TSC_EVENT_KINDS_H

/* The table names descriptor types: tsc_format.h includes this file after
 * enum tsc_desc_type (an include back would be a cycle). */
#ifndef TSC_FORMAT_H
#error "include tsc_format.h, which includes tsc_event_kinds.h"
#endif

#include <stdint.h>

#define TSC_EVENT_KINDS(X)                                                                    \
    /* descriptor definition: a tsc_desc_head, never an event */                              \
    X(DESC, 0x01, desc, NONE, CORE, 1, NONE)                                                  \
    /* one NCCL API call, host side; 1.1: an entry still in flight; the watchdog */           \
    X(NCCL, 0x10, nccl, NCCL_CALL, CORE, 1, DESCR(nccl_call))                                 \
    X(NCCL_ENTER, 0x11, nccl_enter, NCCL_CALL, CORE, 1, DESCR(nccl_call))                     \
    X(HANG, 0x12, hang, NCCL_CALL, CORE, 1, DESCR(nccl_call))                                 \
    /* the GPU capture: CUPTI records, cuBLAS calls, NVTX ranges */                           \
    X(KERNEL, 0x20, kernel, KERNEL, CORE, 1, DESCR(kernel))                                   \
    X(MEMCPY, 0x21, memcpy, COPY, CORE, 1, DESCR(copy))                                       \
    X(MEMSET, 0x22, memset, COPY, CORE, 1, DESCR(copy))                                       \
    X(SYNC, 0x23, sync, SYNC, CORE, 1, DESCR(sync))                                           \
    X(API, 0x24, api, API, CORE, 1, DESCR(api))                                               \
    X(GEMM, 0x25, gemm, GEMM, CORE, 1, DESCR(gemm))                                           \
    X(NVTX, 0x26, nvtx, STRING, CORE, 1, DESCR(nvtx))                                         \
    X(EXTCORR, 0x27, extcorr, NONE, CORE, 0, SLOT(extcorr))                                   \
    X(MEM_ALLOC, 0x28, mem_alloc, MEM, CORE, 1, DESCR(mem))                                   \
    X(MEM_FREE, 0x29, mem_free, MEM, CORE, 1, DESCR(mem))                                     \
    X(MEM_POOL, 0x2a, mem_pool, MEM, CORE, 1, DESCR(mem))                                     \
    X(KERNEL_LAUNCH, 0x2b, kernel_launch, KERNEL_LAUNCH, CORE, 1, DESCR(kernel_launch))       \
    X(GRAPH_NODE, 0x2c, graph_node, GRAPH_NODE, CORE, 1, DESCR(graph_node))                   \
    /* clock sample: start = realtime, end = the other clock, val = monotonic */              \
    X(CLOCK, 0x30, clock, NONE, CORE, 1, VAL(monotonic_ns))                                   \
    /* telemetry: the sampler thread's values, written when they change */                    \
    X(GPU_METRIC, 0x40, gpu_metric, NONE, TELEMETRY, 1, SLOT(gpu_metric))                     \
    X(PROC_CPU, 0x41, proc_cpu, NONE, TELEMETRY, 1, SLOT(proc_cpu))                           \
    X(TASK_CPU, 0x42, task_cpu, TASK, TELEMETRY, 1, DESCR(task_cpu))                          \
    X(HOST_LOAD, 0x43, host_load, NONE, TELEMETRY, 1, SLOT(host_load))                        \
    X(PROC_SWITCHES, 0x44, proc_switches, NONE, TELEMETRY, 1, VAL(involuntary_switches))      \
    X(PROC_FAULTS, 0x45, proc_faults, NONE, TELEMETRY, 1, VAL(major_faults))                  \
    X(SCHED_WAIT, 0x46, sched_wait, NONE, TELEMETRY, 1, VAL(runqueue_wait_ns))                \
    X(SCHED_RUN, 0x47, sched_run, NONE, TELEMETRY, 1, VAL(on_cpu_ns))                         \
    X(CPU_THROTTLE, 0x48, cpu_throttle, NONE, TELEMETRY, 1, SLOT(cpu_throttle))               \
    X(NET_COUNTER, 0x49, net_counter, STRING, TELEMETRY, 1, DESCR(net_counter))               \
    /* the NCCL profiler plugin (docs/nccl-plugin.md); PROXY_WAIT holds durations */          \
    X(NP_COMM, 0x50, np_comm, NONE, PLUGIN, 1, SLOT(np_comm))                                 \
    X(NP_COLL, 0x51, np_coll, NONE, PLUGIN, 1, SLOT(np_coll))                                 \
    X(NP_PROXY, 0x52, np_proxy, NONE, PLUGIN, 1, SLOT(np_proxy))                              \
    X(NP_PROXY_WAIT, 0x53, np_proxy_wait, NONE, PLUGIN, 0, SLOT(np_proxy_wait))               \
    X(NP_KERNEL_CH, 0x54, np_kernel_ch, NONE, PLUGIN, 1, SLOT(np_kernel_ch))                  \
    X(NP_CE_COLL, 0x55, np_ce_coll, NONE, PLUGIN, 1, SLOT(np_ce_coll))                        \
    X(NP_CE_SYNC, 0x56, np_ce_sync, NONE, PLUGIN, 1, SLOT(np_ce_sync))                        \
    X(NP_CE_BATCH, 0x57, np_ce_batch, NONE, PLUGIN, 1, SLOT(np_ce_batch))                     \
    X(NP_CAPTURED, 0x58, np_captured, NONE, PLUGIN, 1, SLOT(np_captured))                     \
    X(NP_PROXY_STALL, 0x59, np_proxy_stall, NONE, PLUGIN, 1, SLOT(np_proxy_stall))

/* The blocks of codes, as docs/format.md reserves them:
 *   R(RANGE, FIRST, LAST) */
#define TSC_EVENT_RANGES(R)                                                                   \
    R(CORE, 0x01, 0x3f)      /* the recorder's own kinds and the GPU capture's */             \
    R(TELEMETRY, 0x40, 0x4f) /* the sampler thread (docs/format.md, "Telemetry") */           \
    R(PLUGIN, 0x50, 0x5f)    /* the NCCL profiler plugin */

enum tsc_event_kind {
#define TSC_EVENT_KIND_ENUM(id, code, name, desc, range, times, json) TSC_EV_##id = code,
    TSC_EVENT_KINDS(TSC_EVENT_KIND_ENUM)
#undef TSC_EVENT_KIND_ENUM
};

enum tsc_event_range {
    TSC_EVR_NONE = 0, /* a code outside every block (damage, or a newer format) */
#define TSC_EVENT_RANGE_ENUM(range, first, last) TSC_EVR_##range,
    TSC_EVENT_RANGES(TSC_EVENT_RANGE_ENUM)
#undef TSC_EVENT_RANGE_ENUM
};

/* Every kind's code lies inside its block, so routing by block (below) and
 * by the table agree. */
enum tsc_event_range_bounds {
#define TSC_EVENT_RANGE_BOUNDS(range, first, last) \
    TSC_EVR_FIRST_##range = first, TSC_EVR_LAST_##range = last,
    TSC_EVENT_RANGES(TSC_EVENT_RANGE_BOUNDS)
#undef TSC_EVENT_RANGE_BOUNDS
};
#define TSC_EVENT_KIND_IN_RANGE(id, code, name, desc, range, times, json)                \
    _Static_assert((code) >= TSC_EVR_FIRST_##range && (code) <= TSC_EVR_LAST_##range, \
                   "TSC_EV_" #id " lies outside its block of codes");
TSC_EVENT_KINDS(TSC_EVENT_KIND_IN_RANGE)
#undef TSC_EVENT_KIND_IN_RANGE

/* Two lines with one code would be two members of one name: a compile
 * error (write codes as two-digit hex, as the table does). */
struct tsc_event_kind_codes_differ {
#define TSC_EVENT_KIND_CODE_MEMBER(id, code, name, desc, range, times, json) char code_##code;
    TSC_EVENT_KINDS(TSC_EVENT_KIND_CODE_MEMBER)
#undef TSC_EVENT_KIND_CODE_MEMBER
};

/* The table by code, for the lookups below; a code not in the table has a
 * NULL name. */
typedef struct tsc_event_kind_row {
    const char *name;
    uint8_t desc;  /* enum tsc_desc_type */
    uint8_t times; /* TIMES */
} tsc_event_kind_row;

static const tsc_event_kind_row tsc_event_kind_rows[256] = {
#define TSC_EVENT_KIND_ROW(id, code, name, desc, range, times, json) \
    [code] = {#name, TSC_DESC_##desc, times},
    TSC_EVENT_KINDS(TSC_EVENT_KIND_ROW)
#undef TSC_EVENT_KIND_ROW
};

/* The kind's name ("nccl_enter"); NULL for a code not in the table. */
static inline const char *tsc_event_kind_name(uint8_t kind)
{
    return tsc_event_kind_rows[kind].name;
}

/* The descriptor type the kind's desc refers to; TSC_DESC_NONE for kinds
 * whose desc is no descriptor id and for codes not in the table. */
static inline enum tsc_desc_type tsc_event_desc_type(uint8_t kind)
{
    return (enum tsc_desc_type)tsc_event_kind_rows[kind].desc;
}

/* Whether the writer refuses a record of this kind with desc 0: kinds with
 * a descriptor, and codes not in the table (nothing records those). */
static inline int tsc_event_needs_desc(uint8_t kind)
{
    const tsc_event_kind_row *r = &tsc_event_kind_rows[kind];
    return !r->name || r->desc != TSC_DESC_NONE;
}

/* 0 for the kinds whose start/end are not times of the record (TIMES);
 * codes not in the table count as timed. */
static inline int tsc_event_has_times(uint8_t kind)
{
    const tsc_event_kind_row *r = &tsc_event_kind_rows[kind];
    return !r->name || r->times;
}

/* The block a code falls in, known kind or not. */
static inline enum tsc_event_range tsc_event_range(uint8_t kind)
{
#define TSC_EVENT_RANGE_OF(range, first, last) \
    if (kind >= (first) && kind <= (last))     \
        return TSC_EVR_##range;
    TSC_EVENT_RANGES(TSC_EVENT_RANGE_OF)
#undef TSC_EVENT_RANGE_OF
    return TSC_EVR_NONE;
}

#endif
