/* The host-idle finding: the budget's host idle line holds GPU idle time
 * during launch calls, synchronisations, blocking allocator calls and CPU
 * operators (idle_cause.h).  One finding names the cause that holds most
 * of it, with the fix for that cause: CUDA graphs help launch overhead, not
 * a blocking copy or a CPU-side preprocessing loop. */
#include "idle.h"
#include "passes/idle_cause.h"

typedef struct host_cause {
    tsa_idle_cause cause;
    const char *id, *what, *fix;
} host_cause;

static const host_cause causes[] = {
    {TSA_IDLE_LAUNCH, "HOST.LAUNCH_BOUND", "while the host launches work",
     "Cut launch overhead: capture the step in CUDA graphs (torch.compile "
     "mode=\"reduce-overhead\"), use fused / foreach optimizers, raise the per-GPU batch size"},
    {TSA_IDLE_FIRST_LAUNCH, "HOST.COLD_START",
     "while the host launches kernels for the first time (module loading, lazy initialisation)",
     "A one-off start-up cost, not the loop's: profile after warm-up iterations (torch.profiler "
     "schedule(wait=1, warmup=1, active=N)); where start-up time matters (serving), run one "
     "warm-up request before taking traffic or set CUDA_MODULE_LOADING=EAGER"},
    {TSA_IDLE_SYNC, "HOST.BLOCKING",
     "while the host waits in synchronisations (.item(), .cpu(), stream syncs, blocking copies)",
     "Remove the synchronisation from the loop: keep values on the GPU instead of .item()/.cpu() "
     "every step (log every N steps), copy from pinned memory with non_blocking=True, drop "
     "explicit torch.cuda.synchronize() calls"},
    {TSA_IDLE_ALLOC, "HOST.BLOCKING", "while the host waits in allocator calls (cudaFree, cudaMalloc)",
     "Let the caching allocator keep its memory: no torch.cuda.empty_cache() in the loop, "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation, fixed tensor shapes"},
    {TSA_IDLE_CPU_OP, "HOST.CPU_BOUND", "while the host runs CPU operators between launches",
     "Take CPU work off the step: preprocess in DataLoader workers, keep tensors on the GPU, "
     "compile the model (torch.compile) to cut per-operator host overhead, raise the batch so "
     "each launch carries more work"},
    {TSA_IDLE_PYTHON, "HOST.CPU_BOUND",
     "while the host runs Python with no operator running (traced python_function spans)",
     "Take Python off the step: compile the model (torch.compile) or capture it in CUDA graphs, "
     "move per-step Python work (logging, bookkeeping, building inputs) out of the loop, raise "
     "the batch so each launch carries more work"},
};

const char *tsa_host_idle_finding(const tsa_analysis *a, const char **what)
{
    const host_cause *best = &causes[0];
    for (size_t i = 1; i < sizeof causes / sizeof causes[0]; i++)
        if (a->idle_ns[causes[i].cause] > a->idle_ns[best->cause])
            best = &causes[i];
    if (what)
        *what = best->what;
    return best->id;
}

int tsa_idle_findings(const tsa_analysis *a, tsa_findings *out)
{
    const tsa_budget *b = &a->budget;
    double w = (double)b->wall_ns;
    double host = w > 0 ? (double)b->line_ns[TSA_BL_HOST_IDLE] / w : 0;
    if (host < TSA_TH_HOST_WARN)
        return 0;
    const host_cause *best = &causes[0];
    for (size_t i = 1; i < sizeof causes / sizeof causes[0]; i++)
        if (a->idle_ns[causes[i].cause] > a->idle_ns[best->cause])
            best = &causes[i];
    double part = (double)a->idle_ns[best->cause] / w;
    tsa_finding *f = tsa_findings_add(
        out, best->id, host >= TSA_TH_HOST_CRIT ? TSA_SEV_CRITICAL : TSA_SEV_WARNING,
        a->n_ranks ? (double)b->line_ns[TSA_BL_HOST_IDLE] / (double)a->n_ranks / 1e9 : 0, -1,
        best->fix, "the GPU is idle %.1f%% of wall time while the host is busy, %.1f%% %s",
        100 * host, 100 * part, best->what);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "GPU idle inside steps, with no input work recorded then (host "
                            "idle): %.1f%% of wall time, threshold %.0f%%",
                         100 * host, 100 * TSA_TH_HOST_WARN);
    tsa_finding_evidence(f, "largest part: %.1f%% %s (what the host's runtime calls, CPU "
                            "operators and Python spans over the idle time show)",
                         100 * part, best->what);
    tsa_finding_number(f, "host_idle_share", host);
    for (int c = TSA_IDLE_SYNC; c <= TSA_IDLE_PYTHON; c++)
        tsa_finding_number(f, tsa_idle_cause_key((tsa_idle_cause)c), (double)a->idle_ns[c] / w);
    return 0;
}
