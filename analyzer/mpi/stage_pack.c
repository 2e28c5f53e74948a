/* Requests and answers of the per-rank stages (stage_pack.h). */
#include "stage_pack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_OK 0
#define REPLY_FAILED 1

/* ------------------------------------------------------------ process 0 */

int tsa_host_maps_build(const tsa_job *job, const size_t *held, int procs, tsa_host_map *maps)
{
    for (int q = 1; q < procs; q++) {
        maps[q].n = held[q];
        maps[q].job_index = malloc((held[q] + 1) * sizeof *maps[q].job_index);
        if (!maps[q].job_index)
            return -1;
        for (size_t j = 0; j < held[q]; j++)
            maps[q].job_index[j] = -1;
    }
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        if (r->remote && r->remote_home > 0 && r->remote_home < (uint32_t)procs &&
            r->remote_index < held[r->remote_home])
            maps[r->remote_home].job_index[r->remote_index] = (int64_t)i;
    }
    return 0;
}

void tsa_host_maps_free(tsa_host_map *maps, int procs)
{
    for (int q = 1; maps && q < procs; q++)
        free(maps[q].job_index);
    free(maps);
}

int tsa_stage_common_pack(tsa_stage s, const tsa_window_plan *wp, const tsa_pass_plan *pp,
                          tsa_pack_buf *out)
{
    if (s == TSA_STAGE_WINDOW)
        return tsa_put(out, wp, sizeof *wp);
    if (s == TSA_STAGE_PASS)
        return tsa_put(out, &pp->peak_flops, sizeof pp->peak_flops) ||
               tsa_put_u64(out, pp->window) ||
               tsa_put_arr(out, pp->arrivals->v, pp->arrivals->n, sizeof *pp->arrivals->v);
    return 0;
}

int tsa_stage_host_pack(tsa_stage s, const tsa_analysis *a, const tsa_host_map *m,
                        tsa_pack_buf *out)
{
    if (s == TSA_STAGE_STEPS) {
        if (tsa_put_u64(out, m->n))
            return -1;
        for (size_t j = 0; j < m->n; j++) {
            uint8_t wanted = m->job_index[j] >= 0;
            if (tsa_put(out, &wanted, 1))
                return -1;
        }
    } else if (s == TSA_STAGE_PASS) {
        for (size_t j = 0; j < m->n; j++) {
            int64_t i = m->job_index[j];
            if (i < 0)
                continue;
            const tsa_rank *r = &a->job->ranks[i];
            if (tsa_put(out, &a->ranks[i].flops, sizeof(double)) ||
                tsa_put(out, &r->clock_offset_ns, sizeof r->clock_offset_ns))
                return -1;
        }
    }
    return 0;
}

/* A step array in place of r's. */
static void take_steps(tsa_cursor *c, tsa_rank *r)
{
    size_t n = 0;
    tsa_step *v = tsa_get_arr(c, &n, sizeof *v);
    if (c->bad)
        return;
    free(r->steps);
    r->steps = v;
    r->n_steps = n;
}

static void take_kernel_totals(tsa_cursor *c, tsa_rank_digest *d)
{
    tsa_rank_digest_free(d);
    uint64_t n = tsa_get_u64(c);
    if (c->bad || n > c->left / (3 * sizeof(uint64_t))) {
        c->bad = 1;
        return;
    }
    d->kernels = n ? calloc((size_t)n, sizeof *d->kernels) : NULL;
    if (n && !d->kernels) {
        c->bad = 1;
        return;
    }
    for (; d->n_kernels < n && !c->bad; d->n_kernels++) {
        tsa_kernel_total *k = &d->kernels[d->n_kernels];
        k->name = tsa_get_str(c);
        tsa_get(c, &k->category, sizeof k->category);
        k->count = tsa_get_u64(c);
        tsa_get(c, &k->ns, sizeof k->ns);
        if (!k->name)
            c->bad = 1;
    }
}

/* The fields the rank pass writes (rank_pass.h); the rest of the result
 * is process 0's own. */
static void take_pass_result(tsa_cursor *c, tsa_rank_result *rr)
{
    tsa_get(c, &rr->gpu, sizeof rr->gpu);
    tsa_get(c, &rr->overlap, sizeof rr->overlap);
    tsa_get(c, &rr->budget, sizeof rr->budget);
    tsa_get(c, &rr->compute_ns, sizeof rr->compute_ns);
    tsa_get(c, rr->kcat_ns, sizeof rr->kcat_ns);
    tsa_get(c, rr->kcat_count, sizeof rr->kcat_count);
    tsa_get(c, rr->phase_ns, sizeof rr->phase_ns);
    tsa_get(c, rr->coll_exposed_ns, sizeof rr->coll_exposed_ns);
    tsa_get(c, rr->coll_exposed_wait_ns, sizeof rr->coll_exposed_wait_ns);
    tsa_get(c, rr->coll_bucket_exposed_ns, sizeof rr->coll_bucket_exposed_ns);
    tsa_get(c, rr->idle_ns, sizeof rr->idle_ns);
    tsa_get(c, &rr->host_data, sizeof rr->host_data);
    tsa_get(c, &rr->input, sizeof rr->input);
}

static int put_pass_result(tsa_pack_buf *b, const tsa_rank_result *rr)
{
    return tsa_put(b, &rr->gpu, sizeof rr->gpu) ||
           tsa_put(b, &rr->overlap, sizeof rr->overlap) ||
           tsa_put(b, &rr->budget, sizeof rr->budget) ||
           tsa_put(b, &rr->compute_ns, sizeof rr->compute_ns) ||
           tsa_put(b, rr->kcat_ns, sizeof rr->kcat_ns) ||
           tsa_put(b, rr->kcat_count, sizeof rr->kcat_count) ||
           tsa_put(b, rr->phase_ns, sizeof rr->phase_ns) ||
           tsa_put(b, rr->coll_exposed_ns, sizeof rr->coll_exposed_ns) ||
           tsa_put(b, rr->coll_exposed_wait_ns, sizeof rr->coll_exposed_wait_ns) ||
           tsa_put(b, rr->coll_bucket_exposed_ns, sizeof rr->coll_bucket_exposed_ns) ||
           tsa_put(b, rr->idle_ns, sizeof rr->idle_ns) ||
           tsa_put(b, &rr->host_data, sizeof rr->host_data) ||
           tsa_put(b, &rr->input, sizeof rr->input);
}

/* The digest's fixed part: flags, copy totals, mix and sync totals. */
static void take_digest(tsa_cursor *c, tsa_rank_digest *d)
{
    tsa_get(c, &d->has_kernels, sizeof d->has_kernels);
    tsa_get(c, &d->has_copies, sizeof d->has_copies);
    tsa_get(c, d->copies, sizeof d->copies);
    tsa_get(c, d->copy_known_ns, sizeof d->copy_known_ns);
    tsa_get(c, &d->mix, sizeof d->mix);
    tsa_get(c, &d->sync, sizeof d->sync);
    take_kernel_totals(c, d);
}

static int put_digest(tsa_pack_buf *b, const tsa_rank_digest *d)
{
    if (tsa_put(b, &d->has_kernels, sizeof d->has_kernels) ||
        tsa_put(b, &d->has_copies, sizeof d->has_copies) ||
        tsa_put(b, d->copies, sizeof d->copies) ||
        tsa_put(b, d->copy_known_ns, sizeof d->copy_known_ns) ||
        tsa_put(b, &d->mix, sizeof d->mix) || tsa_put(b, &d->sync, sizeof d->sync) ||
        tsa_put_u64(b, d->n_kernels))
        return -1;
    for (size_t k = 0; k < d->n_kernels; k++) {
        const tsa_kernel_total *t = &d->kernels[k];
        if (tsa_put_str(b, t->name) || tsa_put(b, &t->category, sizeof t->category) ||
            tsa_put_u64(b, t->count) || tsa_put(b, &t->ns, sizeof t->ns))
            return -1;
    }
    return 0;
}

static void take_one(tsa_cursor *c, tsa_stage s, tsa_rank *r, tsa_rank_result *rr,
                     tsa_rank_digest *d)
{
    if (s == TSA_STAGE_STEPS) {
        rr->method = (tsa_step_method)tsa_get_u64(c);
        rr->steps_found = (size_t)tsa_get_u64(c);
        d->cut = (int)tsa_get_u64(c);
        char *note = tsa_get_str(c);
        snprintf(d->cut_note, sizeof d->cut_note, "%s", note ? note : "");
        free(note);
        take_steps(c, r);
    } else if (s == TSA_STAGE_WINDOW) {
        tsa_get(c, &rr->window_start_ns, sizeof rr->window_start_ns);
        tsa_get(c, &rr->window_end_ns, sizeof rr->window_end_ns);
        tsa_get(c, &d->gemm_flops, sizeof d->gemm_flops);
        tsa_get(c, d->gemm_flops_by_dtype, sizeof d->gemm_flops_by_dtype);
    } else if (s == TSA_STAGE_PASS) {
        take_pass_result(c, rr);
        take_steps(c, r);
        take_digest(c, d);
    }
}

int tsa_stage_reply_unpack(tsa_stage s, tsa_analysis *a, const tsa_host_map *m,
                           const unsigned char *data, size_t len)
{
    tsa_cursor c = {.p = data, .left = len};
    if (tsa_get_u64(&c) != REPLY_OK)
        return -1;
    for (size_t j = 0; j < m->n && !c.bad; j++) {
        int64_t i = m->job_index[j];
        if (i < 0)
            continue;
        if ((size_t)i >= a->job->n_ranks)
            return -1;
        take_one(&c, s, &a->job->ranks[i], &a->ranks[i], &a->digests[i]);
    }
    return c.bad || c.left ? -1 : 0;
}

/* ------------------------------------------------------------- a host */

int tsa_stage_host_init(tsa_stage_host *h, tsa_job *job, const char *marker)
{
    memset(h, 0, sizeof *h);
    size_t n = job->n_ranks ? job->n_ranks : 1;
    h->job = job;
    h->marker = marker;
    h->rr = calloc(n, sizeof *h->rr);
    h->dg = calloc(n, sizeof *h->dg);
    h->wanted = calloc(n, 1);
    if (!h->rr || !h->dg || !h->wanted) {
        tsa_stage_host_free(h);
        return -1;
    }
    return 0;
}

void tsa_stage_host_free(tsa_stage_host *h)
{
    for (size_t i = 0; h->dg && h->job && i < h->job->n_ranks; i++)
        tsa_rank_digest_free(&h->dg[i]);
    free(h->rr);
    free(h->dg);
    free(h->wanted);
    memset(h, 0, sizeof *h);
}

static int put_one(tsa_pack_buf *b, tsa_stage s, const tsa_rank *r, const tsa_rank_result *rr,
                   const tsa_rank_digest *d)
{
    if (s == TSA_STAGE_STEPS)
        return tsa_put_u64(b, rr->method) || tsa_put_u64(b, rr->steps_found) ||
               tsa_put_u64(b, (uint64_t)d->cut) || tsa_put_str(b, d->cut_note) ||
               tsa_put_arr(b, r->steps, r->n_steps, sizeof *r->steps);
    if (s == TSA_STAGE_WINDOW)
        return tsa_put(b, &rr->window_start_ns, sizeof rr->window_start_ns) ||
               tsa_put(b, &rr->window_end_ns, sizeof rr->window_end_ns) ||
               tsa_put(b, &d->gemm_flops, sizeof d->gemm_flops) ||
               tsa_put(b, d->gemm_flops_by_dtype, sizeof d->gemm_flops_by_dtype);
    return put_pass_result(b, rr) || tsa_put_arr(b, r->steps, r->n_steps, sizeof *r->steps) ||
           put_digest(b, d);
}

/* Reads the request and runs the stage on every wanted rank. */
static int run_stage(tsa_stage_host *h, tsa_stage s, tsa_cursor *common, tsa_cursor *part)
{
    tsa_job *job = h->job;
    if (s == TSA_STAGE_STEPS) {
        if (tsa_get_u64(part) != job->n_ranks)
            return -1;
        tsa_get(part, h->wanted, job->n_ranks);
        for (size_t j = 0; j < job->n_ranks && !part->bad; j++)
            if (h->wanted[j] &&
                tsa_stage_steps(job, &job->ranks[j], h->marker, &h->rr[j], &h->dg[j]))
                return -1;
        return part->bad ? -1 : 0;
    }
    if (s == TSA_STAGE_WINDOW) {
        tsa_window_plan wp;
        tsa_get(common, &wp, sizeof wp);
        for (size_t j = 0; j < job->n_ranks && !common->bad; j++)
            if (h->wanted[j] && tsa_stage_window(&job->ranks[j], &wp, &h->rr[j], &h->dg[j]))
                return -1;
        return common->bad ? -1 : 0;
    }
    tsa_arrivals arr = {0};
    tsa_pass_plan pp = {.arrivals = &arr};
    tsa_get(common, &pp.peak_flops, sizeof pp.peak_flops);
    pp.window = (tsa_window)tsa_get_u64(common);
    arr.v = tsa_get_arr(common, &arr.n, sizeof *arr.v);
    int rc = common->bad ? -1 : 0;
    for (size_t j = 0; j < job->n_ranks && !rc; j++) {
        if (!h->wanted[j])
            continue;
        tsa_get(part, &h->rr[j].flops, sizeof h->rr[j].flops);
        tsa_get(part, &job->ranks[j].clock_offset_ns, sizeof job->ranks[j].clock_offset_ns);
        rc = part->bad || tsa_stage_pass(&job->ranks[j], &pp, &h->rr[j], &h->dg[j]) ? -1 : 0;
    }
    tsa_arrivals_free(&arr);
    return rc;
}

int tsa_stage_host_run(tsa_stage_host *h, tsa_stage s, const unsigned char *common,
                       size_t common_len, const unsigned char *part, size_t part_len,
                       tsa_pack_buf *reply)
{
    tsa_cursor cc = {.p = common, .left = common_len}, pc = {.p = part, .left = part_len};
    int failed = s < TSA_STAGE_STEPS || s > TSA_STAGE_PASS || run_stage(h, s, &cc, &pc);
    reply->len = 0;
    failed = failed || tsa_put_u64(reply, REPLY_OK);
    for (size_t j = 0; j < h->job->n_ranks && !failed; j++)
        failed = h->wanted[j] && put_one(reply, s, &h->job->ranks[j], &h->rr[j], &h->dg[j]);
    if (failed) {
        reply->len = 0; /* out of memory packing: a short answer still says so */
        return tsa_put_u64(reply, REPLY_FAILED);
    }
    return 0;
}
