#include "input_facts.h"

#include <string.h>

#include "load/rank_view.h"
#include "model/analysis.h"

int tsa_rank_launches_only(const tsa_job *job)
{
    uint64_t launches = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        if (tsa_rank_kernel_count(&job->ranks[i]))
            return 0;
        launches += job->ranks[i].launches;
    }
    return launches > 0;
}

const char *tsa_job_idle_gpu(const tsa_job *job)
{
    const char *named = NULL;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        if (tsa_rank_kernel_count(r) || r->n_copies)
            return NULL;
        if (!named && r->device_name && r->device_name[0] && (r->n_syncs || r->n_apis))
            named = r->device_name;
    }
    return named;
}

size_t tsa_rank_gpu_collectives(const tsa_rank *r)
{
    tsa_rank_view v;
    const tsa_rank *rk = tsa_view_open(r, TSA_VIEW_CALLS, &v);
    size_t n = rk ? 0 : 1;  /* out of memory: not taken for a CPU-only rank */
    for (size_t i = 0; rk && i < rk->n_nccl; i++)
        n += !(rk->nccl[i].flags & TSA_NCCL_F_CPU_BACKEND);
    tsa_view_close(&v);
    return n;
}

int tsa_hosts_unknown(const tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        const char *h = job->ranks[i].host;
        if (h && *h && strcmp(h, "unknown"))
            return 0;
    }
    return job->n_ranks > 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int tsa_job_from_traces(const tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        const char *f = job->ranks[i].file;
        if (!f || !(ends_with(f, ".json") || ends_with(f, ".json.gz")))
            return 0;
    }
    return job->n_ranks > 0;
}

int64_t tsa_startup_ns(const tsa_analysis *a)
{
    int64_t most = 0;
    for (size_t i = 0; i < a->n_ranks && i < a->job->n_ranks; i++) {
        int64_t d = a->ranks[i].window_start_ns - a->job->ranks[i].first_ns;
        if (d > most)
            most = d;
    }
    return most;
}
