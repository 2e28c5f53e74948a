/* tsc-standin-job: a training-like job on the CUDA stand-in.
 *
 * Each step: an H2D copy of the batch, K kernel launches (half through
 * cudaLaunchKernel, half through __cudaLaunchKernel, what <<<>>> compiles
 * to in CUDA 13), G cuBLAS GEMMs (through a library loaded with
 * RTLD_LOCAL, as in PyTorch), one all-reduce through NCCL (the test
 * NCCL launches its kernel with cuLaunchKernelEx), a D2H copy of the loss
 * and a device synchronisation.  Options add a CUDA graph replayed every
 * step, a burst of
 * launches, user and NCCL NVTX ranges, and a second CUPTI client that
 * starts at a given step.  --copy-factor F: the slow rank's copies take F
 * times longer (its link to the device is slower); --batch-bytes B: the
 * step's H2D copy.  Run it under tsc-testbed-launch for several
 * ranks.  --truth FILE: what the job did, as key=value lines, to compare
 * with what tscope recorded, with each step's [start, end] (CLOCK_REALTIME
 * ns: from before the batch copy to after the step's last synchronisation)
 * as step_start.N / step_end.N.  With --kineto-at, every step from then on
 * is also marked to the second client (its ProfilerStep#N).
 */
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "nccl_abi.h"
#include "rank_rdzv.h"

/* The stand-in runtime's registration and launch entry points (what
 * nvcc-generated code calls; not in the public headers). */
void __cudaRegisterFunction(void **fatbin, const char *stub, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bdim, dim3 *gdim, int *wsize);
cudaError_t __cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem,
                               cudaStream_t s);

typedef struct options {
    int steps, launches, gemms, burst, graph_kernels, graph_gemms, graph_allreduce;
    int checked_gemm, nvtx;
    /* Launches through the driver outside NCCL, as cuBLASLt launches its
     * sm90 kernels (cuLaunchKernelEx) and Triton its kernels
     * (cuLaunchKernel): per step. */
    int lt_launches, triton_launches;
    /* --init-only: initialise CUDA, query the device, exit (a launcher,
     * a compile worker); --no-nccl: a single-GPU job without NCCL. */
    int init_only, no_nccl;
    int kineto_first;      /* the second client subscribes before CUDA is initialised */
    int kineto_at, kineto_v2, kineto_clock;
    uint64_t kernel_ns;
    const char *truth;
    /* One rank's fault, for the cause tests: its kernels last kernel_factor
     * times longer (a slow device), it launches extra_launches more kernels
     * per step (more work), or its host spins launch_gap_us before each
     * launch (a slow host: the device waits for work). */
    int slow_rank, extra_launches;
    int sync_first;        /* wait for the device before the all-reduce */
    long idle_us;          /* the slow rank sleeps this long before its all-reduce:
                            * late for a reason no record shows */
    double kernel_factor;
    long launch_gap_us;
    long load_us;          /* every rank sleeps this long before each step's batch copy:
                            * waiting for data, the GPU idle */
    double copy_factor;    /* the slow rank's copies take this many times longer */
    size_t batch_bytes;    /* the step's H2D copy (default 64 KiB) */
} options;

typedef struct tally {
    uint64_t runtime_launches, graph_launches, graph_kernels, gemm_calls, gemm_kernels;
    uint64_t nccl_calls, copies, syncs, user_ranges, nccl_ranges;
    uint64_t lt_launches, triton_launches;
    double gemm_flops;
    int ext_status;        /* the first GEMM's cuBLAS status */
    float ext_result;      /* its C[0] */
    int kineto_subscribe;
    int kineto_on;         /* the second client subscribed: steps are marked to it */
    unsigned long long kineto_kernels;
    int kineto_thread_id_type;
    uint64_t *step_start, *step_end;   /* per step, CLOCK_REALTIME ns */
} tally;

static void stub_fwd(void) {}
static void stub_bwd(void) {}
static void stub_opt(void) {}

static int parse(options *o, int argc, char **argv)
{
    static const struct option longs[] = {
        {"steps", 1, 0, 's'}, {"launches", 1, 0, 'k'}, {"gemms", 1, 0, 'g'},
        {"burst", 1, 0, 'b'}, {"graph", 1, 0, 'G'}, {"checked-gemm", 0, 0, 'e'},
        {"graph-gemms", 1, 0, 'M'}, {"graph-allreduce", 0, 0, 'A'},
        {"nvtx", 0, 0, 'n'}, {"kineto-at", 1, 0, 'K'}, {"kineto-v1", 0, 0, '1'},
        {"kineto-clock", 0, 0, 'c'}, {"kernel-ns", 1, 0, 'd'}, {"truth", 1, 0, 't'},
        {"slow-rank", 1, 0, 'r'}, {"kernel-factor", 1, 0, 'f'}, {"extra-launches", 1, 0, 'x'},
        {"launch-gap-us", 1, 0, 'L'}, {"sync-first", 0, 0, 'S'},
        {"idle-us", 1, 0, 'I'}, {"load-us", 1, 0, 'l'}, {"copy-factor", 1, 0, 'C'},
        {"batch-bytes", 1, 0, 'B'}, {"lt-launches", 1, 0, 'X'}, {"triton-launches", 1, 0, 'T'},
        {"init-only", 0, 0, 'i'}, {"no-nccl", 0, 0, 'N'}, {"kineto-first", 0, 0, 'F'},
        {0, 0, 0, 0}};
    *o = (options){.steps = 10, .launches = 100, .kernel_ns = 2000, .kineto_at = -1,
                   .kineto_v2 = 1, .slow_rank = -1, .kernel_factor = 1, .copy_factor = 1,
                   .batch_bytes = 1 << 16};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 's': o->steps = atoi(optarg); break;
        case 'k': o->launches = atoi(optarg); break;
        case 'g': o->gemms = atoi(optarg); break;
        case 'b': o->burst = atoi(optarg); break;
        case 'G': o->graph_kernels = atoi(optarg); break;
        case 'M': o->graph_gemms = atoi(optarg); break;
        case 'A': o->graph_allreduce = 1; break;
        case 'e': o->checked_gemm = 1; break;
        case 'n': o->nvtx = 1; break;
        case 'K': o->kineto_at = atoi(optarg); break;
        case '1': o->kineto_v2 = 0; break;
        case 'c': o->kineto_clock = 1; break;
        case 'd': o->kernel_ns = strtoull(optarg, NULL, 10); break;
        case 't': o->truth = optarg; break;
        case 'r': o->slow_rank = atoi(optarg); break;
        case 'f': o->kernel_factor = strtod(optarg, NULL); break;
        case 'x': o->extra_launches = atoi(optarg); break;
        case 'L': o->launch_gap_us = atol(optarg); break;
        case 'S': o->sync_first = 1; break;
        case 'I': o->idle_us = atol(optarg); break;
        case 'l': o->load_us = atol(optarg); break;
        case 'C': o->copy_factor = strtod(optarg, NULL); break;
        case 'B': o->batch_bytes = strtoull(optarg, NULL, 10); break;
        case 'X': o->lt_launches = atoi(optarg); break;
        case 'T': o->triton_launches = atoi(optarg); break;
        case 'i': o->init_only = 1; break;
        case 'N': o->no_nccl = 1; break;
        case 'F': o->kineto_first = 1; break;
        default: return -1;
        }
    }
    return 0;
}

static void register_kernels(void)
{
    __cudaRegisterFunction(NULL, (const char *)stub_fwd, NULL, "_Z11fwd_layer_kPfS_i", -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(NULL, (const char *)stub_bwd, NULL, "_Z11bwd_layer_kPfS_i", -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(NULL, (const char *)stub_opt, NULL,
                           "_Z25multi_tensor_apply_kernelPfi", -1, NULL, NULL, NULL, NULL, NULL);
}

static void launch(tally *t, int i, uint64_t ns, cudaStream_t s)
{
    void *args[] = {&ns};
    dim3 g = {(unsigned)(i % 7) + 1, 1, 1}, b = {256, 1, 1};
    const void *fn = i % 3 == 0 ? (const void *)stub_fwd
                     : i % 3 == 1 ? (const void *)stub_bwd : (const void *)stub_opt;
    if (i % 2)
        cudaLaunchKernel(fn, g, b, args, 0, s);
    else
        __cudaLaunchKernel(fn, g, b, args, 0, s);
    t->runtime_launches++;
}

/* Launches a library makes through the driver, not through NCCL: a
 * cuBLASLt-like kernel with cuLaunchKernelEx (what light mode must not
 * mistake for NCCL's launcher) or a Triton-like one with cuLaunchKernel. */
static void driver_launch(tally *t, int ex, uint64_t ns, cudaStream_t s)
{
    static CUfunction lt, triton;
    if (lt == NULL &&
        (cuModuleGetFunction(&lt, NULL, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_"
                                        "tilesize128x128x64_warpgroupsize1x1x1_cublasLt") !=
             CUDA_SUCCESS ||
         cuModuleGetFunction(&triton, NULL, "triton_poi_fused_add_mul_0") != CUDA_SUCCESS))
        return;
    void *params[] = {&ns};
    if (ex) {
        CUlaunchConfig cfg = {.gridDimX = 4, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128,
                              .blockDimY = 1, .blockDimZ = 1, .hStream = (CUstream)s};
        cuLaunchKernelEx(&cfg, lt, params, NULL);
        t->lt_launches++;
    } else {
        cuLaunchKernel(triton, 2, 1, 1, 256, 1, 1, 0, (CUstream)s, params, NULL);
        t->triton_launches++;
    }
}

/* A marker pair through the stand-in CUPTI, as NVTX routed to CUPTI gives. */
static void nvtx_range(const char *domain, const char *name, uint32_t id, uint64_t t0,
                       uint64_t t1)
{
    static void (*marker)(const char *, const char *, uint32_t, uint64_t, uint64_t, uint32_t);
    if (marker == NULL) {
        void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
        if (h)
            *(void **)&marker = dlsym(h, "sim_cupti_marker");
    }
    if (marker)
        marker(domain, name, id, t0, t1, (uint32_t)syscall(SYS_gettid));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Host work before a launch: a busy wait, so the CPU time shows it. */
static void spin_us(long us)
{
    uint64_t until = now_ns() + (uint64_t)us * 1000u;
    while (now_ns() < until)
        ;
}

/* The job's GEMM library, loaded as Python loads extensions. */
typedef struct gemm_lib {
    void *h;
    int (*gemm)(void *, const float *, const float *, float *, int);
    int (*sgemm)(void *, const float *, const float *, float *, int);
    void (*set_stream)(void *, void *);
} gemm_lib;

static int gemm_lib_open(gemm_lib *g)
{
    void *lib = dlopen(SIM_EXT_PATH, RTLD_NOW | RTLD_LOCAL);
    void *(*handle)(void) = lib ? (void *(*)(void))dlsym(lib, "sim_ext_handle") : NULL;
    if (handle == NULL)
        return -1;
    *(void **)&g->gemm = dlsym(lib, "sim_ext_gemm");
    *(void **)&g->sgemm = dlsym(lib, "sim_ext_sgemm");
    *(void **)&g->set_stream = dlsym(lib, "sim_ext_set_stream");
    g->h = handle();
    return g->h && g->gemm && g->sgemm && g->set_stream ? 0 : -1;
}

static void gemm(tally *t, const gemm_lib *g, float *A, float *B, float *C, int n)
{
    int st = g->gemm(g->h, A, B, C, n);
    if (t->gemm_calls == 0)
        t->ext_status = st;
    if (st != 0)
        return;
    t->gemm_calls++;
    t->gemm_kernels++;
    t->gemm_flops += 2.0 * n * n * n;
}

/* A 2x2 product whose result the job checks: C[0] = 1*5 + 3*6 = 23
 * (column-major). */
static void checked_gemm(tally *t, const gemm_lib *g)
{
    float A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, C[4] = {0};
    t->ext_status = g->sgemm(g->h, A, B, C, 2);
    t->ext_result = C[0];
}

static void kineto(tally *t, const options *o)
{
    void *h = dlopen(SIM_KINETO_PATH, RTLD_NOW | RTLD_LOCAL);
    int (*start)(int, int) = h ? (int (*)(int, int))dlsym(h, "sim_kineto_start") : NULL;
    int (*tid_type)(void) = h ? (int (*)(void))dlsym(h, "sim_kineto_thread_id_type") : NULL;
    if (start == NULL || tid_type == NULL) {
        t->kineto_subscribe = -1;
        return;
    }
    t->kineto_subscribe = start(o->kineto_v2, o->kineto_clock);
    t->kineto_on = t->kineto_subscribe == 0;
    t->kineto_thread_id_type = tid_type();
}

/* prof.step(): the step's range, to the second client once it started. */
static void kineto_step(const tally *t, int step, uint64_t t0, uint64_t t1)
{
    if (!t->kineto_on)
        return;
    void *h = dlopen(SIM_KINETO_PATH, RTLD_NOW | RTLD_NOLOAD);
    void (*mark)(int, uint64_t, uint64_t) =
        h ? (void (*)(int, uint64_t, uint64_t))dlsym(h, "sim_kineto_step") : NULL;
    if (mark)
        mark(step, t0, t1);
}

static void kineto_finish(tally *t)
{
    void *h = dlopen(SIM_KINETO_PATH, RTLD_NOW | RTLD_NOLOAD);
    unsigned long long (*stop)(void) =
        h ? (unsigned long long (*)(void))dlsym(h, "sim_kineto_stop") : NULL;
    if (stop)
        t->kineto_kernels = stop();
}

static int write_truth(const char *prefix, int rank, const tally *t, int steps)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "steps=%d\nruntime_launches=%llu\ngraph_launches=%llu\ngraph_kernels=%llu\n",
            steps, (unsigned long long)t->runtime_launches,
            (unsigned long long)t->graph_launches, (unsigned long long)t->graph_kernels);
    fprintf(f, "gemm_calls=%llu\ngemm_kernels=%llu\ngemm_flops=%.0f\n",
            (unsigned long long)t->gemm_calls, (unsigned long long)t->gemm_kernels,
            t->gemm_flops);
    fprintf(f, "nccl_calls=%llu\ncopies=%llu\nsyncs=%llu\n", (unsigned long long)t->nccl_calls,
            (unsigned long long)t->copies, (unsigned long long)t->syncs);
    fprintf(f, "user_ranges=%llu\nnccl_ranges=%llu\n", (unsigned long long)t->user_ranges,
            (unsigned long long)t->nccl_ranges);
    fprintf(f, "lt_launches=%llu\ntriton_launches=%llu\n", (unsigned long long)t->lt_launches,
            (unsigned long long)t->triton_launches);
    fprintf(f, "ext_status=%d\next_result=%g\n", t->ext_status, (double)t->ext_result);
    fprintf(f, "kineto_subscribe=%d\nkineto_kernels=%llu\nkineto_thread_id_type=%d\n",
            t->kineto_subscribe, t->kineto_kernels, t->kineto_thread_id_type);
    for (int i = 0; t->step_start && i < steps; i++)
        fprintf(f, "step_start.%d=%llu\nstep_end.%d=%llu\n", i,
                (unsigned long long)t->step_start[i], i, (unsigned long long)t->step_end[i]);
    return fclose(f);
}

int main(int argc, char **argv)
{
    options o;
    if (parse(&o, argc, argv) != 0) {
        fprintf(stderr, "usage: tsc-standin-job [--steps N] [--launches K] [--gemms G] "
                        "[--burst N] [--graph K] [--graph-gemms G] [--graph-allreduce] [--checked-gemm] "
                        "[--nvtx] [--kineto-at STEP] "
                        "[--kineto-v1] [--kineto-clock] [--kernel-ns NS] [--truth FILE] "
                        "[--slow-rank R [--kernel-factor F] [--extra-launches N] "
                        "[--launch-gap-us US] [--idle-us US] [--copy-factor F]] "
                        "[--batch-bytes B] [--sync-first] [--load-us US] [--lt-launches N] "
                        "[--triton-launches N] [--init-only] [--no-nccl] [--kineto-first]\n");
        return 2;
    }
    int rank = getenv("RANK") ? atoi(getenv("RANK")) : 0;
    int world = getenv("WORLD_SIZE") ? atoi(getenv("WORLD_SIZE")) : 1;
    tally t = {0};
    t.step_start = calloc((size_t)(o.steps > 0 ? o.steps : 1), sizeof *t.step_start);
    t.step_end = calloc((size_t)(o.steps > 0 ? o.steps : 1), sizeof *t.step_end);
    if (t.step_start == NULL || t.step_end == NULL)
        return 4;
    register_kernels();
    if (o.kineto_first)
        kineto(&t, &o);
    cudaSetDevice(0);
    cudaStream_t s = NULL;
    if (o.init_only) {
        int n = 0;
        CUdevice dev;
        char name[128];
        cuDeviceGetCount(&n);
        cuDeviceGet(&dev, 0);
        cuDeviceGetName(name, sizeof name, dev);
        return n > 0 ? 0 : 7;
    }

    ncclUniqueId id;
    ncclComm_t comm = NULL;
    if (!o.no_nccl) {
        if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
            return 3;
        if (world > 1 &&
            tb_rdzv_exchange(getenv("TSC_TESTBED_RDZV"), rank, &id, sizeof id, 1, 60))
            return 3;
        if (ncclCommInitRank(&comm, world, id, rank) != ncclSuccess)
            return 3;
    }

    /* What PyTorch's caching allocator does with expandable segments: map
     * physical memory with cuMemCreate (256 MiB), released at the end. */
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemGenericAllocationHandle segment = 0;
    if (cuMemCreate(&segment, 256ull << 20, &prop, 0) != CUDA_SUCCESS)
        return 3;

    enum { N = 64 };
    size_t BATCH = o.batch_bytes ? o.batch_bytes : 1;
    /* the slow rank's link to its device: the stand-in reads this at the
     * first copy */
    char factor[32];
    snprintf(factor, sizeof factor, "%g", rank == o.slow_rank ? o.copy_factor : 1.0);
    setenv("STANDIN_COPY_FACTOR", factor, 1);
    float *A, *B, *C, *grad, *dev_batch;
    cudaMalloc((void **)&A, N * N * 4);
    cudaMalloc((void **)&B, N * N * 4);
    cudaMalloc((void **)&C, N * N * 4);
    cudaMalloc((void **)&grad, 1024 * 4);
    cudaMalloc((void **)&dev_batch, BATCH);
    for (int i = 0; i < N * N; i++)
        A[i] = B[i] = 1.0f / (float)(i % 17 + 1);
    char *host_batch = calloc(1, BATCH);
    float loss = 0;
    gemm_lib glib = {0};
    if ((o.gemms || o.checked_gemm || o.graph_gemms) && gemm_lib_open(&glib) != 0)
        return 4;

    /* A captured step: its kernels, GEMMs and all-reduce run once on the
     * host now (launching nothing) and on the device at every replay. */
    cudaGraphExec_t exec = NULL;
    int graph_nodes = o.graph_kernels + o.graph_gemms + o.graph_allreduce;
    if (graph_nodes) {
        cudaStreamCreate(&s);
        cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
        tally scratch = {0};
        for (int i = 0; i < o.graph_kernels; i++)
            launch(&scratch, i, o.kernel_ns, s);
        if (o.graph_gemms) {
            glib.set_stream(glib.h, s);
            for (int i = 0; i < o.graph_gemms; i++)
                gemm(&t, &glib, A, B, C, N);
            glib.set_stream(glib.h, NULL);
        }
        if (o.graph_allreduce &&
            ncclAllReduce(grad, grad, 1024, ncclFloat32, ncclSum, comm, s) != ncclSuccess)
            return 5;
        cudaGraph_t g;
        cudaStreamEndCapture(s, &g);
        cudaGraphInstantiate(&exec, g, 0);
    }
    if (o.checked_gemm)
        checked_gemm(&t, &glib);
    for (int i = 0; i < o.burst; i++)
        launch(&t, i, 200, NULL);
    if (o.burst) {
        cudaDeviceSynchronize();
        t.syncs++;
    }

    for (int step = 0; step < o.steps; step++) {
        if (step == o.kineto_at)
            kineto(&t, &o);
        if (o.load_us > 0)
            usleep((useconds_t)o.load_us);
        uint64_t t0 = now_ns();
        cudaMemcpyAsync(dev_batch, host_batch, BATCH, cudaMemcpyHostToDevice, NULL);
        int faulty = rank == o.slow_rank;
        int n_launch = o.launches + (faulty ? o.extra_launches : 0);
        uint64_t kns = faulty ? (uint64_t)((double)o.kernel_ns * o.kernel_factor) : o.kernel_ns;
        for (int i = 0; i < n_launch; i++) {
            if (faulty && o.launch_gap_us > 0)
                spin_us(o.launch_gap_us);
            launch(&t, i, kns, NULL);
        }
        for (int i = 0; i < o.gemms; i++)
            gemm(&t, &glib, A, B, C, N);
        for (int i = 0; i < o.lt_launches; i++)
            driver_launch(&t, 1, kns, NULL);
        for (int i = 0; i < o.triton_launches; i++)
            driver_launch(&t, 0, kns, NULL);
        if (exec) {
            cudaGraphLaunch(exec, s);
            t.graph_launches++;
            t.graph_kernels += (uint64_t)graph_nodes;
        }
        if (o.sync_first) {   /* as a loss.item() before the gradients' all-reduce */
            cudaDeviceSynchronize();
            t.syncs++;
        }
        if (faulty && o.idle_us > 0)
            usleep((useconds_t)o.idle_us);
        uint64_t a0 = now_ns();
        if (comm && ncclAllReduce(grad, grad, 1024, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess)
            return 5;
        uint64_t a1 = now_ns();
        t.nccl_calls += comm != NULL;
        cudaMemcpyAsync(&loss, grad, 4, cudaMemcpyDeviceToHost, NULL);
        t.copies += 2;
        cudaDeviceSynchronize();
        t.syncs++;
        t.step_start[step] = t0;
        t.step_end[step] = now_ns();
        kineto_step(&t, step, t0, t.step_end[step]);
        if (o.nvtx) {
            nvtx_range("NCCL", "ncclAllReduce", (uint32_t)(2 * step + 1), a0, a1);
            nvtx_range(NULL, "train_step", (uint32_t)(2 * step + 2), t0, now_ns());
            t.nccl_ranges++;
            t.user_ranges++;
        }
    }
    if (o.kineto_at >= 0 && o.kineto_at < o.steps)
        kineto_finish(&t);
    if (comm)
        ncclCommDestroy(comm);
    cuMemRelease(segment);
    if (o.truth && write_truth(o.truth, rank, &t, o.steps) != 0)
        return 6;
    return 0;
}
