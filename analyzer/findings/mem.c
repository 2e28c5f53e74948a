/* MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN from the per-rank memory numbers
 * (memory.h).  Advisory (recoverable 0): memory costs no step time until
 * it runs out; each rule gives one finding for the job, naming the worst
 * rank and how many ranks share the problem.  docs/findings.md. */
#include <math.h>
#include <stdio.h>

#include "mem.h"

static double gib(double b)
{
    return b / (double)(1ull << 30);
}

static double mib(double b)
{
    return b / (double)(1ull << 20);
}

static int leaking(const tsa_mem_rank *m)
{
    return m->steps >= TSA_MEM_GROWTH_MIN_STEPS &&
           m->growth_share >= TSA_MEM_GROWTH_STEPS_SHARE &&
           m->growth_per_step >= (int64_t)TSA_MEM_GROWTH_MIN_BYTES;
}

static int near_oom(const tsa_mem_rank *m)
{
    return m->capacity_bytes > 0 && m->peak_share > TSA_MEM_NEAR_OOM_SHARE;
}

static int churning(const tsa_mem_rank *m)
{
    return m->steps > 0 && m->churn_share >= TSA_MEM_CHURN_STEPS_SHARE &&
           m->churn_bytes_per_step > 0 &&
           (double)m->churn_bytes_per_step > TSA_MEM_CHURN_PEAK_SHARE * (double)m->peak_bytes;
}

/* The rank the finding names: the largest `key` among those `fires`. */
static const tsa_mem_rank *worst(const tsa_memory *mem, int (*fires)(const tsa_mem_rank *),
                                 double (*key)(const tsa_mem_rank *), size_t *count)
{
    const tsa_mem_rank *w = NULL;
    *count = 0;
    for (size_t i = 0; i < mem->n_ranks; i++) {
        const tsa_mem_rank *m = &mem->ranks[i];
        if (!fires(m))
            continue;
        (*count)++;
        if (!w || key(m) > key(w))
            w = m;
    }
    return w;
}

static double growth_key(const tsa_mem_rank *m) { return (double)m->growth_per_step; }
static double share_key(const tsa_mem_rank *m) { return m->peak_share; }
static double churn_key(const tsa_mem_rank *m) { return (double)m->churn_bytes_per_step; }

static int growth_finding(const tsa_memory *mem, tsa_findings *out)
{
    size_t n;
    const tsa_mem_rank *w = worst(mem, leaking, growth_key, &n);
    if (!w)
        return 0;
    /* Steps until the growth has eaten the headroom left at the peak. */
    double left = w->capacity_bytes > 0
                      ? floor((double)(w->headroom_bytes > 0 ? w->headroom_bytes : 0) /
                              (double)w->growth_per_step)
                      : NAN;
    char when[64] = "";
    if (!isnan(left))
        snprintf(when, sizeof when, ": out of memory in about %.0f steps", left);
    tsa_finding *f = tsa_findings_add(
        out, "MEM.GROWTH", isnan(left) ? TSA_SEV_INFO : TSA_SEV_WARNING, 0, w->rank,
        "Find what keeps a reference each step: losses or outputs appended to a list without "
        ".item()/.detach(), a growing cache, graphs kept alive by stored tensors; "
        "torch.cuda.memory._record_memory_history() names the allocating stack",
        "rank %d's reserved GPU memory grows %.1f MiB per step (%zu of %zu ranks)%s",
        (int)w->rank, mib((double)w->growth_per_step), n, mem->n_ranks, when);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "rank %d's reserved memory at the end of its first and last analysed "
                            "steps: %llu and %llu bytes over %zu steps", (int)w->rank,
                         (unsigned long long)w->first_step_bytes,
                         (unsigned long long)w->last_step_bytes, w->steps);
    tsa_finding_evidence(f, "step-to-step changes that grew: %.0f%% (threshold %.0f%%)",
                         100 * w->growth_share, 100 * TSA_MEM_GROWTH_STEPS_SHARE);
    if (isnan(left))
        tsa_finding_evidence(f, "the device's capacity is not recorded: no steps-to-OOM");
    else
        tsa_finding_evidence(f, "headroom at the peak: %lld bytes", (long long)w->headroom_bytes);
    tsa_finding_number(f, "growth_bytes_per_step", (double)w->growth_per_step);
    tsa_finding_number(f, "growth_share", w->growth_share);
    tsa_finding_number(f, "steps", (double)w->steps);
    tsa_finding_number(f, "ranks", (double)n);
    if (!isnan(left))
        tsa_finding_number(f, "steps_to_oom", left);
    return 0;
}

static int near_oom_finding(const tsa_memory *mem, tsa_findings *out)
{
    size_t n;
    const tsa_mem_rank *w = worst(mem, near_oom, share_key, &n);
    if (!w)
        return 0;
    tsa_severity sev = w->peak_share >= TSA_MEM_NEAR_OOM_WARN ? TSA_SEV_WARNING : TSA_SEV_INFO;
    tsa_finding *f = tsa_findings_add(
        out, "MEM.NEAR_OOM", sev, 0, w->rank,
        "Lower the peak before a longer sequence or a bigger batch tips it over: activation "
        "checkpointing, a smaller micro-batch with gradient accumulation, sharded optimizer "
        "state (ZeRO/FSDP); PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True gives back "
        "fragmented memory",
        "rank %d peaks at %.1f GiB reserved of %.1f GiB usable (%.0f%%), %.2f GiB of headroom "
        "(%zu of %zu ranks above %.0f%%)",
        (int)w->rank, gib((double)w->peak_bytes), gib((double)w->capacity_bytes),
        100.0 * w->peak_share, gib(w->headroom_bytes > 0 ? (double)w->headroom_bytes : 0.0), n,
        mem->n_ranks, 100.0 * TSA_MEM_NEAR_OOM_SHARE);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "rank %d's memory records: peak reserved %llu bytes", (int)w->rank,
                         (unsigned long long)w->peak_bytes);
    tsa_finding_evidence(f, "capacity %llu bytes (free memory at start plus what the process "
                            "held then, else the device total): %.0f%% against the threshold %.0f%%",
                         (unsigned long long)w->capacity_bytes, 100 * w->peak_share,
                         100 * TSA_MEM_NEAR_OOM_SHARE);
    tsa_finding_number(f, "peak_bytes", (double)w->peak_bytes);
    tsa_finding_number(f, "capacity_bytes", (double)w->capacity_bytes);
    tsa_finding_number(f, "headroom_bytes", (double)w->headroom_bytes);
    tsa_finding_number(f, "peak_share", w->peak_share);
    tsa_finding_number(f, "ranks", (double)n);
    return 0;
}

static int churn_finding(const tsa_memory *mem, tsa_findings *out)
{
    size_t n;
    const tsa_mem_rank *w = worst(mem, churning, churn_key, &n);
    if (!w)
        return 0;
    tsa_finding *f = tsa_findings_add(
        out, "MEM.CHURN", TSA_SEV_INFO, 0, w->rank,
        "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so the caching allocator grows "
        "segments instead of freeing and re-allocating them; avoid torch.cuda.empty_cache() "
        "inside the loop; keep tensor shapes steady across steps",
        "rank %d allocates and frees %.1f MiB of device memory per step (%.1f cudaMalloc-level "
        "allocations per step; %zu of %zu ranks)",
        (int)w->rank, mib((double)w->churn_bytes_per_step), w->allocs_per_step, n,
        mem->n_ranks);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "rank %d's device allocation records: %llu allocations, %llu frees "
                            "over the capture", (int)w->rank, (unsigned long long)w->allocs,
                         (unsigned long long)w->frees);
    tsa_finding_evidence(f, "churn %llu bytes per step (mean of min(allocated, freed)) against "
                            "%.0f%% of the %llu-byte peak, in %.0f%% of %zu analysed steps",
                         (unsigned long long)w->churn_bytes_per_step,
                         100 * TSA_MEM_CHURN_PEAK_SHARE, (unsigned long long)w->peak_bytes,
                         100 * w->churn_share, w->steps);
    tsa_finding_number(f, "churn_bytes_per_step", (double)w->churn_bytes_per_step);
    tsa_finding_number(f, "allocs_per_step", w->allocs_per_step);
    tsa_finding_number(f, "churn_share", w->churn_share);
    tsa_finding_number(f, "ranks", (double)n);
    return 0;
}

int tsa_memory_findings(const tsa_memory *m, tsa_findings *out)
{
    if (!m || m->n_ranks == 0)
        return 0;
    if (growth_finding(m, out) || near_oom_finding(m, out) || churn_finding(m, out))
        return -1;
    return 0;
}

int tsa_mem_findings(const tsa_analysis *a, tsa_findings *out)
{
    return tsa_memory_findings(&a->memory, out);
}
