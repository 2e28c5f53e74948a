#include "kineto_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

typedef struct writer {
    gzFile gz;
    int first;
    int failed;
} writer;

static void out(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(writer *w, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf || gzwrite(w->gz, buf, (unsigned)n) != n)
        w->failed = 1;
}

/* Times are written as microseconds with three decimals, like Kineto. */
static void ev(writer *w, const char *cat, const char *name, int pid, int tid, int64_t ts_ns,
               int64_t dur_ns, const char *args)
{
    out(w, "%s\n  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
           "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {%s}}",
        w->first ? "" : ",", cat, name, pid, tid, (long long)(ts_ns / 1000),
        (long long)(ts_ns % 1000), (long long)(dur_ns / 1000), (long long)(dur_ns % 1000),
        args ? args : "");
    w->first = 0;
}

int kgen_write(const char *path, const kgen_opts *o)
{
    writer w = {gzopen(path, o->gzip ? "wb6" : "wbT"), 1, 0};
    if (!w.gz)
        return -1;
    int pid = KGEN_PID(o->rank), gpu = o->rank % 8;
    out(&w, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n"
            "    {\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85000000000},\n"
            "    {\"id\": 1, \"name\": \"other GPU\"}\n  ],\n");
    if (!o->no_dist_info)
        out(&w, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d, "
                "\"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"ranks\": [0]}]},\n",
            o->rank, o->world_size);
    out(&w, "  \"record_shapes\": 0,\n  \"traceEvents\": [");
    out(&w, "\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": %d, \"tid\": %d, "
            "\"args\": {\"name\": \"python\"}},",
        pid, KGEN_MAIN_TID);
    out(&w, "\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": %d, \"tid\": %d, "
            "\"args\": {\"name\": \"thread %d (pt_autograd_0)\"}}",
        pid, KGEN_AUTOGRAD_TID, KGEN_AUTOGRAD_TID);
    w.first = 0;
    char ranks[4096] = "[";
    for (int r = 0; r < o->world_size && strlen(ranks) < sizeof ranks - 16; r++)
        snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), "%s%d", r ? ", " : "", r);
    strcat(ranks, "]");
    const int64_t us = 1000, D = (int64_t)o->delay_us * us;
    int corr = 1;
    char args[4096];
    for (int s = 0; s < o->steps; s++) {
        int64_t t0 = (int64_t)s * KGEN_STEP_US * us;
        char step[32];
        snprintf(step, sizeof step, "ProfilerStep#%d", s);
        ev(&w, "user_annotation", step, pid, KGEN_MAIN_TID, t0, 990 * us, NULL);
        /* H2D input copy */
        snprintf(args, sizeof args, "\"correlation\": %d", corr);
        ev(&w, "cuda_runtime", "cudaMemcpyAsync", pid, KGEN_MAIN_TID, t0 + 1 * us, 2 * us, args);
        snprintf(args, sizeof args,
                 "\"device\": %d, \"stream\": %d, \"correlation\": %d, \"bytes\": 4096", gpu,
                 KGEN_COMPUTE_STREAM, corr);
        ev(&w, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", gpu, KGEN_COMPUTE_STREAM,
           t0 + 5 * us, 10 * us, args);
        corr++;
        /* forward GEMM */
        snprintf(args, sizeof args, "\"correlation\": %d", corr);
        ev(&w, "cuda_runtime", "cudaLaunchKernel", pid, KGEN_MAIN_TID, t0 + 20 * us, 3 * us, args);
        snprintf(args, sizeof args,
                 "\"device\": %d, \"stream\": %d, \"correlation\": %d, \"grid\": [132, 2, 1], "
                 "\"block\": [256, 1, 1]",
                 gpu, KGEN_COMPUTE_STREAM, corr);
        ev(&w, "kernel", o->odd_names && s == 0 ? "odd \\\"q\\\" back\\\\slash \\u0001 \xff end"
                                                 : "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
           gpu, KGEN_COMPUTE_STREAM, t0 + 30 * us + 250, 200 * us + D, args);
        corr++;
        /* backward GEMM on the autograd thread */
        snprintf(args, sizeof args, "\"correlation\": %d", corr);
        ev(&w, "cuda_runtime", "cudaLaunchKernel", pid, KGEN_AUTOGRAD_TID, t0 + 235 * us, 3 * us, args);
        snprintf(args, sizeof args, "\"device\": %d, \"stream\": %d, \"correlation\": %d", gpu,
                 KGEN_COMPUTE_STREAM, corr);
        ev(&w, "kernel", "cutlass_80_wgrad_gemm_kernel", gpu, KGEN_COMPUTE_STREAM,
           t0 + 240 * us + 250 + D, 200 * us, args);
        corr++;
        for (int k = 0; k < o->pad_kernels; k++) {
            snprintf(args, sizeof args, "\"correlation\": %d", corr);
            ev(&w, "cuda_runtime", "cudaLaunchKernel", pid, KGEN_AUTOGRAD_TID, t0 + 238 * us, 1, args);
            snprintf(args, sizeof args, "\"device\": %d, \"stream\": %d, \"correlation\": %d", gpu,
                     KGEN_COMPUTE_STREAM, corr);
            ev(&w, "kernel", "void at::native::vectorized_elementwise_kernel<4>", gpu,
               KGEN_COMPUTE_STREAM, t0 + 440 * us + 250 + D + k, 1, args);
            corr++;
        }
        /* the all-reduce: CPU op with the collective's metadata, then launch */
        int n = snprintf(args, sizeof args,
                         "\"Collective name\": \"allreduce\", \"In msg nelems\": %d, "
                         "\"Out msg nelems\": %d, \"Group size\": %d, \"dtype\": \"Float\", "
                         "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"%s\"",
                         KGEN_ALLREDUCE_NELEMS, KGEN_ALLREDUCE_NELEMS, o->world_size, ranks);
        if (o->with_seq)
            snprintf(args + n, sizeof args - (size_t)n, ", \"Seq\": %d", 1000 + s);
        ev(&w, "cpu_op", "record_param_comms", pid, KGEN_AUTOGRAD_TID, t0 + 445 * us + D, 10 * us, args);
        snprintf(args, sizeof args, "\"correlation\": %d", corr);
        ev(&w, "cuda_driver", "cuLaunchKernelEx", pid, KGEN_AUTOGRAD_TID, t0 + 447 * us + D, 2 * us, args);
        snprintf(args, sizeof args, "\"device\": %d, \"stream\": %d, \"correlation\": %d", gpu,
                 KGEN_NCCL_STREAM, corr);
        ev(&w, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           gpu, KGEN_NCCL_STREAM, t0 + 450 * us + D, 450 * us - D, args);
        corr++;
        /* optimizer */
        snprintf(args, sizeof args, "\"correlation\": %d", corr);
        ev(&w, "cuda_runtime", "cudaLaunchKernel", pid, KGEN_MAIN_TID, t0 + 901 * us, 2 * us, args);
        snprintf(args, sizeof args, "\"device\": %d, \"stream\": %d, \"correlation\": %d", gpu,
                 KGEN_COMPUTE_STREAM, corr);
        ev(&w, "kernel", "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor>", gpu,
           KGEN_COMPUTE_STREAM, t0 + 905 * us, 50 * us, args);
        corr++;
        ev(&w, "cuda_runtime", "cudaStreamSynchronize", pid, KGEN_MAIN_TID, t0 + 960 * us, 5 * us,
           "\"stream\": 7");
    }
    out(&w, "\n  ],\n  \"traceName\": \"%s\",\n  \"displayTimeUnit\": \"ms\"", path);
    if (o->base_ns)
        out(&w, ",\n  \"baseTimeNanoseconds\": %lld", (long long)o->base_ns);
    out(&w, "\n}\n");
    if (gzclose(w.gz) != Z_OK)
        w.failed = 1;
    return w.failed ? -1 : 0;
}
