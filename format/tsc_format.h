/* tscope dump format, version 1.2 (1.0 and 1.1 files read unchanged).
 *
 * This header is the single definition of the on-disk layout shared by the
 * preload library (writer), the test generators and tscope-report (reader).
 * docs/format.md describes it in prose.  Rules: little-endian only (the
 * header carries a byte-order mark so a foreign file is refused, not
 * misread), every struct has explicit padding and a size assertion, and
 * record kinds / descriptor types / metadata keys are append-only.
 *
 * Layout of a file:
 *
 *   tsc_file_header                       (64 bytes, once)
 *   { tsc_chunk_header, payload }*        (self-checking chunks)
 *
 * A chunk is valid when its header CRC and payload CRC match; a reader that
 * meets a bad or short chunk reports the file offset and resynchronises on
 * the next valid chunk header, so a file cut short by SIGKILL or a full disk
 * reads back up to its last complete chunk.
 *
 * EVENTS chunk payloads are arrays of 32-byte slots.  A slot is either an
 * event (tsc_event) or the first slot of a descriptor definition
 * (tsc_desc_head) followed by continuation slots.  Things that repeat
 * (a collective's signature, a kernel's launch configuration, a string) are
 * defined once as descriptors and referenced by a 32-bit id, which is what
 * keeps every event at 32 bytes.
 */
#ifndef TSC_FORMAT_H
#define TSC_FORMAT_H

#include <stdint.h>

#define TSC_FILE_MAGIC "\x89TSCOPE\n"   /* 8 bytes, no NUL needed */
#define TSC_FORMAT_MAJOR 1
#define TSC_FORMAT_MINOR 4   /* 1.1: NCCL_ENTER, HANG, exit_code; memory records;
                                1.2: KERNEL_LAUNCH, NVTX thread and domain, loss counters;
                                1.3: PROC_SWITCHES/FAULTS, NCCL profiler plugin records
                                (0x50-0x53), STEPS chunks (black-box mode);
                                1.4: plugin kernel channels, copy-engine collectives,
                                graph-captured calls (0x54-0x58), PXN flag;
                                SCHED_WAIT/RUN, CPU_THROTTLE, NET_COUNTER (0x46-0x49),
                                GPU metrics 17-28; STEP_EXTRA chunks (black-box mode);
                                cost_* metadata keys (no new minor: a reader ignores
                                keys it does not know) */
#define TSC_BYTE_ORDER_MARK 0x01020304u
#define TSC_SLOT_SIZE 32u
#define TSC_DUMP_SUFFIX ".tsd"

/* ---------------------------------------------------------------- file */

typedef struct tsc_file_header {
    char magic[8];              /* TSC_FILE_MAGIC */
    uint16_t version_major;     /* reader refuses a different major */
    uint16_t version_minor;     /* newer minor: unknown kinds are skipped */
    uint32_t header_size;       /* sizeof(tsc_file_header) for v1 */
    uint32_t byte_order;        /* TSC_BYTE_ORDER_MARK as written */
    uint32_t slot_size;         /* TSC_SLOT_SIZE */
    uint64_t created_realtime_ns;
    uint32_t pid;
    uint32_t header_crc;        /* crc32c of the 36 bytes before it */
    uint8_t reserved[24];
} tsc_file_header;
_Static_assert(sizeof(tsc_file_header) == 64, "file header is 64 bytes");

/* --------------------------------------------------------------- chunks */

#define TSC_CHUNK_MAGIC 0x4b435354u /* "TSCK" little-endian */
#define TSC_CHUNK_MAX_PAYLOAD (64u << 20)  /* readers reject larger */

enum tsc_chunk_type {
    TSC_CHUNK_META = 1,   /* payload: key\0value\0 pairs; later chunks override */
    TSC_CHUNK_EVENTS = 2, /* payload: slots produced by one thread */
    TSC_CHUNK_END = 3,    /* payload: key\0value\0 pairs; marks a clean close */
    /* 4-5: reserved (NCCL profiler plugin) */
    TSC_CHUNK_STEPS = 6,  /* black-box mode: payload = tsc_step_summary records */
    TSC_CHUNK_STEP_EXTRA = 7, /* 1.4, black-box mode: tsc_step_extra records, written
                                 just before the STEPS chunk of the same steps */
};

/* One step of one rank in black-box mode (TSC_CHUNK_STEPS; docs/blackbox.md).
 * A step ends when the rank's step-opening NCCL call (the first call
 * signature that repeats) returns: those returns are simultaneous on every
 * rank of a synchronous job, and the call's sequence number is the same on
 * every rank, so (step, opener_seq) names the same step everywhere. */
typedef struct tsc_step_summary {
    uint64_t step;          /* 0-based count of the opener's returns */
    uint64_t opener_seq;    /* NCCL sequence number of the opener call ending the step */
    uint64_t start_ns;      /* previous step's end (the process's first record for step 0) */
    uint64_t end_ns;        /* the opener call's return */
    uint64_t nccl_ns;       /* host time inside NCCL calls that started in the step */
    uint64_t gpu_busy_ns;   /* sum of GPU kernel durations that started in it (0 without CUPTI) */
    uint64_t nccl_bytes;    /* message bytes of those NCCL calls */
    uint32_t nccl_calls;
    uint32_t events;        /* records kept in RAM for the step */
    uint32_t dropped;       /* records dropped (full rings) while it ran */
    uint32_t flags;         /* TSC_STEP_F_* */
} tsc_step_summary;
_Static_assert(sizeof(tsc_step_summary) == 72, "step summary is 72 bytes");

#define TSC_STEP_F_ANOMALY 0x1  /* slower than TSCOPE_BB_K x the rolling median */

/* What the GPU records of one step of one rank give besides its summary
 * (TSC_CHUNK_STEP_EXTRA, 1.4; docs/format.md).  A chunk of its own, not a
 * longer summary: a 1.3 reader skips a chunk type of a newer minor, but
 * would misread longer STEPS records.  Written only for steps with
 * something measured (flags != 0), in the chunk just before the STEPS
 * chunk that holds their summaries, so a reader following a growing file
 * has a step's extra once it has its summary. */
typedef struct tsc_step_extra {
    uint64_t step;          /* the summary's step number */
    uint64_t data_stall_ns; /* GPU idle before the step's first host-to-device copy */
    uint64_t gemm_flops;    /* FLOPs of the cuBLAS GEMM calls that started in the step */
    uint64_t gemm_peak_ns;  /* the time those GEMMs take at the device's peak FLOP/s */
    uint32_t h2d_copies;    /* host-to-device copies that started in the step */
    uint16_t gemm_no_peak;  /* its GEMMs of a precision without a known peak (capped) */
    uint16_t flags;         /* TSC_STEP_X_*: which fields are measurements */
} tsc_step_extra;
_Static_assert(sizeof(tsc_step_extra) == 40, "step extra is 40 bytes");

#define TSC_STEP_X_STALL 0x1 /* data_stall_ns, h2d_copies: CUPTI copy records were captured */
#define TSC_STEP_X_GEMM 0x2  /* gemm_flops, gemm_no_peak: cuBLAS GEMM records were captured */
#define TSC_STEP_X_PEAK 0x4  /* gemm_peak_ns: the device's peak is known for every GEMM of
                                the step (with _GEMM; 0 GEMMs: 0 ns, a measurement) */

typedef struct tsc_chunk_header {
    uint32_t magic;        /* TSC_CHUNK_MAGIC */
    uint16_t type;         /* enum tsc_chunk_type */
    uint16_t flags;        /* 0 in v1 */
    uint32_t payload_len;  /* bytes after this header; EVENTS: multiple of 32 */
    uint32_t payload_crc;  /* crc32c(payload) */
    uint32_t tid;          /* EVENTS: producing thread (gettid), else 0 */
    uint32_t seq;          /* chunk number in this file, from 0 */
    uint32_t reserved;     /* 0 */
    uint32_t header_crc;   /* crc32c of the 28 bytes before it */
} tsc_chunk_header;
_Static_assert(sizeof(tsc_chunk_header) == 32, "chunk header is 32 bytes");

/* --------------------------------------------------------------- events */

/* Event kinds (byte 0 of every slot): enum tsc_event_kind, from the one
 * table of event kinds, format/tsc_event_kinds.h (included below, after
 * the descriptor types it names).  0 is never valid so zeroed memory is
 * recognised as garbage. */

/* Every event slot.  Times are CLOCK_REALTIME nanoseconds since the epoch
 * (the same scale as CUPTI's default timestamps).  Host-side events record
 * the thread in the enclosing chunk header. */
typedef struct tsc_event {
    uint8_t kind;       /* enum tsc_event_kind */
    uint8_t flags;      /* kind specific, see below */
    uint16_t aux;       /* kind specific, see below */
    uint32_t desc;      /* descriptor id this event refers to (0 = none) */
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t val;       /* kind specific, see below */
} tsc_event;
_Static_assert(sizeof(tsc_event) == TSC_SLOT_SIZE, "event is one slot");

/* NCCL profiler plugin records (docs/format.md, "NCCL profiler plugin").
 * None refers to a descriptor; `aux` is the plugin communicator index (1..,
 * per process, named by its TSC_EV_NP_COMM).
 * TSC_EV_NP_COMM: flags = plugin ABI version NCCL chose; desc = rank in the
 *   communicator; start = end = init time; val = tscope comm_id (0 unknown).
 * TSC_EV_NP_COLL: flags = channels; desc = plugin op id (per process, from
 *   1); start/end = NCCL's start/stop of the event (stop = enqueued);
 *   val = TSC_NP_COLL_VAL(op, seq): op an enum tsc_nccl_op code; seq NCCL's
 *   per-(communicator, function) sequence number for collectives, and for
 *   send/recv (peer << 32 | the plugin's per-(communicator, op) ordinal).
 * TSC_EV_NP_PROXY: flags = channel; desc = plugin op id of its collective
 *   (0 unknown); start/end = proxy op start/stop; val = bytes its steps moved.
 * TSC_EV_NP_PROXY_WAIT, right after its TSC_EV_NP_PROXY in the same thread:
 *   flags = 1 send, 0 receive; desc = peer rank; aux = steps (capped 65535);
 *   start = ns waiting for the peer (send: for clear-to-send credit;
 *   receive: for the data to arrive); end = ns on the network (send: from
 *   posting to completion; receive: flushing); val = ns waiting for the GPU.
 *   1.4: flags bit 1 (TSC_NP_WAIT_PXN) = the op ran here for another
 *   process (PXN): its communicator and collective are unknown (aux 0,
 *   NP_PROXY desc 0) and its peer is a rank of that process's communicator.
 * TSC_EV_NP_KERNEL_CH (1.4): flags = channel, | TSC_NP_KCH_NO_GPU_TIMER
 *   when NCCL gave no GPU timer (v3); desc = op id of its collective;
 *   start/end = host times when NCCL reported the channel's start and
 *   stop; val = the channel's GPU time, ns (the GPU's global timer at its
 *   stop minus at its start, as the kernel read them), 0 without a timer.
 * TSC_EV_NP_CE_COLL (1.4): flags bit 0 = synchronised by NVLS multicast
 *   ("MC"), bit 1 = intra-batch sync; desc = its op id (from the same
 *   counter as NP_COLL's); start/end = NCCL's start and stop (enqueued);
 *   val = TSC_NP_COLL_VAL(op, NCCL's CE sequence number).
 * TSC_EV_NP_CE_SYNC (1.4): flags = completion sync; desc = op id of its CE
 *   collective; start/end; val = ranks synchronised.
 * TSC_EV_NP_CE_BATCH (1.4): flags = intra-batch sync; desc = op id of its
 *   CE collective; start/end; val = bytes (low 48 bits) | copies << 48.
 * TSC_EV_NP_CAPTURED (1.4): flags = 0 collective, 1 send/recv; desc 0;
 *   start = end = when NCCL reported the API call; val =
 *   TSC_NP_COLL_VAL(op, element count): the call was captured into a CUDA
 *   graph (it runs at each replay, not now). */
/* TSC_EV_NP_PROXY_STALL (1.4, 2026-11-28): a proxy operation still open
 *   whose steps made no progress for TSC_NP_STALL_NS or more, written by
 *   the writer at a drain (again when it moved on and stalled anew);
 *   flags = channel; aux = communicator index; desc = peer rank; start =
 *   the op's start; end = its last progress (a step's state or end); val =
 *   TSC_NP_STALL_VAL(parent op id, steps ended, state of its latest step
 *   (TSC_NP_STALL_STEP_ENDED when none is open), 1 send / 0 receive).
 *   The op's own NP_PROXY follows if it ever ends. */
#define TSC_NP_STALL_NS 1000000000ull
#define TSC_NP_STALL_STEP_ENDED 0xff
#define TSC_NP_STALL_VAL(op_id, steps, state, send)                                           \
    ((uint64_t)(uint32_t)(op_id) | (uint64_t)((steps) & 0xffff) << 32 |                      \
     (uint64_t)((state) & 0xff) << 48 | (uint64_t)((send) & 1) << 56)
#define TSC_NP_STALL_OP(val) ((uint32_t)(val))
#define TSC_NP_STALL_STEPS(val) ((uint32_t)((val) >> 32 & 0xffff))
#define TSC_NP_STALL_STATE(val) ((uint8_t)((val) >> 48))
#define TSC_NP_STALL_SEND(val) ((int)((val) >> 56 & 1))

#define TSC_NP_COLL_VAL(op, seq) ((uint64_t)(op) << 56 | ((seq) & 0x00ffffffffffffffull))
#define TSC_NP_COLL_OP(val) ((uint8_t)((val) >> 56))
#define TSC_NP_COLL_SEQ(val) ((val) & 0x00ffffffffffffffull)
#define TSC_NP_WAIT_PXN 0x02
#define TSC_NP_KCH_NO_GPU_TIMER 0x80
#define TSC_NP_BATCH_BYTES_MAX 0xffffffffffffull
#define TSC_NP_BATCH_VAL(bytes, copies)                                                  \
    ((uint64_t)(bytes) > TSC_NP_BATCH_BYTES_MAX ? TSC_NP_BATCH_BYTES_MAX : (uint64_t)(bytes)) | \
        (uint64_t)((copies) > 0xffff ? 0xffff : (copies)) << 48

/* TSC_EV_NCCL: desc -> TSC_DESC_NCCL_CALL; val = per-communicator sequence
 * number of this call (0-based, counted per (comm_id, comm_rank) for
 * collectives and point-to-point calls; 0 for other calls);
 * aux = (result code << 8) | group depth at entry (0 = not in a group);
 * flags: TSC_NCCL_F_* */
#define TSC_NCCL_F_IN_GROUP 0x01  /* issued between GroupStart and GroupEnd */
#define TSC_NCCL_F_ASYNC_ERR 0x02 /* result was ncclInProgress (non-blocking comm) */

/* TSC_EV_NCCL_ENTER (minor 1): a collective, point-to-point or GroupEnd
 * call that was in flight when the thread's events were written (each call
 * records its entry in memory before the real call; the writer puts it in
 * the file at every drain while the call has not returned, once per call).
 * Same desc and val (sequence number) as the TSC_EV_NCCL record that
 * completes it if it returns later; flags and aux as TSC_EV_NCCL but the
 * result byte is 0; start_ns = the call's start, end_ns = 0.  An ENTER
 * without a later NCCL record (same thread, desc, val) is a call that
 * never returned: the process was stuck in it when it died.
 *
 * TSC_EV_HANG (minor 1): written by the TSCOPE_HANG_S watchdog in the
 * stuck thread's stream (chunk tid) when a call has been in flight for at
 * least that long: desc and val of the call, start_ns = its entry time,
 * end_ns = when the watchdog saw it, flags and aux as its ENTER. */

/* Chunks of this tid hold what the writer translated from CUPTI's
 * activity buffers (1.2), not one host thread's records. */
#define TSC_GPU_STREAM_TID 0u

/* The two halves of a 64-bit field of TSC_EV_KERNEL_LAUNCH. */
#define TSC_PACK32(lo, hi) ((uint64_t)(uint32_t)(lo) | (uint64_t)(uint32_t)(hi) << 32)
#define TSC_LO32(v) ((uint32_t)((v) & 0xffffffffull))
#define TSC_HI32(v) ((uint32_t)((uint64_t)(v) >> 32))

/* Host calls that launch GPU work (NCCL calls, GEMMs) push a CUPTI external
 * correlation id derived from their own event, so no extra field is needed:
 * the analyzer recomputes it from (desc, val) and joins it with
 * TSC_EV_EXTCORR records.  Bit 63 keeps it clear of other tools' ids. */
#define TSC_EXTCORR_ID(desc, val) \
    ((1ull << 63) | ((uint64_t)(desc) << 32) | ((uint64_t)(val) & 0xffffffffull))

/* TSC_EV_EXTCORR: desc = CUPTI correlation id of the API call (not a
 * descriptor id), val = external id (TSC_EXTCORR_ID), flags = CUPTI external
 * correlation kind, start_ns = end_ns = 0. */

/* TSC_EV_KERNEL: desc -> TSC_DESC_KERNEL; start/end on the GPU;
 * val = CUPTI correlation id.
 * TSC_EV_KERNEL_LAUNCH (1.2): one kernel and the host call that launched
 *   it, in one slot (the launch's runtime call and the driver call nested
 *   in it are one call).  desc -> TSC_DESC_KERNEL_LAUNCH;
 *   start_ns = GPU start;
 *   end_ns = GPU duration (low 32 bits) | call duration << 32, in ns;
 *   val = CUPTI correlation id (low 32) | (GPU start - call start) << 32.
 *   Written when the three fit in 32 bits and the call started first;
 *   otherwise the kernel is a TSC_EV_KERNEL and its call a TSC_EV_API.
 *   The call's CUPTI external correlation record is not written: the
 *   NCCL call or GEMM whose host span on the launching thread holds the
 *   call's start is the one that launched it (the reader joins them so).
 *   Records in chunks of tid 0 (TSC_GPU_STREAM_TID) come from CUPTI's
 *   buffers: their host thread is in the descriptor.
 * TSC_EV_MEMCPY / TSC_EV_MEMSET: desc -> TSC_DESC_COPY; val = correlation id.
 * TSC_EV_SYNC: desc -> TSC_DESC_SYNC; start/end = host duration of the call;
 *   val = correlation id.
 * TSC_EV_API: desc -> TSC_DESC_API; start/end = host enter/exit;
 *   val = correlation id.
 * TSC_EV_GEMM: desc -> TSC_DESC_GEMM; start/end = host enter/exit;
 *   val = per-thread call counter (feeds TSC_EXTCORR_ID).
 * TSC_EV_GRAPH_NODE (1.2): desc -> TSC_DESC_GRAPH_NODE; start = end =
 *   when the node was captured (in the launch call, on the capturing
 *   thread, whose chunk holds it); val = 0.
 * TSC_EV_NVTX: desc -> TSC_DESC_STRING (range name); start/end;
 *   val (1.2) = host thread | TSC_DESC_STRING id of the NVTX domain << 32
 *   (0: the default domain, the user's); 0 before 1.2.
 * TSC_EV_CLOCK: start = CLOCK_REALTIME, end = cuptiGetTimestamp() (or 0),
 *   val = CLOCK_MONOTONIC, all sampled together.
 * TSC_EV_MEM_ALLOC / TSC_EV_MEM_FREE (v1.1): desc -> TSC_DESC_MEM;
 *   start = end = time of the operation; val = bytes.
 * TSC_EV_MEM_POOL (v1.1): desc -> TSC_DESC_MEM (source TSC_MEM_SRC_POOL, the
 *   pool's address in `pool`); start = end = time; val = bytes the pool
 *   holds from the device after the operation; flags = enum tsc_mem_pool_op. */

/* Telemetry kinds (0x40-0x4f are reserved for them).  All have
 * start_ns = end_ns = the sample's CLOCK_REALTIME time and are written by
 * the sampler thread only when a value changed (docs/format.md).
 * TSC_EV_GPU_METRIC: desc = 0, flags = NVML device index, aux = metric,
 *   val = the new value in the metric's unit.
 * TSC_EV_PROC_CPU: desc = threads in the process (a count, not an id),
 *   aux = threads runnable (state R) at the sample, the sampler excluded,
 *   plus runnable worker processes; val = process CPU time in ns
 *   (CLOCK_PROCESS_CPUTIME_ID: all threads, not children).
 * TSC_EV_TASK_CPU: desc -> TSC_DESC_TASK; aux = state letter ('R', 'S',
 *   'D', ...); val = the task's CPU time in ns (utime + stime).
 * TSC_EV_HOST_LOAD: desc = 0; aux = runnable tasks on the host (capped at
 *   65535); val = 1-minute load average x 1000.
 * TSC_EV_PROC_SWITCHES (added 2026-11-25): desc = 0; val = involuntary
 *   context switches of the main thread since it started (/proc/self/status
 *   nonvoluntary_ctxt_switches: the CPU was taken from it while runnable).
 * TSC_EV_PROC_FAULTS (added 2026-11-25): desc = 0; val = major page faults
 *   of the process, all threads (/proc/self/stat majflt: a page read from
 *   disk while the thread waited).
 * TSC_EV_SCHED_WAIT (1.4): desc = 0; val = ns the main thread has spent
 *   runnable but not running, since it started (/proc/self/task/<pid>/
 *   schedstat, second field): CPU contention measured directly.
 * TSC_EV_SCHED_RUN (1.4): desc = 0; val = ns the main thread has spent on
 *   a CPU since it started (the same file's first field), written with
 *   each SCHED_WAIT: the wait per CPU second it got.
 * TSC_EV_CPU_THROTTLE (1.4): desc = periods throttled so far (a count,
 *   capped at 2^32-1); flags = 1 cgroup v1, 2 cgroup v2; val = ns the
 *   process's cgroup (the nearest one with a CPU limit) was throttled so far
 *   (cpu.stat throttled_usec x 1000, or v1 throttled_time).
 * TSC_EV_NET_COUNTER (1.4): desc -> TSC_DESC_STRING "device:port" (as
 *   under /sys/class/infiniband); aux = enum tsc_net_counter; val = the
 *   value (counters since the port came up, state and rate as below). */
enum tsc_gpu_metric {
    TSC_GPU_SM_CLOCK_MHZ = 1,
    TSC_GPU_MEM_CLOCK_MHZ = 2,
    TSC_GPU_POWER_MW = 3,
    TSC_GPU_TEMP_C = 4,
    TSC_GPU_CLOCK_REASONS = 5,  /* NVML clock-event (throttle) reason bits */
    TSC_GPU_UTIL_PCT = 6,
    TSC_GPU_MEM_UTIL_PCT = 7,
    TSC_GPU_MEM_USED_BYTES = 8,
    TSC_GPU_ECC_UNCORRECTED = 9, /* volatile uncorrected ECC error count */
    /* PCIe link (added 2026-11-25): the generation and lane width now and
     * the most the device and slot support; a width below its maximum is a
     * down-trained link (the generation also drops at idle to save power) */
    TSC_GPU_PCIE_GEN = 10,
    TSC_GPU_PCIE_GEN_MAX = 11,
    TSC_GPU_PCIE_WIDTH = 12,
    TSC_GPU_PCIE_WIDTH_MAX = 13,
    TSC_GPU_PCIE_REPLAYS = 14,   /* PCIe replay counter (link-level retries) */
    TSC_GPU_XID_EVENTS = 15,     /* critical XID events seen since the sampler began */
    TSC_GPU_XID_LAST = 16,       /* the last one's XID code */
    /* GPU health (1.4): NVLink links and their error counters (summed over
     * the device's links), retired pages, remapped rows, aggregate ECC */
    TSC_GPU_NVLINK_ACTIVE = 17,  /* NVLink links active now */
    TSC_GPU_NVLINK_LINKS = 18,   /* NVLink links the device reports a state for */
    TSC_GPU_NVLINK_REPLAYS = 19, /* data-link replay errors, all links */
    TSC_GPU_NVLINK_RECOVERIES = 20, /* data-link recovery errors, all links */
    TSC_GPU_NVLINK_CRC = 21,     /* CRC errors (flit and data), all links */
    TSC_GPU_RETIRED_PAGES = 22,  /* pages retired (single- and double-bit ECC) */
    TSC_GPU_RETIRED_PENDING = 23, /* 1: a page waits for retirement (reset needed) */
    TSC_GPU_REMAP_CORRECTABLE = 24, /* rows remapped for correctable errors */
    TSC_GPU_REMAP_UNCORRECTABLE = 25, /* rows remapped for uncorrectable errors */
    TSC_GPU_REMAP_STATE = 26,    /* bit 0: a remapping is pending; bit 1: one failed */
    TSC_GPU_ECC_CORRECTED_AGG = 27, /* corrected ECC errors over the device's life */
    TSC_GPU_ECC_UNCORRECTED_AGG = 28, /* uncorrected ECC errors over its life */
    TSC_GPU_METRIC_COUNT
};

/* What a TSC_EV_NET_COUNTER holds (aux): the counters of
 * /sys/class/infiniband/<dev>/ports/<p>/counters/ and the port's state and
 * rate (1.4). */
enum tsc_net_counter {
    TSC_NET_XMIT_WAIT = 1,       /* port_xmit_wait: ticks with data but no credit */
    TSC_NET_SYMBOL_ERROR = 2,    /* symbol_error */
    TSC_NET_LINK_DOWNED = 3,     /* link_downed */
    TSC_NET_LINK_RECOVERY = 4,   /* link_error_recovery */
    TSC_NET_RCV_ERRORS = 5,      /* port_rcv_errors */
    TSC_NET_STATE = 6,           /* state: 4 = ACTIVE (1 DOWN, 2 INIT, 3 ARMED) */
    TSC_NET_RATE_MBPS = 7,       /* rate, Mb/s ("100 Gb/sec (4X EDR)" -> 100000) */
    TSC_NET_COUNTER_COUNT
};

/* NVML clock-event reason bits (nvml.h nvmlClocksEventReason*). */
#define TSC_GPU_REASON_IDLE 0x1ull
#define TSC_GPU_REASON_APP_CLOCKS 0x2ull
#define TSC_GPU_REASON_SW_POWER_CAP 0x4ull
#define TSC_GPU_REASON_HW_SLOWDOWN 0x8ull
#define TSC_GPU_REASON_SYNC_BOOST 0x10ull
#define TSC_GPU_REASON_SW_THERMAL 0x20ull
#define TSC_GPU_REASON_HW_THERMAL 0x40ull
#define TSC_GPU_REASON_HW_POWER_BRAKE 0x80ull
#define TSC_GPU_REASON_POWER_THERMAL                                               \
    (TSC_GPU_REASON_SW_POWER_CAP | TSC_GPU_REASON_HW_SLOWDOWN |                    \
     TSC_GPU_REASON_SW_THERMAL | TSC_GPU_REASON_HW_THERMAL | TSC_GPU_REASON_HW_POWER_BRAKE)

/* ----------------------------------------------------------- descriptors */

/* First slot of a descriptor definition.  payload_len bytes of payload
 * follow: the first 24 in this slot, the rest in
 * ceil((payload_len - 24) / 32) continuation slots (zero padded).  Ids are
 * unique within a file; an event may only refer to an id defined earlier in
 * the same thread's chunk stream. */
typedef struct tsc_desc_head {
    uint8_t kind;          /* TSC_EV_DESC */
    uint8_t type;          /* enum tsc_desc_type */
    uint16_t payload_len;  /* bytes of payload, at most TSC_DESC_MAX_PAYLOAD */
    uint32_t id;           /* > 0 */
    uint8_t payload[24];
} tsc_desc_head;
_Static_assert(sizeof(tsc_desc_head) == TSC_SLOT_SIZE, "desc head is one slot");

#define TSC_DESC_MAX_PAYLOAD 4096u
#define TSC_DESC_HEAD_PAYLOAD 24u

enum tsc_desc_type {
    TSC_DESC_NONE = 0,        /* never written: "no descriptor" in tsc_event_kinds.h */
    TSC_DESC_STRING = 1,      /* payload: UTF-8 bytes, no NUL */
    TSC_DESC_NCCL_CALL = 2,   /* payload: tsc_desc_nccl_call */
    TSC_DESC_THREAD = 3,      /* payload: tsc_desc_thread */
    TSC_DESC_KERNEL = 16,     /* payload: tsc_desc_kernel */
    TSC_DESC_COPY = 17,       /* payload: tsc_desc_copy (memcpy and memset) */
    TSC_DESC_SYNC = 18,       /* payload: tsc_desc_sync */
    TSC_DESC_API = 19,        /* payload: tsc_desc_api */
    TSC_DESC_GEMM = 20,       /* payload: tsc_desc_gemm */
    TSC_DESC_MEM = 21,        /* payload: tsc_desc_mem (v1.1) */
    TSC_DESC_TASK = 22,       /* payload: tsc_desc_task (format 1.1) */
    TSC_DESC_KERNEL_LAUNCH = 23, /* payload: tsc_desc_kernel_launch (format 1.2) */
    TSC_DESC_GRAPH_NODE = 24, /* payload: tsc_desc_graph_node (format 1.2) */
};

/* Event kinds, numbered for the dump (append-only): enum tsc_event_kind,
 * from the one table of event kinds. */
#include "tsc_event_kinds.h"

/* NCCL functions, numbered for the dump (append-only): enum tsc_nccl_op,
 * from the one table of NCCL operations. */
#include "tsc_nccl_ops.h"

/* ncclDataType_t values of nccl.h 2.28 (stable ABI). */
enum tsc_nccl_dtype {
    TSC_DT_INT8 = 0, TSC_DT_UINT8 = 1, TSC_DT_INT32 = 2, TSC_DT_UINT32 = 3,
    TSC_DT_INT64 = 4, TSC_DT_UINT64 = 5, TSC_DT_FLOAT16 = 6, TSC_DT_FLOAT32 = 7,
    TSC_DT_FLOAT64 = 8, TSC_DT_BFLOAT16 = 9, TSC_DT_FLOAT8E4M3 = 10,
    TSC_DT_FLOAT8E5M2 = 11,
    TSC_DT_NONE = 0xff,
};

#define TSC_NO_PEER (-1)
#define TSC_REDOP_NONE 0xff

/* Signature of one NCCL call; interned, so a training loop that issues the
 * same bucketed collectives every step defines each only once. */
typedef struct tsc_desc_nccl_call {
    uint8_t op;          /* enum tsc_nccl_op */
    uint8_t dtype;       /* enum tsc_nccl_dtype, TSC_DT_NONE if n/a */
    uint8_t redop;       /* ncclRedOp_t value (0 sum .. 4 avg, >= 5 custom), TSC_REDOP_NONE */
    uint8_t reserved0;
    int32_t peer;        /* root (rooted collectives) or peer (send/recv), else TSC_NO_PEER */
    uint64_t count;      /* element count as passed (sendcount for AllGather) */
    uint64_t bytes;      /* count * sizeof(dtype): the API's message size */
    uint64_t comm_id;    /* the same on every rank of a communicator, 0 if none */
    uint32_t comm_rank;  /* this rank's index in the communicator */
    uint32_t comm_size;  /* ranks in the communicator, 0 if unknown */
    uint64_t stream;     /* cudaStream_t value as passed (identity only) */
    uint64_t parent_comm_id; /* split/shrink: the parent's comm_id, else 0 */
    int32_t color;       /* split color, else 0 */
    uint32_t reserved1;
} tsc_desc_nccl_call;
_Static_assert(sizeof(tsc_desc_nccl_call) == 64, "nccl call desc is 64 bytes");

/* A host thread and its name at the time it was first seen. */
typedef struct tsc_desc_thread {
    uint32_t tid;
    uint32_t name_len;   /* bytes of name that follow, no NUL */
    /* char name[name_len]; */
} tsc_desc_thread;
_Static_assert(sizeof(tsc_desc_thread) == 8, "thread desc head is 8 bytes");

/* A kernel's launch configuration. */
typedef struct tsc_desc_kernel {
    uint32_t name;       /* TSC_DESC_STRING id of the (mangled) kernel name */
    uint32_t device;
    uint32_t stream;     /* CUPTI stream id */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_mem; /* static + dynamic bytes */
    uint64_t graph_id;   /* CUDA graph id, 0 when not launched from a graph */
} tsc_desc_kernel;
_Static_assert(sizeof(tsc_desc_kernel) == 48, "kernel desc is 48 bytes");

/* A kernel's launch configuration with the thread and call that launched
 * it (TSC_EV_KERNEL_LAUNCH). */
typedef struct tsc_desc_kernel_launch {
    tsc_desc_kernel kernel;
    uint32_t tid;        /* launching host thread (gettid) */
    uint32_t api_name;   /* TSC_DESC_STRING id of the call's name (cudaLaunchKernel) */
    uint32_t api_cbid;   /* CUPTI callback id of the call */
    uint8_t api_domain;  /* enum tsc_api_domain */
    uint8_t reserved[3];
    uint64_t graph_node; /* CUPTI graph node id of a graph kernel, else 0 */
} tsc_desc_kernel_launch;
_Static_assert(sizeof(tsc_desc_kernel_launch) == 72, "kernel launch desc is 72 bytes");

/* A kernel node captured into a CUDA graph (TSC_EV_GRAPH_NODE): the NCCL
 * call or GEMM that was being captured makes the graph's replays its
 * work (their kernels carry the node id). */
typedef struct tsc_desc_graph_node {
    uint64_t node;         /* CUPTI graph node id */
    uint64_t external_id;  /* TSC_EXTCORR_ID of the capturing call, 0 none */
} tsc_desc_graph_node;
_Static_assert(sizeof(tsc_desc_graph_node) == 16, "graph node desc is 16 bytes");

/* tsc_desc_copy.dir */
enum tsc_copy_dir {
    TSC_COPY_OTHER = 0, TSC_COPY_H2D = 1, TSC_COPY_D2H = 2, TSC_COPY_D2D = 3,
    TSC_COPY_P2P = 4, TSC_COPY_H2H = 5, TSC_COPY_MEMSET = 6,
};

typedef struct tsc_desc_copy {
    uint8_t dir;         /* enum tsc_copy_dir */
    uint8_t pinned;      /* 1: host side pinned, 0: pageable or n/a */
    uint8_t src_kind;    /* CUpti_ActivityMemoryKind values */
    uint8_t dst_kind;
    uint32_t device;
    uint32_t stream;
    uint32_t dst_device; /* P2P: destination device, else = device */
    uint64_t bytes;
} tsc_desc_copy;
_Static_assert(sizeof(tsc_desc_copy) == 24, "copy desc is 24 bytes");

/* tsc_desc_sync.type */
enum tsc_sync_type {
    TSC_SYNC_OTHER = 0, TSC_SYNC_EVENT = 1, TSC_SYNC_STREAM_WAIT_EVENT = 2,
    TSC_SYNC_STREAM = 3, TSC_SYNC_CONTEXT = 4, TSC_SYNC_DEVICE = 5,
};

typedef struct tsc_desc_sync {
    uint8_t type;        /* enum tsc_sync_type */
    uint8_t reserved[3];
    uint32_t stream;     /* CUPTI stream id, 0 if n/a */
    uint32_t tid;        /* host thread that synchronised */
    uint32_t reserved1;
} tsc_desc_sync;
_Static_assert(sizeof(tsc_desc_sync) == 16, "sync desc is 16 bytes");

enum tsc_api_domain { TSC_API_RUNTIME = 1, TSC_API_DRIVER = 2 };

typedef struct tsc_desc_api {
    uint8_t domain;      /* enum tsc_api_domain */
    uint8_t reserved[3];
    uint32_t cbid;       /* CUPTI callback id within the domain */
    uint32_t tid;        /* host thread (gettid) */
    uint32_t name;       /* TSC_DESC_STRING id of the function name */
} tsc_desc_api;
_Static_assert(sizeof(tsc_desc_api) == 16, "api desc is 16 bytes");

enum tsc_gemm_api {
    TSC_GEMM_LT_MATMUL = 1, TSC_GEMM_EX = 2, TSC_GEMM_STRIDED_BATCHED_EX = 3,
    TSC_GEMM_TYPED = 4, TSC_GEMM_BATCHED_EX = 5, TSC_GEMM_TYPED_STRIDED = 6,
};

typedef struct tsc_desc_gemm {
    uint64_t m, n, k, batch;
    uint8_t api;         /* enum tsc_gemm_api */
    uint8_t transa, transb;
    uint8_t complex;     /* 1: complex types (4 real multiply-adds each) */
    uint32_t a_type;     /* cudaDataType_t values */
    uint32_t c_type;
    uint32_t compute_type; /* cublasComputeType_t value */
    uint64_t flops;      /* 2*m*n*k*batch (x4 when complex) */
} tsc_desc_gemm;
_Static_assert(sizeof(tsc_desc_gemm) == 56, "gemm desc is 56 bytes");

/* A thread of this process, or a worker process (child), whose CPU time
 * the host sampler follows (TSC_EV_TASK_CPU). */
enum tsc_task_role {
    TSC_TASK_OTHER = 0, TSC_TASK_MAIN = 1, TSC_TASK_AUTOGRAD = 2, TSC_TASK_NCCL = 3,
    TSC_TASK_WORKER = 4,      /* a child process (DataLoader worker) */
    TSC_TASK_TSCOPE = 5,      /* tscope's own threads */
};

typedef struct tsc_desc_task {
    uint32_t tid;        /* thread id, or the pid of a worker process */
    uint8_t role;        /* enum tsc_task_role */
    uint8_t reserved[3];
    uint32_t name_len;   /* bytes of name (comm) that follow, no NUL */
    /* char name[name_len]; */
} tsc_desc_task;
_Static_assert(sizeof(tsc_desc_task) == 12, "task desc head is 12 bytes");
/* Where device memory came from (tsc_desc_mem.source). */
enum tsc_mem_source {
    TSC_MEM_SRC_OTHER = 0,
    TSC_MEM_SRC_MALLOC = 1,   /* cudaMalloc / cuMemAlloc: memory taken from the device */
    TSC_MEM_SRC_ASYNC = 2,    /* cudaMallocAsync / cuMemAllocFromPoolAsync: from a pool */
    TSC_MEM_SRC_VMM = 3,      /* cuMemCreate / cuMemRelease: physical memory (expandable segments) */
    TSC_MEM_SRC_POOL = 4,     /* a stream-ordered pool itself (TSC_EV_MEM_POOL) */
    TSC_MEM_SRC_NCCL = 5,     /* 1.2: cuMemCreate/cuMemRelease inside an NCCL call: NCCL's own buffers */
};

/* TSC_EV_MEM_POOL flags. */
enum tsc_mem_pool_op {
    TSC_MEM_POOL_USAGE = 0,      /* size seen at an allocation or free from the pool */
    TSC_MEM_POOL_CREATED = 1,
    TSC_MEM_POOL_DESTROYED = 2,  /* val = 0 */
    TSC_MEM_POOL_TRIMMED = 3,
};

/* Shape of device memory operations; few distinct ones per process. */
typedef struct tsc_desc_mem {
    uint8_t source;      /* enum tsc_mem_source */
    uint8_t mem_kind;    /* CUpti_ActivityMemoryKind (3 device, 5 managed, ...) */
    uint8_t pool_type;   /* 0 none, 1 local, 2 imported */
    uint8_t reserved0;
    uint32_t device;
    uint32_t stream;     /* CUPTI stream id of a stream-ordered operation, else 0 */
    uint32_t reserved1;
    uint64_t pool;       /* base address of the pool (identity only), else 0 */
} tsc_desc_mem;
_Static_assert(sizeof(tsc_desc_mem) == 24, "mem desc is 24 bytes");

/* ------------------------------------------------------------- metadata */

/* Metadata keys written in META / END chunks (values are text).  Readers
 * must ignore unknown keys.  Documented in docs/format.md. */
#define TSC_META_HOST "host"
#define TSC_META_PID "pid"
#define TSC_META_PPID "ppid"
#define TSC_META_RANK "rank"                 /* global rank, or -1 */
#define TSC_META_LOCAL_RANK "local_rank"
#define TSC_META_WORLD_SIZE "world_size"
#define TSC_META_RUN_ID "run_id"
#define TSC_META_RUN_ID_SOURCE "run_id_source" /* TSCOPE_RUN_ID, torchrun, slurm, openmpi, none */
#define TSC_META_RESTART "restart"            /* torchrun restart count */
#define TSC_META_CMDLINE "cmdline"            /* argv joined by spaces */
#define TSC_META_START_REALTIME "start_realtime_ns"
#define TSC_META_START_MONOTONIC "start_monotonic_ns"
#define TSC_META_ANCHOR_REALTIME "anchor_realtime_ns"   /* latest pair, rewritten at each flush */
#define TSC_META_ANCHOR_MONOTONIC "anchor_monotonic_ns"
#define TSC_META_HOST_CLOCK "host_clock"      /* 1.2: "tsc 2.995 GHz" (counter fitted to CLOCK_REALTIME) or "os (why)" */
#define TSC_META_LIB_VERSION "tscope_version"
#define TSC_META_NCCL_VERSION "nccl_version"  /* ncclGetVersion code, if known */
#define TSC_META_EVENTS "events"              /* events written so far */
#define TSC_META_DROPPED "dropped_events"     /* events dropped so far (buffers full) */
#define TSC_META_DROPPED_WRITE "dropped_write_bytes" /* bytes lost to write errors */
#define TSC_META_KEYS_DROPPED "meta_keys_dropped" /* metadata keys the store could not hold */
#define TSC_META_END_REASON "end_reason"      /* exit, signal:15, ... (END chunk) */
#define TSC_META_MODE "mode"                  /* "blackbox" in black-box mode (absent: full) */
#define TSC_META_CAPTURE "capture"            /* a capture window: its trigger name */
#define TSC_META_CAPTURE_STEPS "capture_steps" /* A-B, the steps it holds */
#define TSC_META_CAPTURE_REASON "capture_reason" /* anomaly, hang, signal, ctl, term */
#define TSC_META_CAPTURE_NOTE "capture_note"   /* the trigger's note */
#define TSC_META_EXIT_CODE "exit_code"        /* 1.1, END chunk: status given to exit/_exit */
#define TSC_META_END_REALTIME "end_realtime_ns" /* 1.1, END chunk: when it was written */
/* GPU metadata (written by the CUPTI capture). */
#define TSC_META_CUPTI_MODE "cupti_mode"      /* off, light, full */
#define TSC_META_CUPTI_STATUS "cupti_status"  /* ok, or why it is off/degraded */
#define TSC_META_CUPTI_OTHER "cupti_other_client" /* the CUPTI client that kept or took CUPTI from tscope: its call and library, or "unknown" */
#define TSC_META_CUPTI_DROPPED "cupti_dropped_records" /* records CUPTI dropped (no buffer) */
#define TSC_META_CLOCK_STATUS "clock_status"  /* ok, or how CUPTI's clock drifted */
#define TSC_META_DEVICE_NAME "device_name"    /* primary device; device.N.* for all */
#define TSC_META_DEVICE_SM_COUNT "device_sm_count"
#define TSC_META_DEVICE_CLOCK_KHZ "device_clock_khz"
#define TSC_META_DEVICE_MEM_BYTES "device_mem_bytes"
#define TSC_META_CUDA_DRIVER "cuda_driver_version"
#define TSC_META_CUDA_RUNTIME "cuda_runtime_version"
#define TSC_META_CUPTI_VERSION "cupti_version"  /* cuptiGetVersion of the runtime */
#define TSC_META_CUPTI_OVERHEAD "cupti_overhead_ns" /* CUPTI's own time (OVERHEAD records) */
/* GPU record accounting (1.2), counts of records. */
#define TSC_META_CUPTI_DROPPED_DEVICE "cupti_dropped_device_records" /* of those, device work */
#define TSC_META_CUPTI_BUFFERS_REFUSED "cupti_buffers_refused" /* buffer requests refused (buffers) */
#define TSC_META_GPU_KERNELS "gpu_kernels"              /* kernel records written */
#define TSC_META_GPU_KERNELS_FOLDED "gpu_kernels_with_launch" /* of those, TSC_EV_KERNEL_LAUNCH */
#define TSC_META_GPU_CALLS_ALONE "gpu_launch_calls_alone" /* launch calls written without their kernel folded in */
#define TSC_META_GPU_LIGHT_NOT_NCCL "gpu_light_launches_not_nccl" /* light mode: cuLaunchKernelEx calls outside NCCL's calls, left out */
#define TSC_META_GPU_INCOMPLETE "gpu_records_incomplete" /* device records handed over unfinished */
#define TSC_META_GPU_LOST_WRITE "gpu_kernels_lost_write" /* kernel records in chunks that failed to write */
#define TSC_META_GPU_CAPTURED "gpu_launches_captured" /* launch calls that built a graph node, not a kernel */
#define TSC_META_GPU_MEMORY "gpu_capture_bytes"     /* most memory the GPU path held: CUPTI buffers + fold */
/* Telemetry (format 1.1). */
#define TSC_META_NVML_STATUS "nvml_status"     /* ok, or why there are no GPU samples */
#define TSC_META_NVML_DEVICE "nvml_device"     /* NVML index of the sampled GPU */
#define TSC_META_NVML_DEVICE_NAME "nvml_device_name"
#define TSC_META_GPU_MAX_SM_CLOCK "gpu_max_sm_clock_mhz"
#define TSC_META_TELEMETRY_MS "telemetry_period_ms"
#define TSC_META_CPU_ONLINE "cpu_online"       /* online CPUs of the host */
#define TSC_META_CPU_AFFINITY "cpu_affinity"   /* CPUs in the process's affinity mask */
#define TSC_META_CPU_QUOTA "cpu_quota"         /* cgroup CPU limit in CPUs ("1.5"), or "max" */
#define TSC_META_CPU_QUOTA_SOURCE "cpu_quota_source" /* cgroup2, cgroup1, none */
#define TSC_META_OMP_THREADS "omp_num_threads" /* OMP_NUM_THREADS as set, or "unset" */
#define TSC_META_WORKERS_VISIBLE "workers_visible" /* 1: child processes can be listed */
#define TSC_META_CPU_STAT "cpu_stat"           /* 1.4: the cgroup cpu.stat sampled, or "none" */
#define TSC_META_NET_PORTS "net_ports"         /* 1.4: InfiniBand/RoCE ports sampled */
/* Device memory capture (v1.1). */
#define TSC_META_MEM_CAPTURE "mem_capture"      /* ok, or why memory records are missing */
#define TSC_META_MEM_INFO_FREE "mem_info_free_bytes"   /* cuMemGetInfo free, at start */
#define TSC_META_MEM_INFO_TOTAL "mem_info_total_bytes" /* cuMemGetInfo total, at start */
#define TSC_META_MEM_INFO_TIME "mem_info_realtime_ns"  /* when it was sampled */
/* NCCL profiler plugin (1.3; counters 1.4). */
#define TSC_META_NP "nccl_profiler"            /* "v6 light", "stepped aside ...", ... */
#define TSC_META_NP_LOST "nccl_profiler_lost"  /* 1.4: plugin events not recorded (no free handle, stale handle) */
#define TSC_META_NP_PXN "nccl_profiler_pxn_ops" /* 1.4: proxy ops run here for another process (PXN) */
/* tscope's own cost in this run (docs/self-cost.md), in every META
 * chunk and the last one before END.  Absent in older dumps: "not
 * recorded", never 0. */
#define TSC_META_COST_WALL "cost_wall_ns"          /* run time the figures cover (since set-up) */
#define TSC_META_COST_WRITER "cost_writer_cpu_ns"  /* CPU time of the writer thread (thread clock) */
#define TSC_META_COST_TELEMETRY "cost_telemetry_cpu_ns" /* CPU time of the telemetry thread */
#define TSC_META_COST_JOB_SLOTS "cost_job_slots"   /* ring slots the job's threads filled (or dropped) */
#define TSC_META_COST_SLOT_PS "cost_slot_ps"       /* one such record's cost, measured at start, ps */
#define TSC_META_COST_BYTES "cost_bytes_written"   /* dump bytes written */
#define TSC_META_COST_MEMORY "cost_memory_bytes"   /* memory held: rings, tables, black-box store */
#define TSC_META_COST_PROCESS_CPU "cost_process_cpu_ns" /* the whole process's CPU time, for scale */
#define TSC_META_COST_BUDGET "cost_budget_pct"     /* TSCOPE_BUDGET_PCT in effect ("1.00", "off") */
#define TSC_META_COST_LEVEL "cost_level"           /* the budget's level now (0: full detail) */
#define TSC_META_COST_STEPS "cost_steps"           /* level changes so far */
#define TSC_META_COST_OVER "cost_over_budget"      /* flush periods the cost stayed above the budget */
#define TSC_META_COST_STEP_PREFIX "cost_step."     /* cost_step.N: "<realtime ns> <from> <to>
                                                      <period cost, 1/100 %> <what>" */
/* The <what> of the levels that thin the records the analyzer reads
 * (docs/self-cost.md): the GPU capture's per-kernel records, the NCCL
 * profiler plugin's proxy and channel events. */
#define TSC_COST_WHAT_LIGHT "no per-kernel records (light)"
#define TSC_COST_WHAT_NPROF "fewer NCCL plugin events (collectives)"

#endif
