/* The plugin's view of a job (nprof_summary.h). */
#include "nprof_summary.h"

#include <stdlib.h>
#include <string.h>

#include "load/nprof_reduce.h"
#include "load/rank_nprof.h"
#include "util/vec.h"

int tsa_np_any(const tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].nprof)
            return 1;
    return 0;
}

typedef struct {
    double *v;
    size_t n, cap;
} doubles;

/* One rank's lean part (load/nprof_lean.h) into the sums: its replay
 * groups appended, its collectives' kernel times to the job's. */
static int add_rank(tsa_np_summary *s, size_t *cap, const tsa_rank *r, const tsa_np_lean *l,
                    doubles *kernel_all)
{
    const struct tsa_nprof *np = r->nprof;
    s->ranks++;
    for (size_t k = 0; k < np->n_comms; k++) {
        int v = np->comms[k].version;
        if (!s->version_min || v < s->version_min)
            s->version_min = v;
        if (v > s->version_max)
            s->version_max = v;
    }
    s->proxies += l->proxies;
    s->kch += l->kch;
    s->lost += np->lost;
    s->pxn_ops += np->pxn_ops;
    s->kch_gpu |= l->kch_gpu;
    s->ce_colls += l->ce_colls;
    s->p2p += l->p2p;
    s->colls += l->colls;
    s->joined += l->joined;
    s->captured_calls += l->captured_calls;
    s->no_call += l->no_call;
    uint64_t *ns = malloc((l->n_kernel ? l->n_kernel : 1) * sizeof *ns);
    int rc = !ns || tsa_vec_reserve((void **)&kernel_all->v, &kernel_all->cap,
                                    kernel_all->n + l->n_kernel, sizeof *kernel_all->v) ||
                     tsa_np_lean_kernel_times(l, ns)
                 ? -1
                 : 0;
    for (size_t k = 0; k < l->n_kernel && !rc; k++)
        kernel_all->v[kernel_all->n++] = (double)ns[k];
    free(ns);
    if (rc || !l->n_replays)
        return rc;
    if (tsa_vec_reserve((void **)&s->replays, cap, s->n_replays + l->n_replays,
                        sizeof *s->replays) ||
        tsa_np_lean_replays(l, s->replays + s->n_replays))
        return -1;
    for (size_t k = 0; k < l->n_replays; k++)
        s->replays[s->n_replays + k].rank = r->rank;
    s->n_replays += l->n_replays;
    return 0;
}

int tsa_np_summarize(const tsa_job *job, tsa_np_summary *out)
{
    memset(out, 0, sizeof *out);
    out->kernel_ns_median = out->kernel_ns_p95 = -1;
    size_t cap = 0;
    doubles all = {0};
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++) {
        const tsa_rank *r = &job->ranks[i];
        if (!r->nprof)
            continue;
        tsa_np_lean tmp;
        const tsa_np_lean *l = tsa_rank_np_lean(r, TSA_NPL_SUMMARY, &tmp);
        rc = l ? add_rank(out, &cap, r, l, &all) : -1;
        tsa_np_lean_free(&tmp);
    }
    if (!rc) {
        out->kernel_ns_median = tsa_np_quantile(all.v, all.n, 0.5);
        out->kernel_ns_p95 = tsa_np_quantile(all.v, all.n, 0.95);
    }
    free(all.v);
    if (rc)
        tsa_np_summary_free(out);
    return rc;
}

void tsa_np_summary_free(tsa_np_summary *s)
{
    free(s->replays);
    memset(s, 0, sizeof *s);
    s->kernel_ns_median = s->kernel_ns_p95 = -1;
}
