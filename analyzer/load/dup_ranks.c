#include "dup_ranks.h"

#include <stdlib.h>
#include <string.h>

#include "job_build.h"

uint64_t tsa_rank_records(const tsa_rank *r)
{
    return (uint64_t)r->n_nccl + r->n_kernels + r->n_copies + r->n_syncs + r->n_gemms +
           r->n_apis + r->n_ranges + r->remote_records;
}

/* 1 when a is the better dump of the two for the policy. */
static int better(const tsa_rank *a, const tsa_rank *b)
{
    uint64_t ra = tsa_rank_records(a), rb = tsa_rank_records(b);
    if (ra != rb)
        return ra > rb;
    if (a->restart != b->restart)
        return a->restart > b->restart;
    return strcmp(a->file ? a->file : "", b->file ? b->file : "") < 0;
}

static int add_duplicate(tsa_job *job, int32_t rank, const char *kept, const char *dropped)
{
    tsa_duplicate *d = realloc(job->duplicates, (job->n_duplicates + 1) * sizeof *d);
    if (!d)
        return -1;
    job->duplicates = d;
    d = &d[job->n_duplicates];
    d->rank = rank;
    d->kept_file = strdup(kept ? kept : "?");
    d->dropped_file = strdup(dropped ? dropped : "?");
    if (!d->kept_file || !d->dropped_file) {
        free(d->kept_file);
        free(d->dropped_file);
        return -1;
    }
    job->n_duplicates++;
    return 0;
}

int tsa_job_drop_duplicate_ranks(tsa_job *job)
{
    size_t n = job->n_ranks;
    if (n < 2)
        return 0;
    /* drop[i]: dump i is left out.  Quadratic in the ranks, like the
     * loader's run grouping; jobs have thousands of ranks at most. */
    char *drop = calloc(n, 1);
    if (!drop)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (drop[i] || job->ranks[i].rank < 0)
            continue;
        size_t best = i;
        for (size_t j = i + 1; j < n; j++)
            if (!drop[j] && job->ranks[j].rank == job->ranks[i].rank &&
                better(&job->ranks[j], &job->ranks[best]))
                best = j;
        for (size_t j = i; j < n; j++)
            if (j != best && !drop[j] && job->ranks[j].rank == job->ranks[i].rank) {
                if (add_duplicate(job, job->ranks[j].rank, job->ranks[best].file,
                                  job->ranks[j].file)) {
                    free(drop);
                    return -1;
                }
                drop[j] = 1;
            }
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (drop[i]) {
            tsa_rank_free_contents(&job->ranks[i]);
            continue;
        }
        if (w != i)
            job->ranks[w] = job->ranks[i];
        w++;
    }
    job->n_ranks = w;
    free(drop);
    return 0;
}
