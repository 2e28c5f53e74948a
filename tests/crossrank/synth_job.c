/* Builds the synthetic jobs described in synth_job.h. */
#include "synth_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"

#define EPOCH_NS 1700000000000000000ll   /* realistic CLOCK_REALTIME values */
#define WORLD_COMM 0x5eed0c0ffee11ull

typedef struct rng { uint64_t s; } rng;

static uint64_t next_u64(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(rng *r)
{
    return ((double)(next_u64(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(rng *r)
{
    return sqrt(-2.0 * log(uniform(r))) * cos(2.0 * M_PI * uniform(r));
}

void synth_defaults(synth_params *p)
{
    memset(p, 0, sizeof *p);
    p->n_ranks = 8;
    p->n_steps = 50;
    p->per_step = 4;
    p->ranks_per_host = 4;
    p->work_ns = 100000000;
    p->jitter = 0.01;
    p->transfer_ns = 1000000;
    p->end_jitter_ns = 3000;
    p->seed = 1;
}

static double burst_extra(const synth_params *p, int r, int s)
{
    double x = 0;
    for (int i = 0; i < p->n_bursts; i++) {
        const synth_burst *b = &p->bursts[i];
        if (b->rank == r && s >= b->first_step && s < b->first_step + b->n_steps)
            x += b->slowdown;
    }
    return x;
}

tsa_job *synth_job(const synth_params *p, int64_t *true_offset)
{
    int N = p->n_ranks, S = p->n_steps, C = p->per_step > 0 ? p->per_step : 1;
    rng g = {p->seed * 0x2545f4914f6cdd1dull + 7};
    tsa_job *job = calloc(1, sizeof *job);
    int64_t *prev_end = calloc((size_t)N, sizeof *prev_end);
    int64_t *arrive = calloc((size_t)N, sizeof *arrive);
    int64_t *off = calloc((size_t)N, sizeof *off);
    uint64_t *seq = calloc((size_t)N, sizeof *seq);
    if (!job || !prev_end || !arrive || !off || !seq)
        goto fail;
    job->ranks = calloc((size_t)N, sizeof *job->ranks);
    if (!job->ranks)
        goto fail;
    job->n_ranks = (size_t)N;

    int rph = p->ranks_per_host;
    int n_hosts = rph > 0 ? (N + rph - 1) / rph : N;
    int64_t *host_off = calloc((size_t)n_hosts, sizeof *host_off);
    if (!host_off)
        goto fail;
    for (int h = 1; h < n_hosts; h++)
        host_off[h] = (int64_t)llround((2 * uniform(&g) - 1) * (double)p->max_offset_ns);
    for (int r = 0; r < N; r++) {
        tsa_rank *rk = &job->ranks[r];
        int h = rph > 0 ? r / rph : r;
        off[r] = host_off[h];
        if (true_offset)
            true_offset[r] = off[r];
        rk->rank = r;
        rk->world_size = N;
        rk->local_rank = rph > 0 ? r % rph : 0;
        if (rph > 0) {
            char name[32];
            snprintf(name, sizeof name, "node-%03d", h);
            rk->host = strdup(name);
        }
        rk->nccl = calloc((size_t)S * (size_t)C * (p->grouped ? 2 : 1), sizeof *rk->nccl);
        if (!rk->nccl || (rph > 0 && !rk->host)) {
            free(host_off);
            goto fail;
        }
        if (p->with_steps) {
            rk->steps = calloc((size_t)S, sizeof *rk->steps);
            if (!rk->steps) {
                free(host_off);
                goto fail;
            }
            rk->n_steps = (size_t)S;
        }
        prev_end[r] = EPOCH_NS;
    }
    free(host_off);

    for (int s = 0; s < S; s++) {
        for (int r = 0; r < N && p->with_steps; r++) {
            job->ranks[r].steps[s].first_nccl = job->ranks[r].n_nccl;
            job->ranks[r].steps[s].start_ns = prev_end[r] - off[r];
        }
        for (int c = 0; c < C; c++) {
            /* the first chunk (data + forward + early backward) is the big one */
            double frac = C == 1 ? 1.0 : (c == 0 ? 0.5 : 0.5 / (C - 1));
            int64_t latest = INT64_MIN;
            for (int r = 0; r < N; r++) {
                double slow = (p->slowdown ? p->slowdown[r] : 0) + burst_extra(p, r, s);
                double w = (double)p->work_ns * frac * (1 + slow) * (1 + p->jitter * gauss(&g));
                if (w < 0)
                    w = 0;
                arrive[r] = prev_end[r] + (int64_t)llround(w);
                if (arrive[r] > latest)
                    latest = arrive[r];
            }
            for (int r = 0; r < N; r++) {
                tsa_rank *rk = &job->ranks[r];
                int64_t end = latest + p->transfer_ns +
                              (p->end_jitter_ns ? (int64_t)(next_u64(&g) % (uint64_t)p->end_jitter_ns) : 0);
                prev_end[r] = end;
                uint64_t q = seq[r]++;
                if (p->missing > 0 && uniform(&g) < p->missing)
                    continue;   /* the record was lost; the call still happened */
                tsa_nccl_op *o = &rk->nccl[rk->n_nccl++];
                o->start_ns = o->gpu_start_ns = arrive[r] - off[r];
                o->end_ns = o->gpu_end_ns = end - off[r];
                o->seq = q;
                o->comm_id = WORLD_COMM;
                o->comm_rank = (uint32_t)r;
                o->comm_size = (uint32_t)N;
                o->op = TSC_NCCL_ALLREDUCE;
                o->bytes = (uint64_t)(c + 1) << 20;
                o->count = o->bytes / 4;
                o->dtype = TSC_DT_FLOAT32;
                o->peer = -1;
                o->kernel = -1;
                if (p->grouped) {
                    /* Enqueued in a microsecond; the GroupEnd waits. */
                    o->end_ns = o->gpu_end_ns = o->start_ns + 1000;
                    o->flags |= TSC_NCCL_F_IN_GROUP;
                    o->group_depth = 1;
                    tsa_nccl_op *ge = &rk->nccl[rk->n_nccl++];
                    *ge = (tsa_nccl_op){.start_ns = o->start_ns + 2000, .end_ns = end - off[r],
                                        .op = TSC_NCCL_GROUP_END, .group_depth = 1, .peer = -1,
                                        .kernel = -1};
                    ge->gpu_start_ns = ge->start_ns;
                    ge->gpu_end_ns = ge->end_ns;
                }
            }
        }
        for (int r = 0; r < N && p->with_steps; r++) {
            tsa_step *st = &job->ranks[r].steps[s];
            st->n_nccl = job->ranks[r].n_nccl - st->first_nccl;
            st->end_ns = prev_end[r] - off[r];
        }
    }
    for (int r = 0; r < N; r++) {
        tsa_rank *rk = &job->ranks[r];
        rk->first_ns = EPOCH_NS - off[r];
        rk->last_ns = prev_end[r] - off[r];
    }
    free(prev_end);
    free(arrive);
    free(off);
    free(seq);
    return job;
fail:
    free(prev_end);
    free(arrive);
    free(off);
    free(seq);
    synth_job_free(job);
    return NULL;
}

void synth_job_free(tsa_job *job)
{
    if (!job)
        return;
    for (size_t r = 0; r < job->n_ranks; r++) {
        free(job->ranks[r].host);
        free(job->ranks[r].nccl);
        free(job->ranks[r].steps);
    }
    free(job->ranks);
    free(job);
}
