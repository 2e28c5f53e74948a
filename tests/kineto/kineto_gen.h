/* Writes small torch.profiler (Kineto) traces whose every number is known,
 * so tests can check what the loader and the views compute.  One step of
 * rank r (times in microseconds from the step start, D = compute delay of
 * this rank):
 *
 *   main thread (tid 100):  ProfilerStep#s    [0, 990]
 *     cudaMemcpyAsync [1, 3]   -> Memcpy HtoD [5, 15] 4096 bytes
 *     cudaLaunchKernel [20, 23] -> gemm fwd kernel [30.25, 230.25 + D]
 *   autograd thread (tid 200, "pt_autograd_0"):
 *     cudaLaunchKernel [235, 238] -> gemm bwd kernel [240.25 + D, 440.25 + D]
 *     record_param_comms [445 + D, 455 + D] allreduce 1048576 Float, pg "0"
 *       cuLaunchKernelEx [447 + D, 449 + D] -> ncclDevKernel_AllReduce [450 + D, 900]
 *   main thread: cudaLaunchKernel [901, 903] -> multi_tensor_apply [905, 955]
 *                cudaStreamSynchronize [960, 965]
 *
 * The all-reduce ends at 900 on every rank, so a slow rank (D > 0) shows the
 * shortest collective, as on real hardware. */
#ifndef KINETO_GEN_H
#define KINETO_GEN_H

#include <stdint.h>

#define KGEN_STEP_US 1000
#define KGEN_ALLREDUCE_NELEMS 1048576
/* The pid of a generated trace's events: tensorboard_trace_handler names a
 * file "<host>_<pid>.<time>.pt.trace.json" with it, and the loader takes
 * the host from the name only when that number is the trace's pid. */
#define KGEN_PID(rank) (4000 + (rank))
#define KGEN_MAIN_TID 100
#define KGEN_AUTOGRAD_TID 200
#define KGEN_COMPUTE_STREAM 7
#define KGEN_NCCL_STREAM 20

typedef struct kgen_opts {
    int rank, world_size;
    int steps;
    int64_t base_ns;        /* baseTimeNanoseconds, 0 = leave it out */
    int delay_us;           /* D: extra compute on this rank */
    int with_seq;           /* record_param_comms carries "Seq" */
    int gzip;
    int odd_names;          /* one kernel name with quotes, backslash, control and non-UTF-8 bytes */
    int no_dist_info;       /* leave out distributedInfo */
    int pad_kernels;        /* extra tiny elementwise kernels per step (benchmarks) */
} kgen_opts;

/* Returns 0, or -1 when the file could not be written. */
int kgen_write(const char *path, const kgen_opts *o);

#endif
