/* Ground-truth job generator (see gen_job.h for the timeline). */
#include "gen_job.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dump_file.h"
#include "gen_mem.h"
#include "gen_nprof.h"
#include "tsc_format.h"

/* tsa_kcat values (analyzer/model.h), repeated so the generator stays
 * independent of the analyzer it checks. */
enum { K_OTHER, K_GEMM, K_ATTN, K_ELEM, K_NORM, K_RED, K_OPT, K_COMM, K_COPY };

static const struct {
    int cat;
    const char *name;
} kernel_kinds[] = {
    {K_GEMM, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"},
    {K_ELEM, "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"},
    {K_NORM, "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16>"},
    {K_ATTN, "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>"},
    {K_GEMM, "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn"},
    {K_RED, "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>"},
};
#define N_KINDS (sizeof kernel_kinds / sizeof kernel_kinds[0])
static const char *const optimizer_name =
    "void at::native::multi_tensor_apply_kernel<at::native::FusedAdamMathFunctor>";
static const char *const allreduce_name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
/* cuBLAS's names for plain fp32 (SIMT) GEMMs, used with fp32_gemm. */
static const char *const fp32_gemm_names[] = {"ampere_sgemm_128x64_tn",
                                              "ampere_sgemm_32x128_nn"};

void gen_default_options(gen_options *o)
{
    memset(o, 0, sizeof *o);
    o->ranks = 4;
    o->ranks_per_host = 8;
    o->steps = 10;
    o->events_per_step = 64;
    o->step_ms = 100;
    o->comm = 0.3;
    o->overlap = 0.5;
    o->stall = 0;
    o->buckets = 4;
    o->straggler = -1;
    o->offset_rank = -1;
    o->lossy_rank = -1;
    o->mem_leak_rank = -1;
    o->nprof_slow_src = -1;
    o->nprof_slow_factor = 1;
    o->light_rank = -1;
    o->light_step = -1;
    o->plugin_rank = -1;
    o->plugin_step = -1;
    o->warmup = 2;
    o->seed = 1;
    o->stall_every = 1;
    o->device = "NVIDIA H100 80GB HBM3";
    o->run_id = "gen-run";
    o->dir = "gen_job_out";
}

int gen_parse_pair(const char *s, int *rank, double *value)
{
    char *end;
    long r = strtol(s, &end, 10);
    if (end == s || *end != ':' || r < 0)
        return -1;
    char *end2;
    double v = strtod(end + 1, &end2);
    if (end2 == end + 1 || *end2)
        return -1;
    *rank = (int)r;
    *value = v;
    return 0;
}

/* --------------------------------------------------------- one stream */

#define STREAM_SLOTS 32768 /* 1 MiB chunks */

typedef struct stream {
    uint32_t tid;
    tsc_event *slots;
    size_t n;
} stream;

typedef struct writer {
    tsc_dump dump;
    stream s[4];           /* 0 main thread, 1 autograd thread, 2 CUPTI records,
                            * 3 the host sampler */
    uint32_t next_id;
    uint64_t events;
    int failed;
} writer;

static void flush(writer *w, stream *s)
{
    if (!s->n)
        return;
    if (tsc_dump_write_chunk(&w->dump, TSC_CHUNK_EVENTS, s->tid, s->slots,
                             (uint32_t)(s->n * TSC_SLOT_SIZE)))
        w->failed = 1;
    s->n = 0;
}

static void ensure(writer *w, stream *s, size_t slots)
{
    if (s->n + slots > STREAM_SLOTS)
        flush(w, s);
}

static void event(writer *w, stream *s, uint8_t kind, uint8_t flags, uint16_t aux,
                  uint32_t desc, int64_t start, int64_t end, uint64_t val)
{
    ensure(w, s, 1);
    s->n += tsc_encode_event(s->slots + s->n, STREAM_SLOTS - s->n, kind, flags, aux, desc,
                             (uint64_t)start, (uint64_t)end, val);
    w->events++;
}

static uint32_t desc(writer *w, stream *s, uint8_t type, const void *payload, uint16_t len)
{
    uint32_t id = ++w->next_id;
    ensure(w, s, tsc_desc_slots(len));
    s->n += tsc_encode_desc(s->slots + s->n, STREAM_SLOTS - s->n, type, id, payload, len);
    return id;
}

static uint32_t string_desc(writer *w, stream *s, const char *str)
{
    return desc(w, s, TSC_DESC_STRING, str, (uint16_t)strlen(str));
}

static void thread_desc(writer *w, stream *s, const char *name)
{
    uint8_t buf[64];
    tsc_desc_thread t = {.tid = s->tid, .name_len = (uint32_t)strlen(name)};
    memcpy(buf, &t, sizeof t);
    memcpy(buf + sizeof t, name, t.name_len);
    desc(w, s, TSC_DESC_THREAD, buf, (uint16_t)(sizeof t + t.name_len));
}

static void meta(writer *w, int end, const char *const *keys, const char *const *vals, size_t n)
{
    char buf[4096];
    size_t len = tsc_meta_encode(buf, sizeof buf, keys, vals, n);
    if (!len || tsc_dump_write_chunk(&w->dump, end ? TSC_CHUNK_END : TSC_CHUNK_META, 0, buf,
                                     (uint32_t)len))
        w->failed = 1;
}

/* ----------------------------------------------------------- the job */

typedef struct plan {
    int64_t step_ns, stall, comm, overlap, transfer, compute;
    int n_kernels;
    int64_t flops_per_gemm[64];
    int n_gemm;
} plan;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int kernel_kind(int i, int n)
{
    return i == n - 1 ? -1 : i % (int)N_KINDS; /* -1: the optimizer kernel */
}

static int64_t rank_compute(const gen_options *o, const plan *p, int r)
{
    if (r == o->straggler)
        return (int64_t)llround((double)p->compute * (1.0 + o->slowdown));
    return p->compute;
}

/* A rank's compute span: its compute plus the GPU idle after its syncs. */
static int64_t rank_span(const gen_options *o, const plan *p, int r)
{
    return rank_compute(o, p, r) + (int64_t)o->syncs_per_step * o->sync_gap_ns;
}

/* Kernel index after which the j-th sync of a step comes (first half). */
static int sync_after(const gen_options *o, const plan *p, int j)
{
    return (j + 1) * (p->n_kernels / 2) / (o->syncs_per_step + 1);
}

typedef struct rank_ctx {
    uint32_t d_nccl_bucket, d_nccl_last, d_nccl_bcast;
    uint32_t d_kernel[N_KINDS + 1];   /* + optimizer */
    uint32_t d_ar_kernel;
    uint32_t d_api_main, d_api_bwd, d_api_nccl;
    uint32_t d_gemm[64];
    uint32_t d_h2d, d_memset, d_sync;
    uint32_t corr;
    uint64_t gemm_counter;
    uint64_t seq;
    uint64_t bucket_bytes, last_bytes;
    gen_np_rank np;                   /* plugin records (gen_nprof.h) */
    int64_t no_kernels_from;          /* the rank's clock; 0: kernels all run */
    int64_t no_proxy_from;            /* the same for proxy and channel records */
} rank_ctx;

/* After a step to light the capture writes no kernels of launches made
 * from then on (the launches stay; kernels launched before still come). */
static int kernel_recorded(const rank_ctx *c, int64_t start)
{
    return !c->no_kernels_from || start < c->no_kernels_from;
}

static void define_descs(writer *w, rank_ctx *c, const gen_options *o, const plan *p, int r)
{
    stream *mainst = &w->s[0], *bwd = &w->s[1], *gpu = &w->s[2];
    thread_desc(w, mainst, "python");
    thread_desc(w, bwd, "pt_autograd_0");
    tsc_desc_nccl_call nc;
    memset(&nc, 0, sizeof nc);
    nc.op = TSC_NCCL_ALLREDUCE;
    nc.dtype = TSC_DT_BFLOAT16;
    nc.redop = 0;
    nc.peer = TSC_NO_PEER;
    nc.comm_id = 0x5eed0001;
    nc.comm_rank = (uint32_t)r;
    nc.comm_size = (uint32_t)o->ranks;
    nc.stream = 0x13;
    nc.count = 25u << 20;
    nc.bytes = nc.count * 2;
    c->d_nccl_bucket = desc(w, mainst, TSC_DESC_NCCL_CALL, &nc, sizeof nc);
    c->bucket_bytes = nc.bytes;
    nc.count = 3u << 20;
    nc.bytes = nc.count * 2;
    c->d_nccl_last = desc(w, mainst, TSC_DESC_NCCL_CALL, &nc, sizeof nc);
    c->last_bytes = nc.bytes;
    nc.op = TSC_NCCL_BROADCAST;
    nc.peer = 0;
    nc.redop = TSC_REDOP_NONE;
    c->d_nccl_bcast = desc(w, mainst, TSC_DESC_NCCL_CALL, &nc, sizeof nc);
    int n_fp32 = 0;
    for (size_t k = 0; k <= N_KINDS; k++) {
        tsc_desc_kernel kd;
        memset(&kd, 0, sizeof kd);
        const char *name = k < N_KINDS ? kernel_kinds[k].name : optimizer_name;
        if (o->fp32_gemm && k < N_KINDS && kernel_kinds[k].cat == K_GEMM)
            name = fp32_gemm_names[n_fp32++ % 2];
        kd.name = string_desc(w, gpu, name);
        kd.device = 0;
        kd.stream = 7;
        kd.grid[0] = 132; kd.grid[1] = kd.grid[2] = 1;
        kd.block[0] = 256; kd.block[1] = kd.block[2] = 1;
        c->d_kernel[k] = desc(w, gpu, TSC_DESC_KERNEL, &kd, sizeof kd);
    }
    tsc_desc_kernel ar;
    memset(&ar, 0, sizeof ar);
    ar.name = string_desc(w, gpu, allreduce_name);
    ar.stream = 13;
    ar.grid[0] = 32; ar.grid[1] = ar.grid[2] = 1;
    ar.block[0] = 512; ar.block[1] = ar.block[2] = 1;
    c->d_ar_kernel = desc(w, gpu, TSC_DESC_KERNEL, &ar, sizeof ar);
    tsc_desc_api api = {.domain = TSC_API_RUNTIME, .cbid = 505, .tid = mainst->tid};
    api.name = string_desc(w, mainst, "__cudaLaunchKernel");
    c->d_api_main = desc(w, mainst, TSC_DESC_API, &api, sizeof api);
    api.tid = bwd->tid;
    api.name = string_desc(w, bwd, "__cudaLaunchKernel");
    c->d_api_bwd = desc(w, bwd, TSC_DESC_API, &api, sizeof api);
    api.domain = TSC_API_DRIVER;
    api.cbid = 652;
    api.tid = mainst->tid;
    api.name = string_desc(w, mainst, "cuLaunchKernelEx");
    c->d_api_nccl = desc(w, mainst, TSC_DESC_API, &api, sizeof api);
    for (int g = 0; g < p->n_gemm; g++) {
        /* Both launch threads may issue GEMMs: define each GEMM shape on
         * the thread that uses it (j-th kernel's thread, see emit_step). */
        tsc_desc_gemm gd;
        memset(&gd, 0, sizeof gd);
        gd.m = (uint64_t)p->flops_per_gemm[g] / 2;
        gd.n = 1;
        gd.k = 1;
        gd.batch = 1;
        gd.api = TSC_GEMM_LT_MATMUL;
        gd.a_type = o->fp32_gemm ? 0 : 14; /* CUDA_R_32F or CUDA_R_16BF */
        gd.c_type = gd.a_type;
        gd.compute_type = 68; /* CUBLAS_COMPUTE_32F */
        gd.flops = (uint64_t)p->flops_per_gemm[g];
        c->d_gemm[g] = 0;
        c->d_gemm[g] = desc(w, g < (p->n_gemm + 1) / 2 ? mainst : bwd, TSC_DESC_GEMM, &gd,
                            sizeof gd);
    }
    /* CUpti_ActivityMemoryKind: 1 pageable, 2 pinned, 3 device. */
    tsc_desc_copy cd = {.dir = TSC_COPY_H2D, .pinned = (uint8_t)!o->pageable,
                        .src_kind = o->pageable ? 1 : 2, .dst_kind = 3, .stream = 7,
                        .bytes = 64u << 20};
    c->d_h2d = desc(w, gpu, TSC_DESC_COPY, &cd, sizeof cd);
    tsc_desc_copy md = {.dir = TSC_COPY_MEMSET, .dst_kind = 3, .stream = 7, .bytes = 16u << 20};
    c->d_memset = desc(w, gpu, TSC_DESC_COPY, &md, sizeof md);
    tsc_desc_sync sd = {.type = TSC_SYNC_STREAM, .stream = 7, .tid = mainst->tid};
    c->d_sync = desc(w, gpu, TSC_DESC_SYNC, &sd, sizeof sd);
}

/* Ranks of one host share its clock: the offset applies to the whole host
 * of offset_rank. */
static int64_t off(const gen_options *o, int r)
{
    if (o->offset_rank < 0)
        return 0;
    return r / o->ranks_per_host == o->offset_rank / o->ranks_per_host ? o->offset_ns : 0;
}

/* CPU time a worker running `cpus` during the stalls [gaps_at[i],
 * + stall) has used by time t. */
static uint64_t worker_cpu_by(const gen_options *o, int64_t stall, const int64_t *gaps_at,
                              size_t n_gaps, int64_t t)
{
    double ns = 0;
    for (size_t i = 0; i < n_gaps && gaps_at[i] < t; i++) {
        int64_t end = gaps_at[i] + stall < t ? gaps_at[i] + stall : t;
        ns += (double)(end - gaps_at[i]) * o->worker_cpus;
    }
    return (uint64_t)llround(ns);
}

/* The host sampler's records of the DataLoader workers from `from` to
 * `to` (common clock), every 10 ms as the preload's sampler writes them:
 * the process's CPU at every tick, a worker's only when it changed. */
static void emit_workers(writer *w, const gen_options *o, int r, int64_t from, int64_t to,
                         const int64_t *gaps_at, size_t n_gaps)
{
    stream *s = &w->s[3];
    const int64_t tick = 10000000, o_ = off(o, r);
    int64_t stall = (int64_t)llround(o->stall * o->step_ms * 1e6);
    thread_desc(w, s, "tscope-telemetry");
    const char *mk[] = {TSC_META_WORKERS_VISIBLE, TSC_META_TELEMETRY_MS};
    const char *mv[] = {"1", "10"};
    meta(w, 0, mk, mv, 2);
    uint32_t task[64];
    int n = o->workers < 64 ? o->workers : 64;
    for (int k = 0; k < n; k++) {
        uint8_t buf[sizeof(tsc_desc_task) + 16];
        tsc_desc_task d = {.tid = (uint32_t)(30000 + r * 100 + k), .role = TSC_TASK_WORKER,
                           .name_len = 14};
        memcpy(buf, &d, sizeof d);
        memcpy(buf + sizeof d, "pt_data_worker", 14);
        task[k] = desc(w, s, TSC_DESC_TASK, buf, (uint16_t)(sizeof d + 14));
    }
    uint64_t last = UINT64_MAX;
    for (int64_t t = from - tick; t <= to + tick; t += tick) {
        /* the main process: one CPU busy */
        event(w, s, TSC_EV_PROC_CPU, 0, 1, 8, t + o_, t + o_, (uint64_t)(t - from + tick));
        uint64_t cpu = worker_cpu_by(o, stall, gaps_at, n_gaps, t);
        for (int k = 0; k < n && cpu != last; k++)
            event(w, s, TSC_EV_TASK_CPU, 0, 'R', task[k], t + o_, t + o_, cpu);
        last = cpu;
    }
}

/* One compute kernel with its launch (and GEMM call when it is a GEMM). */
static void emit_kernel(writer *w, rank_ctx *c, const gen_options *o, const plan *p, int r,
                        int i, int *gemm_idx, int64_t ks, int64_t ke)
{
    int backward = i >= p->n_kernels / 2;
    stream *host = backward ? &w->s[1] : &w->s[0];
    int kind = kernel_kind(i, p->n_kernels);
    uint32_t kd = kind < 0 ? c->d_kernel[N_KINDS] : c->d_kernel[kind];
    uint32_t corr = ++c->corr;
    int64_t o_ = off(o, r);
    event(w, host, TSC_EV_API, 0, 0, backward ? c->d_api_bwd : c->d_api_main,
          ks - 2000 + o_, ks - 1000 + o_, corr);
    if (kind >= 0 && kernel_kinds[kind].cat == K_GEMM && *gemm_idx < p->n_gemm) {
        int g = (*gemm_idx)++;
        uint32_t gd = c->d_gemm[g];
        /* The GEMM's descriptor lives on the thread that defined it. */
        stream *gs = g < (p->n_gemm + 1) / 2 ? &w->s[0] : &w->s[1];
        uint64_t cnt = ++c->gemm_counter;
        event(w, gs, TSC_EV_GEMM, 0, 0, gd, ks - 2500 + o_, ks - 900 + o_, cnt);
        event(w, &w->s[2], TSC_EV_EXTCORR, 4, 0, corr, 0, 0, TSC_EXTCORR_ID(gd, cnt));
    }
    if (kernel_recorded(c, ks - 2000 + o_))
        event(w, &w->s[2], TSC_EV_KERNEL, 0, 0, kd, ks + o_, ke + o_, corr);
}

/* The plugin's records of the collective called at [cs, ce) whose kernel
 * ran [ks, ke) (the rank's clock), on the calling thread. */
static void emit_nprof(writer *w, rank_ctx *c, const gen_options *o, uint32_t nd, int64_t cs,
                       int64_t ce, int64_t ks, int64_t ke)
{
    if (!o->nprof)
        return;
    gen_np_rec rec[GEN_NP_MAX_RECS];
    uint8_t op = nd == c->d_nccl_bcast ? TSC_NCCL_BROADCAST : TSC_NCCL_ALLREDUCE;
    uint64_t bytes = nd == c->d_nccl_bucket ? c->bucket_bytes : c->last_bytes;
    size_t n = gen_np_coll(o, &c->np, op, bytes, cs, ce, ks, ke, rec);
    for (size_t i = 0; i < n; i++)
        if (rec[i].kind == TSC_EV_NP_COLL || !c->no_proxy_from || cs < c->no_proxy_from)
            event(w, &w->s[0], rec[i].kind, rec[i].flags, rec[i].aux, rec[i].desc, rec[i].start,
              rec[i].end, rec[i].val);
}

static void emit_allreduce(writer *w, rank_ctx *c, const gen_options *o, int r, uint32_t nd,
                           int64_t ks, int64_t ke)
{
    int64_t o_ = off(o, r);
    uint64_t seq = c->seq++;
    if (o->host_only) {
        event(w, &w->s[0], TSC_EV_NCCL, 0, 0, nd, ks + o_, ke + o_, seq);
        emit_nprof(w, c, o, nd, ks + o_, ke + o_, ks + o_, ke + o_);
        return;
    }
    uint32_t corr = ++c->corr;
    event(w, &w->s[0], TSC_EV_NCCL, 0, 0, nd, ks - 3000 + o_, ks - 1000 + o_, seq);
    emit_nprof(w, c, o, nd, ks - 3000 + o_, ks - 1000 + o_, ks + o_, ke + o_);
    event(w, &w->s[0], TSC_EV_API, 0, 0, c->d_api_nccl, ks - 2500 + o_, ks - 1500 + o_, corr);
    event(w, &w->s[2], TSC_EV_EXTCORR, 4, 0, corr, 0, 0, TSC_EXTCORR_ID(nd, seq));
    if (kernel_recorded(c, ks - 2500 + o_))
        event(w, &w->s[2], TSC_EV_KERNEL, 0, 0, c->d_ar_kernel, ks + o_, ke + o_, corr);
}

/* Memory records on the CUPTI stream (gen_mem.h), one descriptor per source. */
static void emit_mem(writer *w, uint32_t mem_desc[5], int r, int64_t o_, const gen_mem_op *ops,
                     size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t src = ops[i].source;
        if (!mem_desc[src]) {
            tsc_desc_mem d = {.source = src, .mem_kind = 3, .device = (uint32_t)(r % 8),
                              .pool = src == TSC_MEM_SRC_MALLOC ? 0 : GEN_MEM_POOL_ADDR,
                              .pool_type = src == TSC_MEM_SRC_MALLOC ? 0 : 1};
            mem_desc[src] = desc(w, &w->s[2], TSC_DESC_MEM, &d, sizeof d);
        }
        event(w, &w->s[2], ops[i].kind, ops[i].pool_op, 0, mem_desc[src], ops[i].t_ns + o_,
              ops[i].t_ns + o_, ops[i].bytes);
    }
}

/* cuMemGetInfo at start, as the CUPTI capture writes it. */
static void mem_info_meta(writer *w, const gen_options *o, int64_t t0)
{
    char total[32], free_s[32], when[32];
    snprintf(total, sizeof total, "%llu", (unsigned long long)o->mem_total);
    snprintf(free_s, sizeof free_s, "%llu", (unsigned long long)o->mem_free);
    snprintf(when, sizeof when, "%lld", (long long)(t0 + 100000000));
    const char *k[3], *v[3];
    size_t n = 0;
    if (o->mem_total) {
        k[n] = TSC_META_MEM_INFO_TOTAL;
        v[n++] = total;
    }
    if (o->mem_free) {
        k[n] = TSC_META_MEM_INFO_FREE;
        v[n++] = free_s;
        k[n] = TSC_META_MEM_INFO_TIME;
        v[n++] = when;
    }
    if (n)
        meta(w, 0, k, v, n);
}

/* What the preload records when the budget steps down to light (at
 * `light`) or to fewer plugin events (at `plugin`), 0: not taken: its own
 * cost's keys, with made-up parts; the analyzer reads the steps. */
static void step_meta(writer *w, int64_t light, int64_t plugin, int64_t wall)
{
    char wall_s[32], level_s[16], step_s[2][96];
    const char *k[8] = {TSC_META_COST_WALL, TSC_META_COST_WRITER, TSC_META_COST_TELEMETRY,
                        TSC_META_COST_BUDGET, TSC_META_COST_LEVEL, TSC_META_COST_STEPS};
    const char *v[8] = {wall_s, "1000000", "0", "0.01", level_s, level_s};
    size_t n = 6;
    int level = 0;
    static const char *const key[] = {TSC_META_COST_STEP_PREFIX "1", TSC_META_COST_STEP_PREFIX "2"};
    const int64_t at[] = {light, plugin};
    const char *const what[] = {TSC_COST_WHAT_LIGHT, TSC_COST_WHAT_NPROF};
    for (int i = 0; i < 2; i++) {
        if (!at[i])
            continue;
        snprintf(step_s[level], sizeof step_s[level], "%lld %d %d 150 %s", (long long)at[i],
                 level, level + 1, what[i]);
        k[n] = key[level];
        v[n++] = step_s[level];
        level++;
    }
    snprintf(wall_s, sizeof wall_s, "%lld", (long long)wall);
    snprintf(level_s, sizeof level_s, "%d", level);
    meta(w, 1, k, v, n);
}

static int write_rank(const gen_options *o, const plan *p, int r, int64_t t0, gen_truth *t)
{
    char path[4096], host[64], rank_s[16], local_s[16], world_s[16], pid_s[16], start_s[32];
    snprintf(host, sizeof host, "node%d", r / o->ranks_per_host);
    /* The run id is in the name so that several runs can share a directory. */
    char run[64];
    snprintf(run, sizeof run, "%s", o->run_id);
    for (char *q = run; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            *q = '-';
    snprintf(path, sizeof path, "%s/tscope_r%d_%s_%d_%s.tsd", o->dir, r, host, 10000 + r, run);
    writer w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < 4; i++) {
        w.s[i].tid = (uint32_t)(20000 + r * 10 + i);
        w.s[i].slots = malloc(STREAM_SLOTS * sizeof(tsc_event));
        if (!w.s[i].slots)
            return -1;
    }
    int rc = tsc_dump_open_path(&w.dump, path, (uint32_t)(10000 + r), (uint64_t)t0);
    if (rc) {
        fprintf(stderr, "tsc-gen-job: %s: %s\n", path, strerror(-rc));
        for (int i = 0; i < 4; i++)
            free(w.s[i].slots);
        return -1;
    }
    snprintf(rank_s, sizeof rank_s, "%d", r);
    snprintf(local_s, sizeof local_s, "%d", r % o->ranks_per_host);
    snprintf(world_s, sizeof world_s, "%d", o->ranks);
    snprintf(pid_s, sizeof pid_s, "%d", 10000 + r);
    snprintf(start_s, sizeof start_s, "%lld", (long long)t0);
    const char *keys[] = {TSC_META_RUN_ID, TSC_META_HOST, TSC_META_RANK, TSC_META_LOCAL_RANK,
                          TSC_META_WORLD_SIZE, TSC_META_PID, TSC_META_START_REALTIME,
                          TSC_META_CMDLINE, TSC_META_DEVICE_NAME, TSC_META_CUPTI_MODE};
    const char *vals[] = {o->run_id, host, rank_s, local_s, world_s, pid_s, start_s,
                          "python train.py (tsc-gen-job)", o->device,
                          o->host_only ? "off" : "full"};
    if (o->device_cc && !o->host_only) {
        /* the capture's order: device.N.name, device_name when N is the
         * primary, ..., device.N.compute_capability (cupti/device_meta.c) */
        const char *dk[] = {"device.0.name"};
        meta(&w, 0, dk, &o->device, 1);
    }
    meta(&w, 0, keys, vals, o->host_only ? 8 : 10);
    if (o->device_cc && !o->host_only) {
        const char *ck[] = {"device.0.compute_capability"};
        meta(&w, 0, ck, &o->device_cc, 1);
    }
    if (r == o->lossy_rank) {
        /* What the writer records after a failed write (full disk). */
        char lost[32];
        snprintf(lost, sizeof lost, "%llu", (unsigned long long)o->lost_write_bytes);
        const char *lk[] = {TSC_META_DROPPED_WRITE};
        const char *lv[] = {lost};
        meta(&w, 0, lk, lv, 1);
    }

    if (o->nprof) {
        const char *nk[] = {TSC_META_NP};
        const char *nv[] = {gen_np_meta(o)};
        meta(&w, 0, nk, nv, 1);
    }

    rank_ctx c;
    memset(&c, 0, sizeof c);
    define_descs(&w, &c, o, p, r);
    if (o->nprof) {
        gen_np_rec cm = gen_np_comm(r, t0 + 300000000 + off(o, r), &c.np);
        event(&w, &w.s[0], cm.kind, cm.flags, cm.aux, cm.desc, cm.start, cm.end, cm.val);
    }
    uint32_t mem_desc[5] = {0};
    gen_mem_op mops[GEN_MEM_MAX_OPS];
    if (gen_mem_enabled(o)) {
        mem_info_meta(&w, o, t0);
        emit_mem(&w, mem_desc, r, off(o, r), mops, gen_mem_startup(o, t0, mops));
    }
    uint64_t rng = o->seed * 0x9E3779B97F4A7C15ull + (uint64_t)r + 1;

    /* Start-up: parameter broadcast (not part of the step pattern). */
    emit_allreduce(&w, &c, o, r, c.d_nccl_bcast, t0 + 400000000, t0 + 401000000);

    int64_t cmax = 0;
    for (int q = 0; q < o->ranks; q++)
        if (rank_span(o, p, q) > cmax)
            cmax = rank_span(o, p, q);
    int64_t cr = rank_compute(o, p, r);
    int64_t cp = o->host_only ? 0 : (int64_t)llround(o->copy_share * (double)cr);
    /* A data stall ends when the step's input batch is copied to the
     * device: that host-to-device copy is the evidence of input work the
     * analyzer needs to call the wait a data stall (issue 38). */
    if (!o->host_only && o->stall > 0 && cp < 1000 && !o->stall_no_copy)
        cp = 1000;
    int64_t ms = o->host_only ? 0 : (int64_t)llround(o->memset_share * (double)cr);
    int64_t kr = cr - cp - ms; /* kernel time */
    int64_t gaps = (int64_t)o->syncs_per_step * o->sync_gap_ns;
    int64_t S = t0 + 1000000000;
    int64_t *dur = malloc((size_t)p->n_kernels * sizeof *dur);
    int64_t *gaps_at = malloc((size_t)o->steps * sizeof *gaps_at); /* stall starts */
    size_t n_gaps = 0;
    if (!dur || !gaps_at) {
        free(dur);
        free(gaps_at);
        return -1;
    }
    for (int k = 0; k < o->steps; k++) {
        if (r == o->light_rank && k == o->light_step)
            c.no_kernels_from = S + off(o, r);
        if (r == o->plugin_rank && k == o->plugin_step)
            c.no_proxy_from = S + off(o, r);
        int in = k >= o->warmup;
        int64_t stall = o->stall_every > 1 && k % o->stall_every ? 0 : p->stall;
        int64_t begin = S + stall;
        int64_t ce = begin + cr + gaps;
        int64_t L = S + stall + cmax;
        if (stall > 0)
            gaps_at[n_gaps++] = S;
        /* Kernel durations: jittered in +j/-j pairs (so every one stays
         * positive), the last one taking the remainder: exactly kr. */
        int64_t base = kr / p->n_kernels, used = 0, j = 0;
        for (int i = 0; i < p->n_kernels; i++) {
            if (i % 2 == 0)
                j = base / 5 > 0 ? (int64_t)(rng_next(&rng) % (uint64_t)(base / 5)) : 0;
            dur[i] = i % 2 ? base - j : base + j;
            if (i == p->n_kernels - 1)
                dur[i] = kr - used;
            used += dur[i];
        }
        int64_t ks = begin;
        int gemm_idx = 0;
        emit_mem(&w, mem_desc, r, off(o, r), mops, gen_mem_step(o, r, begin, ce, mops));
        if (r == t->mem_peak_rank) {
            t->mem_first_begin = k == 0 ? begin : t->mem_first_begin;
            t->mem_last_begin = begin;
        }
        if (o->host_only) {
            /* No GPU records: compute shows only as time between calls. */
            ks = ce;
        } else {
            int64_t o_ = off(o, r);
            if (cp > 0)
                event(&w, &w.s[2], TSC_EV_MEMCPY, 0, 0, c.d_h2d, ks + o_, ks + cp + o_, ++c.corr);
            if (ms > 0)
                event(&w, &w.s[2], TSC_EV_MEMSET, 0, 0, c.d_memset, ks + cp + o_,
                      ks + cp + ms + o_, ++c.corr);
            ks += cp + ms;
            int next_sync = 0;
            for (int i = 0; i < p->n_kernels; i++) {
                emit_kernel(&w, &c, o, p, r, i, &gemm_idx, ks, ks + dur[i]);
                int kind = kernel_kind(i, p->n_kernels);
                if (in) {
                    t->kcat_ns[kind < 0 ? K_OPT : kernel_kinds[kind].cat] += dur[i];
                    if (o->fp32_gemm && kind >= 0 && kernel_kinds[kind].cat == K_GEMM)
                        t->fp32_gemm_ns += dur[i];
                }
                ks += dur[i];
                if (next_sync < o->syncs_per_step && i == sync_after(o, p, next_sync)) {
                    /* .item(): the host blocks until this kernel ends; the
                     * next launch comes sync_gap_ns later. */
                    event(&w, &w.s[2], TSC_EV_SYNC, 0, 0, c.d_sync, ks - dur[i] / 2 + o_,
                          ks + o_, ++c.corr);
                    ks += o->sync_gap_ns;
                    next_sync++;
                    if (in) {
                        t->syncs++;
                        t->sync_idle_ns += o->sync_gap_ns;
                    }
                }
            }
        }
        int64_t last_end = L + p->transfer;
        if (o->host_only) {
            /* Blocking calls back to back after compute; the first waits. */
            int64_t x0 = ce;
            for (int b = 0; b < o->buckets; b++) {
                int64_t share = p->transfer / o->buckets;
                int64_t e = b == o->buckets - 1 ? last_end : (b == 0 ? L : x0) + share;
                emit_allreduce(&w, &c, o, r, b == o->buckets - 1 ? c.d_nccl_last : c.d_nccl_bucket,
                               x0, e);
                x0 = e;
            }
        } else {
            int nb = o->buckets - 1;
            for (int b = 0; b < nb; b++) {
                /* Arrive on own time, finish together once the last rank
                 * has arrived (a collective cannot end earlier). */
                int64_t bs = ce - p->overlap + p->overlap * b / nb;
                int64_t be = L - p->overlap + p->overlap * (b + 1) / nb;
                if (be > bs)
                    emit_allreduce(&w, &c, o, r, c.d_nccl_bucket, bs, be);
            }
            emit_allreduce(&w, &c, o, r, c.d_nccl_last, ce, last_end);
        }
        if (in) {
            int64_t wait = L - ce;
            t->wall_ns += last_end - S;
            t->wait_ns += wait;
            t->transfer_ns += p->transfer;
            if (o->host_only) {
                t->compute_ns += p->stall + cr;
                t->comm_ns += wait + p->transfer;
                t->exposed_ns += wait + p->transfer;
            } else {
                t->compute_ns += kr;
                t->memcpy_ns += cp;
                t->memset_ns += ms;
                t->pageable_ns += o->pageable ? cp : 0;
                t->gpu_busy_ns += last_end - begin - gaps;
                t->stalled_steps += r == 0 && stall > 0;
                t->comm_ns += p->overlap + wait + p->transfer;
                t->overlapped_ns += p->overlap;
                t->exposed_ns += wait + p->transfer;
                t->stall_ns += p->stall;
                /* Each of the nb buckets also runs `wait` longer. */
                t->kcat_ns[K_COMM] += p->overlap + wait + p->transfer + (int64_t)(o->buckets - 1) * wait;
                for (int g = 0; g < p->n_gemm; g++)
                    t->flops += (double)p->flops_per_gemm[g];
            }
        }
        S = last_end;
    }
    free(dur);
    if (o->workers > 0)
        emit_workers(&w, o, r, t0 + 1000000000, S, gaps_at, n_gaps);
    free(gaps_at);
    for (int i = 0; i < 4; i++)
        flush(&w, &w.s[i]);
    char ev[32];
    snprintf(ev, sizeof ev, "%llu", (unsigned long long)w.events);
    const char *ek[] = {TSC_META_END_REASON, TSC_META_EVENTS, TSC_META_DROPPED};
    const char *evv[] = {"exit", ev, "0"};
    meta(&w, 1, ek, evv, 3);
    if (c.no_kernels_from || c.no_proxy_from)
        step_meta(&w, c.no_kernels_from, c.no_proxy_from, S + off(o, r) - t0);
    t->events += w.events;
    t->bytes += w.dump.bytes_written;
    int failed = w.failed || w.dump.bytes_lost;
    tsc_dump_close(&w.dump);
    for (int i = 0; i < 4; i++)
        free(w.s[i].slots);
    if (failed)
        fprintf(stderr, "tsc-gen-job: write error on %s\n", path);
    return failed ? -1 : 0;
}

int gen_job(const gen_options *o, gen_truth *t)
{
    memset(t, 0, sizeof *t);
    if (o->ranks < 1 || o->ranks > GEN_MAX_RANKS || o->steps < 1 || o->buckets < 2 ||
        o->ranks_per_host < 1 || o->step_ms <= 0 || o->comm < 0 || o->comm >= 1 ||
        o->overlap < 0 || o->overlap > 1 || o->stall < 0 || o->stall + o->comm >= 1 ||
        o->slowdown < 0 || o->warmup < 0 || !o->dir || o->copy_share < 0 ||
        o->memset_share < 0 || o->copy_share + o->memset_share >= 0.5 ||
        o->syncs_per_step < 0 || o->sync_gap_ns < 0 || o->stall_every < 1 || o->nprof < 0 ||
        o->nprof > 2 || o->nprof_slow_factor <= 0 || o->workers < 0 || o->workers > 64 ||
        o->worker_cpus < 0) {
        fprintf(stderr, "tsc-gen-job: option out of range\n");
        return -1;
    }
    if (mkdir(o->dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "tsc-gen-job: %s: %s\n", o->dir, strerror(errno));
        return -1;
    }
    plan p;
    memset(&p, 0, sizeof p);
    p.step_ns = (int64_t)llround(o->step_ms * 1e6);
    p.stall = (int64_t)llround(o->stall * (double)p.step_ns);
    p.comm = (int64_t)llround(o->comm * (double)p.step_ns);
    p.overlap = o->host_only ? 0 : (int64_t)llround(o->overlap * (double)p.comm);
    p.transfer = p.comm - p.overlap;
    p.compute = p.step_ns - p.stall - p.transfer;
    if (p.overlap > p.compute)
        p.overlap = p.compute;
    int per_kernel = 3;
    int fixed = 4 * o->buckets;
    p.n_kernels = (o->events_per_step - fixed) / per_kernel;
    if (p.n_kernels < (int)N_KINDS + 1)
        p.n_kernels = (int)N_KINDS + 1;
    /* Syncs sit between distinct kernels of the first half, before the
     * overlapped tail, so that the GPU really idles after each. */
    if (o->syncs_per_step >= p.n_kernels / 2 ||
        (o->syncs_per_step && p.overlap > p.compute / 2)) {
        fprintf(stderr, "tsc-gen-job: too many syncs for the kernels of a step\n");
        return -1;
    }
    /* GEMM kernels per step carry the FLOPs (at most 64 shapes). */
    int gemms = 0;
    for (int i = 0; i < p.n_kernels; i++) {
        int kind = kernel_kind(i, p.n_kernels);
        gemms += kind >= 0 && kernel_kinds[kind].cat == K_GEMM;
    }
    if (o->flops > 0 && !o->host_only) {
        p.n_gemm = gemms < 64 ? gemms : 64;
        int64_t total = (int64_t)llround(o->flops) & ~1ll; /* even: 2*m*n*k */
        int64_t each = (total / p.n_gemm) & ~1ll;
        for (int g = 0; g < p.n_gemm; g++)
            p.flops_per_gemm[g] = each;
        p.flops_per_gemm[0] += total - each * p.n_gemm;
    }
    int64_t t0 = 1763700000000000000ll;
    t->mem_peak_rank = o->mem_leak > 0 && o->mem_leak_rank >= 0 ? o->mem_leak_rank : 0;
    for (int r = 0; r < o->ranks; r++)
        if (write_rank(o, &p, r, t0, t))
            return -1;
    gen_mem_truth(o, t0, t->mem_first_begin, t->mem_last_begin, t);
    t->steps_total = o->steps;
    t->steps_analysed = o->steps > o->warmup ? o->steps - o->warmup : 0;
    return 0;
}
