/* Ground-truth job generator: writes synthetic multi-rank dumps through the
 * real dump writer (preload/core/dump_file.h) and reports the answers an exact
 * analysis must find.  Used by the analyzer's tests, by `tsc-gen-job`, and
 * by other parts' tests.
 *
 * Timeline of step k on rank r (common clock; a rank's dump adds its clock
 * offset):
 *   [S_k, S_k + stall)                 GPU idle, no record (data stall)
 *   [.., ce_r = S_k + stall + C_r)     compute kernels back to back; the first
 *                                      half launched from the main thread
 *                                      (forward), the second from
 *                                      "pt_autograd_0" (backward), the last
 *                                      one an optimizer kernel
 *   [ce_r - O + b*O/nb, L - O + (b+1)*O/nb)  bucket AllReduce b (nb = buckets-1):
 *                                      starts on own time, ends together;
 *                                      [ce_r - O, ce_r) is hidden (overlap)
 *   [ce_r, L + X)                      last AllReduce: waits until the last
 *                                      rank arrives (L = max ce), then X of
 *                                      transfer
 *   S_{k+1} = L + X
 * with C_r = compute (x (1 + slowdown) on the straggler), M = comm share of
 * the step, O = overlap * M, X = M - O.  Host-only mode writes no GPU
 * records: the NCCL calls block for their whole GPU interval.
 *
 * Kernel-mix options (GPU mode) reshape the compute part without moving
 * anything else: the first copy_share of C_r is one host-to-device memcpy
 * (pageable or pinned), the next memset_share a memset, the kernels share
 * the rest; fp32_gemm makes the GEMMs plain fp32 (cuBLAS records and
 * "sgemm" names); syncs_per_step cudaStreamSynchronize calls in the first
 * half of the kernels each return when the kernel before them ends and
 * leave the GPU idle sync_gap_ns before the next one (the compute span
 * grows by syncs_per_step * sync_gap_ns); stall_every N > 1 puts the data
 * stall only on steps 0, N, 2N, ... */
#ifndef TSC_GEN_JOB_H
#define TSC_GEN_JOB_H

#include <stddef.h>
#include <stdint.h>

#define GEN_MAX_RANKS 100000

typedef struct gen_options {
    int ranks;                 /* default 4 */
    int ranks_per_host;        /* default 8 */
    int steps;                 /* default 10 */
    int events_per_step;       /* approximate events per rank per step, default 64 */
    double step_ms;            /* nominal step time (without the straggler), default 100 */
    double comm;               /* communication share of the nominal step, default 0.3 */
    double overlap;            /* share of the communication hidden, default 0.5 */
    double stall;              /* data-stall share of the nominal step, default 0 */
    double flops;              /* FLOPs per step per rank as GEMM records, default 0 */
    int buckets;               /* AllReduces per step, default 4 */
    int straggler;             /* rank, -1 none */
    double slowdown;           /* straggler's extra compute, 0.2 = 20% */
    int offset_rank;           /* rank whose host's clock is offset, -1 none */
    int64_t offset_ns;
    int host_only;             /* 1: no GPU records */
    int lossy_rank;            /* rank whose dump says writes were lost, -1 none */
    uint64_t lost_write_bytes; /* its dropped_write_bytes */
    int warmup;                /* warm-up steps for the truth, default 2 */
    uint64_t seed;             /* jitter of kernel durations (exact totals kept) */
    double copy_share;         /* share of C_r done as one H2D memcpy, default 0 */
    double memset_share;       /* share of C_r done as one memset, default 0 */
    int pageable;              /* 1: the H2D copies come from pageable memory */
    int fp32_gemm;             /* 1: GEMMs compute in plain fp32 */
    int syncs_per_step;        /* host stream syncs per step, default 0 */
    int64_t sync_gap_ns;       /* GPU idle after each sync, default 0 */
    int stall_every;           /* > 1: data stall on every Nth step only */
    /* The input evidence of the data stall (issue 38): by default a 1 us
     * host-to-device copy ends each stall; stall_no_copy 1 leaves it out.
     * workers > 0 writes the host sampler's records (every 10 ms, as
     * TSC_EV_PROC_CPU and TSC_EV_TASK_CPU) of that many DataLoader worker
     * processes, each running worker_cpus of a CPU during the stalls and
     * idle otherwise. */
    int stall_no_copy;
    int workers;
    double worker_cpus;
    /* Device memory records (gen_mem.h), GPU mode; all 0: none. */
    uint64_t mem_base;         /* bytes cudaMalloc'd once at start-up */
    uint64_t mem_leak;         /* bytes allocated each step and never freed */
    int mem_leak_rank;         /* rank that leaks, -1 every rank (default -1) */
    uint64_t mem_churn;        /* bytes allocated and freed again each step */
    uint64_t mem_pool;         /* stream-ordered pool of this size, used each step */
    uint64_t mem_total;        /* device memory (mem_info_total_bytes), 0: not written */
    uint64_t mem_free;         /* free at start (mem_info_free_bytes), 0: not written */
    /* NCCL profiler plugin records (gen_nprof.h): 0 none (default), 1 light
     * capture, 2 full; full makes the link nprof_slow_src -> +1 slower. */
    int nprof;
    int nprof_slow_src;        /* -1 none (default) */
    double nprof_slow_factor;
    /* The own-cost budget's step to light on light_rank at the start of
     * step light_step (cost_step.1 in its dump): no kernels from then on,
     * as the preload's GPU capture stops them.  -1 none (default). */
    int light_rank, light_step;
    /* The same for "fewer NCCL plugin events": no proxy or channel records
     * from the start of step plugin_step on plugin_rank.  -1 none. */
    int plugin_rank, plugin_step;
    const char *device;        /* device name, default "NVIDIA H100 80GB HBM3" */
    const char *device_cc;     /* its compute capability ("7.5") as the capture writes
                                * it (device.0.*), NULL: not written (default) */
    const char *run_id;        /* default "gen-run" */
    const char *dir;           /* output directory (created) */
} gen_options;

void gen_default_options(gen_options *o);

/* Known answers, summed over ranks over the analysed steps
 * [warmup, steps).  Category indices are tsa_kcat values. */
typedef struct gen_truth {
    int64_t wall_ns;           /* summed over ranks */
    int64_t compute_ns;
    int64_t comm_ns, overlapped_ns, exposed_ns, wait_ns, transfer_ns;
    int64_t stall_ns;
    double flops;
    int steps_total, steps_analysed;
    int64_t kcat_ns[16];
    /* Kernel mix (GPU mode), summed like the rest: */
    int64_t gpu_busy_ns;       /* union of kernels and copies */
    int64_t memcpy_ns, memset_ns, pageable_ns;
    int64_t fp32_gemm_ns;
    uint64_t syncs;
    int64_t sync_idle_ns;      /* GPU idle right after the syncs */
    int stalled_steps;         /* analysed steps with a data stall (rank 0) */
    /* Memory (gen_mem.h): the rank with the highest peak (the leaking
     * one, else rank 0), its peak (reserved) and when it was first reached
     * (common clock), growth per step of a leaking rank, churn per step,
     * the capacity the analysis should find (free at start, else total). */
    int mem_peak_rank;
    uint64_t mem_peak_bytes;
    int64_t mem_peak_ns;
    int64_t mem_growth_per_step;
    uint64_t mem_churn_per_step;
    uint64_t mem_capacity_bytes;
    int64_t mem_first_begin, mem_last_begin; /* the peak rank's first / last step begin */
    uint64_t events;           /* event slots written, all ranks */
    uint64_t bytes;            /* dump bytes, all ranks */
} gen_truth;

/* Returns 0, or -1 with a message on stderr. */
int gen_job(const gen_options *o, gen_truth *truth);

/* Parse "RANK:VALUE". */
int gen_parse_pair(const char *s, int *rank, double *value);

#endif
