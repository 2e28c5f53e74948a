/* The what-if pass in order (build -> topology -> ideal -> blame ->
 * finding), and what the rest of the report asks of its result. */
#include <stdlib.h>
#include <string.h>

#include "crossrank/crossrank.h"
#include "load/rank_view.h"
#include "tsc_format.h"
#include "wi_internal.h"


static int pipe_run(const tsa_job *job, tsa_pipe_result *out, tsa_findings *findings);

int tsa_pipe_possible(const tsa_job *job)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        size_t n;
        const tsa_nccl_op *shape = tsa_rank_call_shapes(&job->ranks[i], &n);
        for (size_t k = 0; k < n; k++)
            if (shape[k].op == TSC_NCCL_SEND || shape[k].op == TSC_NCCL_RECV)
                return 1;
    }
    return 0;
}

/* The what-if replays every rank's calls at once: a job of lean ranks
 * (tscope-report-mpi's process 0 keeps their calls compact) is seen with
 * all of them decoded, as that process held them before.  *views (n) to
 * close; NULL on OOM. */
static const tsa_job *decoded(const tsa_job *job, tsa_job *copy, tsa_rank_view **views)
{
    *views = NULL;
    int lean = 0;
    for (size_t i = 0; i < job->n_ranks; i++)
        lean |= job->ranks[i].lean_calls || job->ranks[i].lean_steps;
    if (!lean)
        return job;
    *copy = *job;
    copy->ranks = malloc(job->n_ranks * sizeof *copy->ranks);
    *views = calloc(job->n_ranks, sizeof **views);
    if (!copy->ranks || !*views)
        return NULL;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = tsa_view_open(&job->ranks[i], TSA_VIEW_CALLS | TSA_VIEW_STEPS,
                                          &(*views)[i]);
        if (!r)
            return NULL;
        copy->ranks[i] = *r;
    }
    return copy;
}

static void decoded_free(const tsa_job *job, tsa_job *copy, tsa_rank_view *views)
{
    for (size_t i = 0; views && i < job->n_ranks; i++)
        tsa_view_close(&views[i]);
    free(views);
    free(copy->ranks);  /* NULL when the job was used as it is */
}

int tsa_pipe_run(const tsa_job *lean, tsa_pipe_result *out, tsa_findings *findings)
{
    memset(out, 0, sizeof *out);
    out->culprit = -1;
    if (!lean || lean->n_ranks < 2 || !tsa_pipe_possible(lean))
        return 0;
    tsa_job copy = {0};
    tsa_rank_view *views;
    const tsa_job *job = decoded(lean, &copy, &views);
    int rc = job ? pipe_run(job, out, findings) : -1;
    decoded_free(lean, &copy, views);
    return rc;
}

static int pipe_run(const tsa_job *job, tsa_pipe_result *out, tsa_findings *findings)
{
    wi_build b;
    int rc = wi_build_graph(job, &b);
    if (rc) {
        wi_build_free(&b);
        return rc < 0 ? -1 : 0;
    }
    size_t n = job->n_ranks;
    out->n_ranks = n;
    out->stage_of = calloc(n, sizeof *out->stage_of);
    out->dp_of = calloc(n, sizeof *out->dp_of);
    out->global_rank = calloc(n, sizeof *out->global_rank);
    if (!out->stage_of || !out->dp_of || !out->global_rank)
        goto fail;
    for (size_t i = 0; i < n; i++)
        out->global_rank[i] = job->ranks[i].rank;
    if (!wi_topology(&b, out->stage_of, out->dp_of, &out->n_stages, &out->n_dp)) {
        wi_build_free(&b);
        tsa_pipe_free(out);
        return 0;
    }
    out->pipeline = 1;
    out->nodes = b.g.n_nodes;
    out->hubs = b.g.n_hubs;
    out->cut_links = b.g.cut_links;
    out->saved_worker_ns = calloc(n, sizeof *out->saved_worker_ns);
    out->saved_stage_ns = calloc(out->n_stages, sizeof *out->saved_stage_ns);
    out->saved_dp_ns = calloc(out->n_dp, sizeof *out->saved_dp_ns);
    out->step_number = malloc(b.g.n_steps * sizeof *out->step_number + 1);
    if (!out->saved_worker_ns || !out->saved_stage_ns || !out->saved_dp_ns || !out->step_number)
        goto fail;
    memcpy(out->step_number, b.step_index, b.g.n_steps * sizeof *out->step_number);
    if (wi_set_ideal(&b) || wi_blame(&b, out))
        goto fail;
    wi_build_free(&b);
    if (findings)
        wi_add_finding(out, findings);
    return 0;
fail:
    wi_build_free(&b);
    tsa_pipe_free(out);
    return -1;
}

void tsa_pipe_free(tsa_pipe_result *r)
{
    if (!r)
        return;
    free(r->stage_of);
    free(r->dp_of);
    free(r->global_rank);
    free(r->step_actual_ns);
    free(r->step_ideal_ns);
    free(r->step_typical_ns);
    free(r->saved_worker_ns);
    free(r->saved_stage_ns);
    free(r->saved_dp_ns);
    free(r->hops);
    free(r->hop_first);
    free(r->step_number);
    memset(r, 0, sizeof *r);
    r->culprit = -1;
}

static int late_rank_dist(const char *id)
{
    return !strcmp(id, "DIST.STRAGGLER") || !strcmp(id, "DIST.IMBALANCE") ||
           !strcmp(id, "DIST.INTERMITTENT") || !strcmp(id, "DIST.SLOW_HOST");
}

void tsa_pipe_supersede(const tsa_pipe_result *r, tsa_findings *findings, void *xrv)
{
    if (!r || !r->pipeline)
        return;
    if (findings) {
        size_t keep = 0;
        for (size_t i = 0; i < findings->n; i++) {
            tsa_finding *f = &findings->items[i];
            if (late_rank_dist(f->id)) {
                tsa_finding_clear(f);
                continue;
            }
            findings->items[keep++] = *f;
        }
        findings->n = keep;
    }
    tsa_xrank_result *xr = xrv;
    if (!xr)
        return;
    if (xr->straggler)
        free(xr->straggler->slow_steps);
    free(xr->straggler);
    xr->straggler = NULL;
    free(xr->imbalanced_ranks);
    xr->imbalanced_ranks = NULL;
    xr->n_imbalanced = 0;
    xr->imbalance = 0;
    free(xr->slow_host_ranks);
    xr->slow_host_ranks = NULL;
    xr->n_slow_host_ranks = 0;
    xr->slow_host = NULL;
    for (size_t i = 0; i < xr->n_bursts; i++)
        free(xr->bursts[i].slow_steps);
    free(xr->bursts);
    xr->bursts = NULL;
    xr->n_bursts = 0;
    for (size_t i = 0; i < xr->n_ranks; i++)
        xr->ranks[i].slow = 0;
}
