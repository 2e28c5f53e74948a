/* tsc-gen-job: write a synthetic multi-rank job with known answers. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tsc-gen-job -o DIR [options]\n"
            "  --ranks N              ranks (default 4)\n"
            "  --ranks-per-host N     ranks per host name (default 8)\n"
            "  --steps N              training steps (default 10)\n"
            "  --events-per-step N    about N events per rank per step (default 64)\n"
            "  --step-ms X            nominal step time in ms (default 100)\n"
            "  --comm F               communication share of the step (default 0.3)\n"
            "  --overlap F            share of the communication hidden (default 0.5)\n"
            "  --stall F              data-stall share of the step (default 0)\n"
            "  --flops X              FLOPs per step per rank, as GEMM records (default none)\n"
            "  --buckets N            AllReduces per step (default 4, >= 2)\n"
            "  --straggler RANK:F     RANK computes (1+F) times longer\n"
            "  --clock-offset RANK:NS the clock of RANK's host runs NS ahead\n"
            "  --host-only            no GPU records (like the fake-NCCL test bed)\n"
            "  --warmup N             warm-up steps excluded from the truth (default 2)\n"
            "  --copy-share F         share of compute done as a host-to-device copy\n"
            "  --memset-share F       share of compute done as a memset\n"
            "  --pageable             the host-to-device copies come from pageable memory\n"
            "  --fp32-gemm            GEMMs compute in plain fp32 (sgemm kernels)\n"
            "  --syncs-per-step N     cudaStreamSynchronize calls per step\n"
            "  --sync-gap-us X        GPU idle after each sync, microseconds\n"
            "  --stall-every N        data stall only on every Nth step\n"
            "  --stall-no-copy        no input copy ends the stall (its only evidence: workers)\n"
            "  --workers N:CPUS       N DataLoader workers in the host telemetry, each running\n"
            "                         CPUS of a CPU during the stalls, idle otherwise\n"
            "  --device-cc X.Y        the device's compute capability in the metadata\n"
"  --mem-base MIB        MiB cudaMalloc'd at start-up (memory records)\n"
            "  --mem-leak MIB[@RANK]  MiB allocated each step and never freed (RANK only)\n"
            "  --mem-churn MIB       MiB allocated and freed again each step\n"
            "  --mem-pool MIB        stream-ordered pool of MIB, used each step\n"
            "  --mem-total MIB       device memory (cuMemGetInfo total)\n"
            "  --mem-free MIB        free memory at start (cuMemGetInfo free)\n"
            "  --nccl-plugin MODE     NCCL profiler plugin records: light (one per collective,\n"
            "                         the preload's default) or full (proxy ops, kernel channels)\n"
            "  --slow-link SRC:F      full: the link SRC -> SRC+1 is F times slower\n"
            "  --cost-light RANK:K    RANK's own-cost budget steps to light at the start of\n"
            "                         step K: no kernels from then on, the step in its dump\n"
            "  --cost-plugin RANK:K   the same to fewer NCCL plugin events: no proxy or channel\n"
            "                         records from then on (light's step first when both)\n"
            "  --device NAME          device name (default NVIDIA H100 80GB HBM3)\n"
            "  --run-id ID            run id (default gen-run)\n"
            "  --seed N               kernel duration jitter seed (default 1)\n"
            "  --truth FILE           write the expected answers as JSON ('-' = stdout)\n");
}

static void write_truth(FILE *f, const gen_truth *t)
{
    static const char *const cats[] = {"other", "gemm", "attention", "elementwise", "norm",
                                       "reduction", "optimizer", "communication", "copy"};
    fprintf(f, "{\n  \"wall_ns\": %lld,\n  \"compute_ns\": %lld,\n  \"comm_ns\": %lld,\n"
               "  \"overlapped_ns\": %lld,\n  \"exposed_ns\": %lld,\n  \"exposed_wait_ns\": %lld,\n"
               "  \"exposed_transfer_ns\": %lld,\n  \"data_stall_ns\": %lld,\n  \"flops\": %.0f,\n"
               "  \"steps_total\": %d,\n  \"steps_analysed\": %d,\n  \"events\": %llu,\n"
               "  \"bytes\": %llu,\n  \"kernel_ns\": {",
            (long long)t->wall_ns, (long long)t->compute_ns, (long long)t->comm_ns,
            (long long)t->overlapped_ns, (long long)t->exposed_ns, (long long)t->wait_ns,
            (long long)t->transfer_ns, (long long)t->stall_ns, t->flops, t->steps_total,
            t->steps_analysed, (unsigned long long)t->events, (unsigned long long)t->bytes);
    for (int c = 0; c < 9; c++)
        fprintf(f, "%s\"%s\": %lld", c ? ", " : "", cats[c], (long long)t->kcat_ns[c]);
    fprintf(f, "},\n  \"gpu_busy_ns\": %lld,\n  \"memcpy_ns\": %lld,\n  \"memset_ns\": %lld,\n"
               "  \"pageable_ns\": %lld,\n  \"fp32_gemm_ns\": %lld,\n  \"syncs\": %llu,\n"
               "  \"sync_idle_ns\": %lld,\n  \"stalled_steps_rank0\": %d,\n",
            (long long)t->gpu_busy_ns, (long long)t->memcpy_ns, (long long)t->memset_ns,
            (long long)t->pageable_ns, (long long)t->fp32_gemm_ns, (unsigned long long)t->syncs,
            (long long)t->sync_idle_ns, t->stalled_steps);
    fprintf(f, "  \"memory\": {\"peak_rank\": %d, \"peak_reserved_bytes\": %llu, \"peak_ns\": %lld, "
               "\"growth_bytes_per_step\": %lld, \"churn_bytes_per_step\": %llu, "
               "\"capacity_bytes\": %llu}\n}\n",
            t->mem_peak_rank, (unsigned long long)t->mem_peak_bytes, (long long)t->mem_peak_ns,
            (long long)t->mem_growth_per_step, (unsigned long long)t->mem_churn_per_step,
            (unsigned long long)t->mem_capacity_bytes);
}

/* MiB (fractions allowed) to bytes. */
static uint64_t mib(const char *s)
{
    double v = atof(s);
    return v > 0 ? (uint64_t)(v * 1048576.0) : 0;
}

int main(int argc, char **argv)
{
    gen_options o;
    gen_default_options(&o);
    o.dir = NULL;
    const char *truth = NULL;
    enum { O_RANKS = 1000, O_RPH, O_STEPS, O_EPS, O_STEPMS, O_COMM, O_OVERLAP, O_STALL,
           O_FLOPS, O_BUCKETS, O_STRAG, O_OFFSET, O_HOSTONLY, O_WARMUP, O_DEVICE, O_RUN,
           O_SEED, O_TRUTH, O_COPY, O_MEMSET, O_PAGEABLE, O_FP32, O_SYNCS, O_SYNCGAP,
           O_EVERY, O_MBASE, O_MLEAK, O_MCHURN, O_MPOOL, O_MTOTAL, O_MFREE, O_NPROF, O_SLOWLINK,
           O_NOCOPY, O_WORKERS, O_DEVCC, O_LIGHT, O_PLUGIN };
    static const struct option longopts[] = {
        {"ranks", required_argument, NULL, O_RANKS},
        {"ranks-per-host", required_argument, NULL, O_RPH},
        {"steps", required_argument, NULL, O_STEPS},
        {"events-per-step", required_argument, NULL, O_EPS},
        {"step-ms", required_argument, NULL, O_STEPMS},
        {"comm", required_argument, NULL, O_COMM},
        {"overlap", required_argument, NULL, O_OVERLAP},
        {"stall", required_argument, NULL, O_STALL},
        {"flops", required_argument, NULL, O_FLOPS},
        {"buckets", required_argument, NULL, O_BUCKETS},
        {"straggler", required_argument, NULL, O_STRAG},
        {"clock-offset", required_argument, NULL, O_OFFSET},
        {"host-only", no_argument, NULL, O_HOSTONLY},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"device", required_argument, NULL, O_DEVICE},
        {"run-id", required_argument, NULL, O_RUN},
        {"seed", required_argument, NULL, O_SEED},
        {"truth", required_argument, NULL, O_TRUTH},
        {"copy-share", required_argument, NULL, O_COPY},
        {"memset-share", required_argument, NULL, O_MEMSET},
        {"pageable", no_argument, NULL, O_PAGEABLE},
        {"fp32-gemm", no_argument, NULL, O_FP32},
        {"syncs-per-step", required_argument, NULL, O_SYNCS},
        {"sync-gap-us", required_argument, NULL, O_SYNCGAP},
        {"stall-every", required_argument, NULL, O_EVERY},
        {"stall-no-copy", no_argument, NULL, O_NOCOPY},
        {"workers", required_argument, NULL, O_WORKERS},
        {"device-cc", required_argument, NULL, O_DEVCC},
        {"mem-base", required_argument, NULL, O_MBASE},
        {"mem-leak", required_argument, NULL, O_MLEAK},
        {"mem-churn", required_argument, NULL, O_MCHURN},
        {"mem-pool", required_argument, NULL, O_MPOOL},
        {"mem-total", required_argument, NULL, O_MTOTAL},
        {"mem-free", required_argument, NULL, O_MFREE},
        {"nccl-plugin", required_argument, NULL, O_NPROF},
        {"slow-link", required_argument, NULL, O_SLOWLINK},
        {"cost-light", required_argument, NULL, O_LIGHT},
        {"cost-plugin", required_argument, NULL, O_PLUGIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    double v;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.dir = optarg; break;
        case O_RANKS: o.ranks = atoi(optarg); break;
        case O_RPH: o.ranks_per_host = atoi(optarg); break;
        case O_STEPS: o.steps = atoi(optarg); break;
        case O_EPS: o.events_per_step = atoi(optarg); break;
        case O_STEPMS: o.step_ms = atof(optarg); break;
        case O_COMM: o.comm = atof(optarg); break;
        case O_OVERLAP: o.overlap = atof(optarg); break;
        case O_STALL: o.stall = atof(optarg); break;
        case O_FLOPS: o.flops = atof(optarg); break;
        case O_BUCKETS: o.buckets = atoi(optarg); break;
        case O_STRAG:
            if (gen_parse_pair(optarg, &o.straggler, &o.slowdown)) {
                fprintf(stderr, "tsc-gen-job: --straggler wants RANK:SLOWDOWN\n");
                return 2;
            }
            break;
        case O_OFFSET:
            if (gen_parse_pair(optarg, &o.offset_rank, &v)) {
                fprintf(stderr, "tsc-gen-job: --clock-offset wants RANK:NS\n");
                return 2;
            }
            o.offset_ns = (int64_t)v;
            break;
        case O_HOSTONLY: o.host_only = 1; break;
        case O_WARMUP: o.warmup = atoi(optarg); break;
        case O_DEVICE: o.device = optarg; break;
        case O_RUN: o.run_id = optarg; break;
        case O_SEED: o.seed = strtoull(optarg, NULL, 10); break;
        case O_TRUTH: truth = optarg; break;
        case O_COPY: o.copy_share = atof(optarg); break;
        case O_MEMSET: o.memset_share = atof(optarg); break;
        case O_PAGEABLE: o.pageable = 1; break;
        case O_FP32: o.fp32_gemm = 1; break;
        case O_SYNCS: o.syncs_per_step = atoi(optarg); break;
        case O_SYNCGAP: o.sync_gap_ns = (int64_t)(atof(optarg) * 1e3); break;
        case O_EVERY: o.stall_every = atoi(optarg); break;
        case O_NOCOPY: o.stall_no_copy = 1; break;
        case O_WORKERS:
            if (gen_parse_pair(optarg, &o.workers, &o.worker_cpus)) {
                fprintf(stderr, "tsc-gen-job: --workers wants N:CPUS\n");
                return 2;
            }
            break;
        case O_DEVCC: o.device_cc = optarg; break;
        case O_MBASE: o.mem_base = mib(optarg); break;
        case O_MLEAK: {
            const char *at = strchr(optarg, '@');
            o.mem_leak = mib(optarg);
            o.mem_leak_rank = at ? atoi(at + 1) : -1;
            break;
        }
        case O_MCHURN: o.mem_churn = mib(optarg); break;
        case O_MPOOL: o.mem_pool = mib(optarg); break;
        case O_MTOTAL: o.mem_total = mib(optarg); break;
        case O_MFREE: o.mem_free = mib(optarg); break;
        case O_NPROF:
            o.nprof = !strcmp(optarg, "light") ? 1 : !strcmp(optarg, "full") ? 2 : -1;
            if (o.nprof < 0) {
                fprintf(stderr, "tsc-gen-job: --nccl-plugin wants light or full\n");
                return 2;
            }
            break;
        case O_SLOWLINK:
            if (gen_parse_pair(optarg, &o.nprof_slow_src, &o.nprof_slow_factor)) {
                fprintf(stderr, "tsc-gen-job: --slow-link wants SRC:FACTOR\n");
                return 2;
            }
            break;
        case O_LIGHT:
        case O_PLUGIN: {
            int *rank = c == O_LIGHT ? &o.light_rank : &o.plugin_rank;
            double k = -1;
            if (gen_parse_pair(optarg, rank, &k) || k < 0) {
                fprintf(stderr, "tsc-gen-job: --cost-light/--cost-plugin want RANK:STEP\n");
                return 2;
            }
            *(c == O_LIGHT ? &o.light_step : &o.plugin_step) = (int)k;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!o.dir || optind != argc) {
        usage(stderr);
        return 2;
    }
    gen_truth t;
    if (gen_job(&o, &t))
        return 1;
    if (truth) {
        FILE *f = strcmp(truth, "-") ? fopen(truth, "w") : stdout;
        if (!f) {
            perror(truth);
            return 1;
        }
        write_truth(f, &t);
        if (f != stdout)
            fclose(f);
    }
    return 0;
}
