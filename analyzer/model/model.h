/* The analyzer's in-memory model of one job: per-rank timelines built from
 * the dumps (or from torch.profiler traces).  Analysis passes are pure
 * functions over this model; renderers read the passes' results.
 *
 * Times are int64 nanoseconds on the rank's own clock (CLOCK_REALTIME of the
 * host that wrote the dump).  The cross-rank pass computes clock_offset_ns so
 * that (t + clock_offset_ns) is on the job's common clock.
 *
 * Arrays are sorted by start time.  Indices link records (-1 = no link).
 * Ownership: tsa_job owns everything reachable from it; tsa_job_free frees it.
 */
#ifndef TSA_MODEL_H
#define TSA_MODEL_H

#include "self_cost.h"
#include <stddef.h>
#include <stdint.h>

#define TSA_NONE (-1)

/* Operand precision of a GEMM, used to pick the peak FLOP/s (tsa_gemm.dtype).
 * The loader maps cudaDataType_t / cublasComputeType_t onto it. */
typedef enum tsa_dtype {
    TSA_DTYPE_UNKNOWN = 0,
    TSA_DTYPE_FP32,
    TSA_DTYPE_TF32,
    TSA_DTYPE_FP16,
    TSA_DTYPE_BF16,
    TSA_DTYPE_FP8,
    TSA_DTYPE_FP64,
    TSA_DTYPE_INT8,
    TSA_DTYPE_COUNT
} tsa_dtype;

/* Kernel categories for the kernel table and phase attribution. */
typedef enum tsa_kcat {
    TSA_KCAT_OTHER = 0,
    TSA_KCAT_GEMM,
    TSA_KCAT_ATTENTION,
    TSA_KCAT_ELEMENTWISE,
    TSA_KCAT_NORM,
    TSA_KCAT_REDUCTION,
    TSA_KCAT_OPTIMIZER,
    TSA_KCAT_COMM,
    TSA_KCAT_COPY,   /* copy kernels and memcpy/memset records */
    TSA_KCAT_CONV,   /* convolutions (cuDNN / MIOpen dgrad, wgrad, fprop, implicit GEMM) */
    TSA_KCAT_EMBEDDING, /* embedding-table lookups and their updates (FBGEMM TBE) */
    TSA_KCAT_COUNT
} tsa_kcat;

/* Training phases (per rank per step). */
typedef enum tsa_phase {
    TSA_PHASE_UNKNOWN = 0,
    TSA_PHASE_DATA,
    TSA_PHASE_FORWARD,
    TSA_PHASE_BACKWARD,
    TSA_PHASE_OPTIMIZER,
    TSA_PHASE_COMM,
    TSA_PHASE_IDLE,
    TSA_PHASE_OTHER,
    TSA_PHASE_COUNT
} tsa_phase;

/* The analyzer's own bits of tsa_nccl_op.flags, in one place: the dump's
 * TSC_NCCL_F_* take the low bits, these the high ones.  Each is one bit and
 * no two share one (asserted below: 0x40 once stood for both WATCHDOG and
 * CPU_BACKEND; harmless only because calls in flight come from dumps and
 * gloo calls from traces).
 *   TSA_NCCL_F_WATCHDOG      a call still in flight (tsa_rank.pending) that
 *                            the TSCOPE_HANG_S watchdog reported while the
 *                            process was alive;
 *   TSA_NCCL_F_CPU_BACKEND   a collective of a CPU backend (gloo) read from
 *                            a trace: a job with no other GPU record is
 *                            CPU-only;
 *   TSA_NCCL_F_BYTES_UNKNOWN the input did not say how many bytes the call
 *                            moved (a Kineto NCCL kernel without its CPU
 *                            op's sizes): bytes = 0 means unknown, not empty. */
#define TSA_NCCL_F_WATCHDOG 0x20
#define TSA_NCCL_F_CPU_BACKEND 0x40
#define TSA_NCCL_F_BYTES_UNKNOWN 0x80
#define TSA_NCCL_F_ONE_BIT_(f) ((f) != 0 && ((f) & ((f) - 1)) == 0)
_Static_assert(TSA_NCCL_F_ONE_BIT_(TSA_NCCL_F_WATCHDOG) &&
                   TSA_NCCL_F_ONE_BIT_(TSA_NCCL_F_CPU_BACKEND) &&
                   TSA_NCCL_F_ONE_BIT_(TSA_NCCL_F_BYTES_UNKNOWN),
               "each analyzer flag is a single bit");
_Static_assert((TSA_NCCL_F_WATCHDOG | TSA_NCCL_F_CPU_BACKEND | TSA_NCCL_F_BYTES_UNKNOWN) ==
                   (TSA_NCCL_F_WATCHDOG + TSA_NCCL_F_CPU_BACKEND + TSA_NCCL_F_BYTES_UNKNOWN),
               "two analyzer flags share a bit");

typedef struct tsa_nccl_op {
    int64_t start_ns, end_ns;   /* host enter / exit */
    uint64_t seq;               /* per (comm_id, comm_rank) sequence number */
    uint64_t comm_id;
    uint64_t count, bytes;
    uint64_t stream;
    uint32_t comm_rank, comm_size;
    uint32_t tid;
    int32_t peer;               /* root or peer, -1 none */
    uint8_t op;                 /* enum tsc_nccl_op */
    uint8_t dtype, redop;
    uint8_t result;             /* ncclResult_t */
    uint8_t group_depth;
    uint8_t flags;              /* TSC_NCCL_F_* */
    int32_t kernel;             /* index into kernels of its NCCL kernel, or -1 */
    /* GPU-side interval of its kernel when linked (else equal to host times) */
    int64_t gpu_start_ns, gpu_end_ns;
} tsa_nccl_op;

/* How a rank's process ended (END chunk) and when its dump last spoke. */
typedef struct tsa_rank_end {
    char reason[24];            /* end_reason: "exit", "signal:15", "exec"; "" = no END */
    int has_exit_code;
    int32_t exit_code;          /* status given to exit / _exit / return from main */
    int64_t last_ns;            /* END time, else the latest flush's anchor; 0 unknown */
} tsa_rank_end;

typedef struct tsa_kernel {
    int64_t start_ns, end_ns;
    uint32_t name;              /* index into tsa_rank.strings */
    uint32_t stream;            /* CUDA stream id */
    uint32_t device;
    uint32_t correlation;
    uint32_t launch_tid;        /* host thread that launched it, 0 unknown */
    uint32_t grid[3], block[3];
    /* The two bytes sit in what was padding before graph_id: 80 bytes a
     * kernel instead of 88 (the largest record of a torch.profiler trace). */
    uint8_t category;           /* tsa_kcat */
    uint8_t phase;              /* tsa_phase, filled by the phase pass */
    uint64_t graph_id;
    int32_t nccl;               /* index into nccl of the call it belongs to, or -1 */
    int32_t gemm;               /* index into gemms, or -1 */
} tsa_kernel;

typedef enum tsa_copy_dir {
    TSA_COPY_OTHER = 0, TSA_COPY_H2D, TSA_COPY_D2H, TSA_COPY_D2D, TSA_COPY_P2P,
    TSA_COPY_H2H, TSA_COPY_MEMSET
} tsa_copy_dir;

typedef struct tsa_copy {
    int64_t start_ns, end_ns;
    uint64_t bytes;
    uint32_t stream, device;
    uint32_t correlation;
    uint8_t dir;                /* tsa_copy_dir */
    uint8_t pinned;             /* host memory was pinned */
    uint8_t pageable;           /* host memory known to be pageable (0: pinned or unknown) */
    uint8_t bytes_unknown;      /* the input did not give the size (bytes = 0) */
} tsa_copy;

typedef enum tsa_sync_kind {
    TSA_SYNC_OTHER = 0, TSA_SYNC_STREAM, TSA_SYNC_EVENT, TSA_SYNC_CONTEXT,
    TSA_SYNC_DEVICE, TSA_SYNC_STREAM_WAIT_EVENT
} tsa_sync_kind;

typedef struct tsa_sync {
    int64_t start_ns, end_ns;   /* host duration of the call */
    uint32_t tid;
    uint32_t stream;
    uint8_t kind;               /* tsa_sync_kind */
} tsa_sync;

typedef struct tsa_gemm {
    int64_t start_ns, end_ns;   /* host call */
    uint64_t m, n, k, batch;
    double flops;               /* 2*m*n*k*batch (complex: x4) */
    uint32_t tid;
    uint8_t dtype;              /* compute/operand dtype, see docs/format.md */
    int32_t kernel;             /* index into kernels, or -1 */
} tsa_gemm;

typedef struct tsa_api {
    int64_t start_ns, end_ns;
    uint32_t tid;
    uint32_t correlation;
    uint32_t name;              /* index into strings (API function name) */
} tsa_api;

typedef struct tsa_range {      /* NVTX range or annotation */
    int64_t start_ns, end_ns;
    uint32_t tid;
    uint32_t name;              /* index into strings */
} tsa_range;

/* One training step on one rank, found by the step pass (analyzer/passes/steps.h). */
typedef struct tsa_step {
    int64_t start_ns, end_ns;   /* own clock */
    int64_t compute_ns;         /* busy computing (GPU kernels, or host time between collectives) */
    int64_t comm_ns;            /* inside collectives */
    int64_t phase_ns[TSA_PHASE_COUNT];
    size_t first_nccl, n_nccl;  /* the step's NCCL calls: nccl[first_nccl .. +n_nccl) */
    int warmup;                 /* 1 when skipped as warm-up */
} tsa_step;

/* One device memory operation (v1.1 dumps), see analyzer/load/memory_timeline.h. */
typedef enum tsa_mem_op {
    TSA_MEM_ALLOC = 0,          /* bytes taken */
    TSA_MEM_FREE = 1,           /* bytes given back */
    TSA_MEM_POOL = 2,           /* a pool now holds `bytes` from the device */
} tsa_mem_op;

typedef struct tsa_mem_event {
    int64_t t_ns;
    uint64_t bytes;
    uint64_t pool;              /* pool identity (TSA_MEM_POOL and async ops), else 0 */
    uint32_t device, stream;
    uint8_t op;                 /* tsa_mem_op */
    uint8_t source;             /* enum tsc_mem_source */
} tsa_mem_event;

typedef struct tsa_thread {
    uint32_t tid;
    uint32_t name;              /* index into strings */
} tsa_thread;

/* A problem found while loading (corrupt chunk, unknown record, ...). */
typedef struct tsa_problem {
    char *file;
    uint64_t offset;
    char *message;
} tsa_problem;

/* What the host was doing during a span of a torch.profiler trace, kept so
 * that GPU idle time can be explained by it (analyzer/core/idle_cause.h).
 * Kinds in the order a cause wins when spans overlap. */
typedef enum tsa_host_kind {
    TSA_HOST_DATA = 0,          /* waiting for the DataLoader (__next__) */
    TSA_HOST_SYNC,              /* synchronising: stream/device sync, .item(), blocking copy */
    TSA_HOST_ALLOC,             /* allocator calls that block: cudaFree, cudaMalloc, hipFree */
    TSA_HOST_CPU_OP,            /* CPU operators (top-level spans of one thread, merged) */
    TSA_HOST_PYTHON,            /* Python functions (with_stack traces; merged likewise) */
    TSA_HOST_KINDS
} tsa_host_kind;

typedef struct tsa_host_span {
    int64_t start_ns, end_ns;
    uint32_t tid;
    uint8_t kind;               /* tsa_host_kind */
} tsa_host_span;

typedef struct tsa_rank {
    int32_t rank;               /* global rank, -1 unknown */
    int32_t local_rank;
    int32_t world_size;
    char *host;
    char *run_id;
    char *file;                 /* dump path (or trace path) */
    char *device_name;          /* GPU name, NULL if unknown */
    char *cmdline;
    uint32_t pid;
    uint32_t restart;
    int64_t first_ns, last_ns;  /* extent of all records */
    int64_t clock_offset_ns;    /* set by the cross-rank pass */
    uint64_t dropped_events;
    int clean_end;              /* 1 when the END chunk was read */

    tsa_nccl_op *nccl;   size_t n_nccl;
    tsa_kernel *kernels; size_t n_kernels;
    tsa_copy *copies;    size_t n_copies;
    tsa_sync *syncs;     size_t n_syncs;
    tsa_gemm *gemms;     size_t n_gemms;
    tsa_api *apis;       size_t n_apis;
    tsa_range *ranges;   size_t n_ranges;
    tsa_thread *threads; size_t n_threads;

    char **strings;      size_t n_strings;   /* interned names */

    tsa_step *steps;     size_t n_steps;     /* filled by the step pass */

    /* For the hang analysis (analyzer/hang): calls entered (ENTER record)
     * that never returned, at most one per thread, end_ns = start_ns. */
    tsa_nccl_op *pending; size_t n_pending;
    tsa_rank_end end;

    /* Capacities of the arrays above, used by the tsa_rank_add_* builders
     * (analyzer/load/job_build.h); 0 for arrays filled another way. */
    size_t cap_nccl, cap_kernels, cap_copies, cap_syncs, cap_gemms, cap_apis,
        cap_ranges, cap_threads, cap_strings;
    void *string_index;  /* private to job_build.c: string interning table */
    /* --- appended: what the capture lost (dump metadata) --- */
    uint64_t dropped_write_bytes;   /* bytes the writer could not write (full disk, I/O error) */
    uint64_t cupti_dropped_records; /* GPU activity records CUPTI dropped */
    /* --- appended: GPU and host telemetry (analyzer/load/rank_telemetry.h), NULL none --- */
    struct tsa_telemetry *telemetry;
    /* --- appended: device memory (analyzer/load/memory_timeline.h) --- */
    tsa_mem_event *mem;  size_t n_mem, cap_mem;  /* in arrival order until the memory pass sorts them */
    uint64_t mem_total_bytes;   /* device memory: cuMemGetInfo total, else device_mem_bytes; 0 unknown */
    uint64_t mem_free_bytes;    /* cuMemGetInfo free at start; 0 unknown */
    int64_t mem_info_ns;        /* when that was sampled; 0 unknown */
    /* --- appended: a remote rank (tscope-report-mpi).  Its bulk records
     * (kernels, copies, syncs, GEMMs, API calls, ranges) stayed on the
     * process that loaded it, which runs the per-rank stages on them
     * (analyzer/passes/rank_stages.h); here those arrays are empty, and of
     * its strings only the names of its threads and telemetry tasks are
     * kept (the others NULL, no intern table: add nothing to it).  All 0
     * for a rank that holds its records. --- */
    int remote;
    uint32_t remote_home, remote_index; /* that process, and the rank's index in its job */
    /* --- appended: GPU records the capture lost (reader/gpu_loss.h) --- */
    uint64_t gpu_kernels_lost;      /* kernels launched that are not in the dump */
    uint64_t gpu_dropped_device;    /* device records CUPTI dropped, kind unknown */
    /* --- appended: NCCL's own device memory (format 1.2), kept out of mem --- */
    uint64_t mem_nccl_bytes, mem_nccl_peak_bytes; /* held now (at load), most held */
    /* --- appended: NCCL profiler plugin records (analyzer/load/rank_nprof.h), NULL none --- */
    struct tsa_nprof *nprof;
    uint64_t remote_records;      /* bulk records left there (tsa_rank_records) */
    uint64_t remote_kernels;      /* kernel records among them */
    /* --- appended: host activity of a torch.profiler trace (tsa_host_span),
     * sorted by start; empty for dumps.  host_records: the trace had CPU
     * operator records at all (a GPU-only trace cannot explain idle time). --- */
    tsa_host_span *host_spans; size_t n_host_spans, cap_host_spans;
    int host_records;
    uint64_t launches;            /* kernel launch API calls seen (0 unknown) */
    /* --- appended: the main thread's top-level calls under its wrappers, in
     * order (torch.profiler traces; load/kineto_loop.h): a loop without
     * step records repeats one of them each iteration.  Empty for dumps. --- */
    tsa_range *top_calls; size_t n_top_calls, cap_top_calls;
    /* --- appended: a lean rank's calls and steps, compact (issue 27;
     * load/lean_calls.h, lean_steps.h).  When set, nccl (steps) is NULL and
     * n_nccl (n_steps) still counts them: passes over a job that may hold
     * lean ranks read them through tsa_view_open (load/rank_view.h). --- */
    struct tsa_lean_calls *lean_calls;
    struct tsa_lean_steps *lean_steps;
    /* --- appended: the CUPTI client that kept CUPTI from tscope or took it
     * over (dump metadata cupti_other_client: its call and library, a tool's
     * injection library, or "unknown"); NULL when tscope held CUPTI. --- */
    char *cupti_other;
    /* --- appended: tscope's own cost in this rank's run (model/self_cost.h) --- */
    tsa_self_cost self_cost;
    /* --- appended: the device's CUDA compute capability, major * 10 +
     * minor (86 = 8.6): trace deviceProperties computeMajor/Minor, dump
     * metadata device.N.compute_capability; 0 not recorded --- */
    uint16_t compute_capability;
} tsa_rank;

/* Kernel records of a rank, wherever they are (see tsa_rank.remote). */
static inline uint64_t tsa_rank_kernel_count(const tsa_rank *r)
{
    return (uint64_t)r->n_kernels + r->remote_kernels;
}

/* A dump left out because another dump of the same run claims its rank
 * (analyzer/load/dup_ranks.h). */
typedef struct tsa_duplicate {
    int32_t rank;
    char *kept_file;            /* the dump analysed for that rank */
    char *dropped_file;         /* the dump left out */
} tsa_duplicate;

typedef struct tsa_job {
    char *dir;
    char *run_id;
    tsa_rank *ranks;     size_t n_ranks;     /* sorted by rank */
    tsa_problem *problems; size_t n_problems;
    /* other run ids found in the same directory (reported, not mixed) */
    char **other_runs;   size_t n_other_runs;
    size_t cap_ranks, cap_problems, cap_other_runs; /* builder capacities */
    uint64_t dump_bytes;        /* bytes of dumps read (0 for in-memory jobs) */
    uint64_t events_read;       /* event slots read */
    /* --- appended --- */
    tsa_duplicate *duplicates; size_t n_duplicates;  /* dumps left out, see dup_ranks.h */
} tsa_job;

#endif
