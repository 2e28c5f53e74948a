/* The result of every analysis pass over one job (types only; the driver
 * that fills it is driver/analyze.h, the renderers are report/).
 *
 * tsa_analyze runs, in order: steps (per rank), cross-rank (clock alignment
 * and blame, analyzer/crossrank), overlap and exposed communication, the
 * efficiency budget, the kernel / collective / copy tables, the verdict and
 * the findings.  The result borrows the job: free the analysis first.
 *
 * Definitions (docs/report.md gives them in full):
 *  - analysis window of a rank: from the start of its first step after
 *    warm-up to the end of its last complete step; every rank analyses the
 *    same step indices (the smallest step count over the ranks), so windows
 *    are aligned across ranks.  A rank's wall = its window's length.
 *  - budget: wall = useful compute + compute overhead + data stall
 *    + exposed comm (wait) + exposed comm (transfer) + host/launch idle
 *    + copy only + other, exactly, in integer ns, per rank; the job's budget is the sum
 *    over ranks (rank-nanoseconds). */
#ifndef TSA_ANALYSIS_H
#define TSA_ANALYSIS_H

#include <stdint.h>
#include <stdio.h>

#include "cause.h"
#include "xrank.h"
#include "findings.h"
#include "memory.h"
#include "model.h"
#include "tsc_nccl_ops.h"

/* Which span of each rank the budget covers. */
typedef enum tsa_window {
    TSA_WINDOW_STEPS = 0,      /* the analysed steps (after warm-up) */
    TSA_WINDOW_GPU_SPAN,       /* HTA's span: first to last GPU record (gpu_span.h) */
} tsa_window;

typedef struct tsa_analysis_options {
    int warmup;                /* steps skipped at the start; -1 auto (2, fewer if short) */
    const char *step_marker;   /* kernel or NVTX range name (substring); NULL auto */
    double peak_tflops;        /* > 0: overrides the peak table (per GPU) */
    double flops_per_step;     /* > 0: per-rank FLOPs of one step (overrides GEMMs) */
    double params;             /* > 0 with tokens_per_step: 6*N*T (+ attention) */
    double tokens_per_step;    /* tokens processed by one rank in one step */
    double samples_per_step;   /* samples (sequences, images) of one rank in one step */
    int layers, seq, hidden;   /* all > 0: add 12*layers*seq*hidden per token */
    tsa_window window;         /* --window */
    tsa_xrank_options xrank;
    int no_xrank;              /* 1: skip the cross-rank pass (tests) */
} tsa_analysis_options;

/* Budget lines, in the order they are printed. */
typedef enum tsa_budget_line {
    TSA_BL_USEFUL = 0,         /* FLOPs / peak (capped at measured compute) */
    TSA_BL_OVERHEAD,           /* measured compute - useful */
    TSA_BL_DATA_STALL,         /* GPU idle before the step's first work */
    TSA_BL_COMM_WAIT,          /* exposed comm spent waiting for later peers */
    TSA_BL_COMM_TRANSFER,      /* exposed comm after the last peer arrived */
    TSA_BL_HOST_IDLE,          /* GPU idle while the host launches work */
    TSA_BL_COPY,               /* GPU busy with memcpy/memset only */
    TSA_BL_OTHER,              /* the rest of the window */
    TSA_BL_COUNT
} tsa_budget_line;

const char *tsa_budget_line_name(tsa_budget_line l); /* JSON names: "useful_compute", ... */
const char *tsa_budget_line_label(tsa_budget_line l); /* "useful compute", ... */
int tsa_budget_line_recoverable(tsa_budget_line l);

typedef struct tsa_budget {
    int64_t wall_ns;
    int64_t line_ns[TSA_BL_COUNT];   /* sums to wall_ns exactly */
    double mfu;                      /* useful / wall, NAN when FLOPs unknown */
} tsa_budget;
/* 0 for a line these records cannot measure (gpu: GPU records used); its
 * nanoseconds still count toward the exact sum, shown as "not measured". */
int tsa_budget_line_measured(const tsa_budget *b, tsa_budget_line l, int gpu);

typedef struct tsa_overlap {
    int64_t comm_ns;             /* union of communication intervals */
    int64_t overlapped_ns;       /* part hidden behind compute kernels */
    int64_t exposed_ns;          /* comm_ns - overlapped_ns */
    int64_t exposed_wait_ns;     /* exposed, waiting for the last peer */
    int64_t exposed_transfer_ns; /* exposed_ns - exposed_wait_ns */
} tsa_overlap;

typedef enum tsa_step_method {
    TSA_STEPS_NONE = 0,          /* no steps: the whole extent is one window */
    TSA_STEPS_COLLECTIVES,       /* period of the (op, comm, bytes) sequence */
    TSA_STEPS_NVTX,              /* ProfilerStep#N ranges */
    TSA_STEPS_MARKER,            /* --step-marker (NVTX range or kernel) */
    TSA_STEPS_AUTOGRAD,          /* forward/backward launch-thread cycle */
    TSA_STEPS_DATALOADER,        /* starts of DataLoader __next__ (torch.profiler) */
    TSA_STEPS_OPTIMIZER,         /* starts of Optimizer.step (torch.profiler) */
    TSA_STEPS_TOP_CALL,          /* starts of a repeated top-level call (torch.profiler) */
    TSA_STEPS_METHODS
} tsa_step_method;

const char *tsa_step_method_name(tsa_step_method m);

/* Rows of the collective table, indexed by op code: the step operations of
 * the NCCL table, up to GroupEnd (whose blocking time stands for the calls
 * of its group); communicator set-up and tear-down calls are not step
 * communication. */
#define TSA_COLL_ROWS TSC_NCCL_STEP_OP_LIMIT
#define TSA_SIZE_BUCKETS 7      /* <64K, <1M, <16M, <128M, <1G, >=1G, unknown */
#define TSA_SIZE_UNKNOWN (TSA_SIZE_BUCKETS - 1) /* calls of unknown size */
const char *tsa_size_bucket_name(int b);

/* What the host was doing while the GPU idled (idle_cause.h). */
typedef enum tsa_idle_cause {
    TSA_IDLE_DATA_START = 0,   /* GPU idle from a step's start to its first work */
    TSA_IDLE_DATA_LOADER,      /* host inside DataLoader __next__ */
    TSA_IDLE_SYNC,             /* host synchronising (.item(), stream sync, blocking copy) */
    TSA_IDLE_ALLOC,            /* host in a blocking allocator call */
    TSA_IDLE_CPU_OP,           /* host running CPU operators */
    TSA_IDLE_LAUNCH,           /* host in kernel launch calls */
    TSA_IDLE_FIRST_LAUNCH,     /* host in a kernel's first launch (module loading) */
    TSA_IDLE_PYTHON,           /* host in Python, no operator running (with_stack traces) */
    TSA_IDLE_UNTRACED,         /* nothing traced on the host */
    TSA_IDLE_COUNT
} tsa_idle_cause;

enum tsa_input_kind { TSA_INPUT_LOADER, TSA_INPUT_H2D, TSA_INPUT_WORKERS, TSA_INPUT_KINDS };

typedef struct tsa_input_evidence {
    uint32_t gaps[TSA_INPUT_KINDS];  /* step-start gaps booked as data stall, by evidence */
    double worker_cpus_sum;          /* workers' mean CPU, summed over the workers' gaps */
} tsa_input_evidence;

typedef struct tsa_rank_result {
    int32_t rank;
    const char *host;              /* borrowed */
    int gpu;                       /* 1: GPU records (kernels) were used */
    tsa_step_method method;
    size_t steps_found;            /* complete steps found on this rank */
    int64_t window_start_ns, window_end_ns; /* own clock */
    tsa_overlap overlap;
    tsa_budget budget;
    int64_t compute_ns;            /* measured compute in the window */
    double flops;                  /* FLOPs counted for the window */
    int64_t median_step_ns;
    int64_t kcat_ns[TSA_KCAT_COUNT];     /* kernel time (sum of durations) */
    uint64_t kcat_count[TSA_KCAT_COUNT];
    int64_t phase_ns[TSA_PHASE_COUNT];   /* summed over analysed steps */
    /* Exposed time of each NCCL function (index: enum tsc_nccl_op)
     * and message-size bucket; each exposed nanosecond is attributed to
     * the earliest-started call running then (rows sum to the exposed
     * total when every NCCL kernel is linked to its call). */
    int64_t coll_exposed_ns[TSA_COLL_ROWS], coll_exposed_wait_ns[TSA_COLL_ROWS];
    int64_t coll_bucket_exposed_ns[TSA_COLL_ROWS][TSA_SIZE_BUCKETS];
    /* --- appended: GPU idle by what the host was doing (idle_cause.h);
     * the data causes are the data stall line, sync, allocator, CPU
     * operators and launches the host idle line, untraced the other line.
     * host_data: host-only input whose data stall was measured from its
     * DataLoader spans. --- */
    int64_t idle_ns[TSA_IDLE_COUNT];
    int host_data;
    /* --- appended (issue 38): the input evidence each data-stall gap
     * stood on, the first found in this order: a DataLoader span over it,
     * a loop whose steps open with a host-to-device copy, the DataLoader
     * workers busy around it (their mean CPU summed over those gaps). --- */
    tsa_input_evidence input;
} tsa_rank_result;

typedef struct tsa_kernel_row {
    char *name;                 /* owned */
    uint8_t category;
    uint64_t count;
    int64_t ns;                 /* summed over ranks, analysis windows */
} tsa_kernel_row;


typedef struct tsa_coll_row {
    uint8_t op;                 /* enum tsc_nccl_op */
    uint64_t count;             /* calls, summed over ranks */
    uint64_t bytes;             /* of the calls whose size is known */
    uint64_t bytes_unknown;     /* calls whose size the input does not give */
    int64_t ns;                 /* time inside the calls (GPU when linked) */
    double busbw_gbps;          /* bytes * factor / time of the calls of known
                                 * size, GB/s (1e9); NAN when none is known */
    uint64_t bucket_count[TSA_SIZE_BUCKETS];
    int64_t bucket_ns[TSA_SIZE_BUCKETS];
    /* Exposed part of the calls' time (see tsa_rank_result), summed. */
    int64_t exposed_ns, exposed_wait_ns;
    int64_t bucket_exposed_ns[TSA_SIZE_BUCKETS];
} tsa_coll_row;

typedef struct tsa_copy_row {
    uint8_t dir;                /* tsa_copy_dir */
    uint64_t count, bytes;      /* bytes of the copies whose size is known */
    uint64_t bytes_unknown;     /* copies whose size the input does not give */
    int64_t ns;
    double gbps;                /* NAN when no copy's size is known */
} tsa_copy_row;

typedef enum tsa_verdict {
    TSA_VERDICT_UNKNOWN = 0,
    TSA_VERDICT_GPU_BOUND,
    TSA_VERDICT_DATA_BOUND,
    TSA_VERDICT_COMM_BOUND,
    TSA_VERDICT_HOST_BOUND,
    TSA_VERDICT_STRAGGLER_BOUND,    /* late ranks set the pace (verdict.h) */
    TSA_VERDICT_COMPUTE_BOUND,      /* compute, without GPU records to say it is the GPU */
    TSA_VERDICT_COPY_BOUND,         /* host-device copies with no kernel running (issue 38) */
} tsa_verdict;

const char *tsa_verdict_name(tsa_verdict v); /* "gpu-bound", ... */

/* What a batch row or a diff needs, in plain numbers. */
typedef struct tsa_summary_line {
    const char *name;           /* tsa_budget_line_name */
    int64_t ns;                 /* job (summed over ranks) */
    int recoverable;
} tsa_summary_line;

typedef struct tsa_summary_coll {
    uint8_t op;
    const char *name;
    uint64_t count, bytes;
    int64_t ns;
    double busbw_gbps;
} tsa_summary_coll;

typedef struct tsa_summary {
    const char *run_id;
    size_t ranks, hosts;
    size_t steps;                    /* analysed steps (after warm-up) */
    int64_t wall_ns;                 /* job elapsed: longest rank window */
    int64_t median_step_ns;
    int no_steps;                    /* 1: no steps found: the window is the run, taken
                                      * as one "step" for per-step figures; no step
                                      * count or step time to show */
    double mfu;                      /* NAN when unknown */
    tsa_summary_line lines[TSA_BL_COUNT];
    int top_recoverable;             /* index into lines, -1 none */
    double exposed_comm_share;       /* exposed comm / budget wall */
    double data_stall_share;
    int64_t kcat_ns[TSA_KCAT_COUNT];
    tsa_summary_coll colls[16]; size_t n_colls;
    int32_t straggler_rank;          /* -1 none */
    const char *straggler_host;      /* NULL none */
    tsa_verdict verdict;
} tsa_summary;

/* Throughput over the analysis window (throughput.h). */
typedef struct tsa_throughput {
    double steps_per_s;              /* analysed steps / job wall; NAN none */
    double samples_per_s;            /* --samples-per-step x ranks x steps/s; NAN unknown */
    double tokens_per_s;             /* --tokens-per-step x ranks x steps/s; NAN unknown */
    int64_t step_p50_ns, step_p95_ns, step_p99_ns; /* job step time percentiles */
    int64_t *step_ns; size_t n_steps; /* job step time of each analysed step (owned) */
} tsa_throughput;

/* Where records the figures rest on stop being whole: the first rank whose
 * own-cost budget stepped down to a level that thins them
 * (docs/self-cost.md).  rank < 0: no rank did. */
typedef struct tsa_records_cut {
    int rank;                  /* -1 none */
    int64_t at_ns;             /* the step, that rank's clock */
    int64_t resume_ns;         /* its first step back up, 0 none */
    int64_t run_start_ns, run_end_ns; /* that rank's first and last record */
    size_t steps_before;       /* its steps that ended by the step (kernels only) */
    size_t ranks;              /* ranks that took the level */
} tsa_records_cut;

typedef struct tsa_analysis {
    tsa_job *job;                    /* borrowed */
    tsa_analysis_options opt;
    tsa_rank_result *ranks; size_t n_ranks;   /* job rank order */
    size_t hosts;
    tsa_step_method method;          /* of rank 0 (the most common) */
    int warmup;                      /* steps skipped */
    size_t steps_total;              /* steps found (min over ranks) */
    size_t steps;                    /* analysed */
    int64_t median_step_ns;          /* median over ranks of their median */
    double step_cv;                  /* coefficient of variation of step time */
    int64_t wall_ns;                 /* longest rank window */
    tsa_budget budget;               /* summed over ranks */
    tsa_overlap overlap;             /* summed over ranks */
    int gpu;                         /* 1 when GPU records drove the analysis */
    int cpu_only;                    /* no kernel, copy or NCCL call on any rank */
    int cut_short;                   /* some rank's input ended early (partial.h) */
    char partial[512];               /* what is missing (cut short, absent ranks), "" none */
    /* The budget's levels: per-kernel records stop (the window ends there,
     * records_cut.c), NCCL plugin proxy/channel events stop (findings that
     * read them say so). */
    tsa_records_cut kernels_cut, plugin_cut;
    double flops;                    /* summed over ranks */
    const char *flops_source;        /* "gemm", "flops-per-step", "formula", "none" */
    double peak_flops;               /* per GPU, FLOP/s; 0 unknown */
    const char *peak_source;         /* table entry name, "--peak-tflops", "unknown" */
    tsa_dtype dtype;                 /* dominant GEMM dtype */
    const char *device_name;         /* borrowed */
    int64_t kcat_ns[TSA_KCAT_COUNT]; uint64_t kcat_count[TSA_KCAT_COUNT];
    tsa_kernel_row *kernels; size_t n_kernels;  /* top kernels, by time */
    tsa_coll_row *colls; size_t n_colls;
    tsa_copy_row copies[7]; size_t n_copies;
    tsa_verdict verdict;
    char verdict_reason[512];
    int have_xrank;
    tsa_xrank_result xrank;
    tsa_findings findings;           /* sorted */
    struct tsa_hang_result *hang;    /* analyzer/hang: hangs, desyncs, early exits */
    tsa_summary summary;
    /* --- appended: attribution, verdict detail, confidence, throughput --- */
    int64_t late_rank_ns[TSA_BL_COUNT]; /* budget time (summed over ranks) the
                                         * late-rank findings claimed, by line */
    int32_t verdict_rank;            /* rank the verdict names, -1 none */
    const char *verdict_host;        /* borrowed, NULL none */
    tsa_confidence confidence;       /* lowest confidence_cap of the findings */
    tsa_throughput throughput;
    /* --- appended: device memory (memory.h) --- */
    tsa_memory memory;               /* ranks with memory records; n_ranks 0: none */
    /* --- appended: what the per-rank stages took from each rank's bulk
     * records (rank_stages.h), job rank order --- */
    struct tsa_rank_digest *digests;
    /* --- appended: the pipeline what-if (whatif/whatif.h, a later room:
     * only named here); pipe->pipeline 0 on jobs without pipelines --- */
    struct tsa_pipe_result *pipe;
    /* --- appended: GPU idle by host activity, summed over ranks
     * (idle_cause.h); host_records: some rank's input recorded host
     * activity (CPU operators), so idle time can be explained; host_data:
     * a host-only input's data stall was measured from DataLoader spans. --- */
    int64_t idle_ns[TSA_IDLE_COUNT];
    int host_records;
    int host_data;
    /* --- appended: why each blamed rank or host is slow (cause.h) --- */
    tsa_cause_result cause;
    /* --- appended: who ran the per-rank stages (passes/rank_stages.h):
     * its hold reads a remote rank's records again for a renderer that
     * draws them (the HTML timeline of the streaming report); valid while
     * the job's loader lives, NULL functions when it cannot --- */
    const struct tsa_rank_runner *runner;
    /* --- appended: device_name's CUDA compute capability (tsa_rank's),
     * 0 not recorded --- */
    uint16_t device_cc;
} tsa_analysis;

#endif
