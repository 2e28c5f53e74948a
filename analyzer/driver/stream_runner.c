/* The streaming report's analysing half (stream.h): the per-rank stages on
 * lean ranks, reading a rank's dump again where a stage needs its records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/dup_ranks.h"
#include "load/job_build.h"
#include "load/job_text.h"
#include "load/lean_steps.h"
#include "load/rank_view.h"
#include "stream_internal.h"
#include "util/par_for.h"

tsa_job *stream_reread(tsa_stream *st, const tsa_rank *lean, int worker, int window,
                       tsa_rank_result *rr, tsa_rank_digest *d)
{
    const char *path = st->paths[lean->remote_index];
    tsa_job *pj = st->src->new_job(st);
    if (!pj)
        return NULL;
    int got = st->src->load(st, pj, path, worker);
    tsa_rank *r = pj->n_ranks == 1 ? &pj->ranks[0] : NULL;
    if (got == 1 && r && !tsa_job_make_text_visible(pj) &&
        (r->n_nccl != lean->n_nccl ||
         tsa_rank_records(r) - r->n_nccl != lean->remote_records)) {
        fprintf(stderr, "tscope-report: %s: changed since it was first read\n", path);
        got = -1;
    }
    if (got == 1 && r) {
        /* A trace's rank number and world size are the job's choice
         * (tsa_kineto_finish); a dump's are its own, the same. */
        r->rank = lean->rank;
        r->world_size = lean->world_size;
    }
    if (got != 1 || !r || tsa_stage_steps(pj, r, st->marker, rr, d) ||
        (window && tsa_stage_window(r, &st->wplan, rr, d))) {
        tsa_job_free(pj);
        return NULL;
    }
    r->clock_offset_ns = lean->clock_offset_ns;
    return pj;
}

static int stream_steps(void *ctx, tsa_analysis *a)
{
    tsa_stream *st = ctx;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const stream_slot *sl = &st->slots[a->job->ranks[i].remote_index];
        a->ranks[i].method = sl->method;
        a->ranks[i].steps_found = sl->steps_found;
        a->digests[i].cut = sl->cut;
        memcpy(a->digests[i].cut_note, sl->cut_note, sizeof sl->cut_note);
    }
    return 0;
}

static int window_again(void *ctx, size_t i, int worker)
{
    tsa_stream *st = ctx;
    tsa_job *pj = stream_reread(st, &st->a->job->ranks[i], worker, 1, &st->a->ranks[i], &st->a->digests[i]);
    tsa_job_free(pj);
    return pj ? 0 : -1;
}

/* Stage 2 reads only steps and GEMMs, which the lean rank kept; the
 * gpu-span window also needs the kernels: the dumps are read again. */
static int stream_window(void *ctx, tsa_analysis *a, const tsa_window_plan *p)
{
    tsa_stream *st = ctx;
    st->wplan = *p;
    if (p->window == TSA_WINDOW_GPU_SPAN) {
        st->a = a;
        stream_phase_begin(&st->timing);
        int rc = tsa_par_for(a->job->n_ranks, st->jobs, window_again, st);
        stream_phase_end(&st->timing, STREAM_WINDOW);
        /* the lean copies' warm-up flags (runner.marks_remote_steps) */
        for (size_t i = 0; i < a->job->n_ranks && !rc; i++)
            rc = tsa_stage_mark_warmup(&a->job->ranks[i], p);
        return rc;
    }
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        tsa_rank *r = &a->job->ranks[i];
        stream_slot *sl = &st->slots[r->remote_index];
        /* The GEMMs as stage 2 reads them, one rank at a time. */
        r->gemms = stream_gemms_take(&sl->gemms);
        if (sl->gemms.n && !r->gemms)
            return -1;
        r->n_gemms = sl->gemms.n;
        int rc = tsa_stage_window(r, p, &a->ranks[i], &a->digests[i]);
        free(r->gemms);
        r->gemms = NULL;
        r->n_gemms = 0;
        /* Read by stage 2 only: gone before the cross-rank pass's peak. */
        stream_gemms_free(&sl->gemms);
        if (rc)
            return -1;
    }
    return 0;
}

/* Stage 3 on the rank read again; its steps (now with phases) replace the
 * lean copy's, compact. */
static int pass_one(void *ctx, size_t i, int worker)
{
    tsa_stream *st = ctx;
    tsa_analysis *a = st->a;
    if (i + (size_t)st->jobs < a->job->n_ranks)   /* the dump taken next, jobs ahead */
        stream_prefetch(st->paths[a->job->ranks[i + (size_t)st->jobs].remote_index]);
    tsa_rank_result rr = a->ranks[i];
    tsa_rank_digest d;
    memset(&d, 0, sizeof d);
    tsa_job *pj = stream_reread(st, &a->job->ranks[i], worker, 1, &rr, &d);
    tsa_rank_digest_free(&d);
    if (!pj)
        return -1;
    tsa_rank *r = &pj->ranks[0], *lean = &a->job->ranks[i];
    int rc = tsa_stage_pass(r, st->pplan, &a->ranks[i], &a->digests[i]);
    struct tsa_lean_steps *steps = rc ? NULL : tsa_lean_steps_encode(r->steps, r->n_steps);
    if (steps) {
        tsa_lean_steps_free(lean->lean_steps);
        lean->lean_steps = steps;
        lean->n_steps = r->n_steps;
    }
    tsa_job_free(pj);
    return steps ? 0 : -1;
}

static int stream_pass(void *ctx, tsa_analysis *a, const tsa_pass_plan *p)
{
    tsa_stream *st = ctx;
    st->a = a;
    st->pplan = p;
    stream_phase_begin(&st->timing);
    int rc = tsa_par_for(a->job->n_ranks, st->jobs, pass_one, st);
    stream_phase_end(&st->timing, STREAM_PASS);
    return rc;
}

/* For the cause pass: the rank as after stage 3, but for its kernels'
 * phases (which it does not read): steps from the lean copy. */
static tsa_rank *stream_hold(void *ctx, const tsa_analysis *a, size_t i)
{
    tsa_stream *st = ctx;
    tsa_rank_result rr = a->ranks[i];
    tsa_rank_digest d;
    memset(&d, 0, sizeof d);
    tsa_job **grown = realloc(st->held, (st->n_held + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    st->held = grown;
    stream_phase_begin(&st->timing);
    tsa_job *pj = stream_reread(st, &a->job->ranks[i], 0, 1, &rr, &d);
    stream_phase_end(&st->timing, STREAM_HOLD);
    tsa_rank_digest_free(&d);
    if (!pj)
        return NULL;
    tsa_rank *r = &pj->ranks[0];
    tsa_rank_view v;
    const tsa_rank *lean = tsa_view_open(&a->job->ranks[i], TSA_VIEW_STEPS, &v);
    tsa_step *steps = lean && lean->n_steps ? malloc(lean->n_steps * sizeof *steps) : NULL;
    if (!lean || (lean->n_steps && !steps)) {
        tsa_view_close(&v);
        tsa_job_free(pj);
        return NULL;
    }
    if (steps)
        memcpy(steps, lean->steps, lean->n_steps * sizeof *steps);
    free(r->steps);
    r->steps = steps;
    r->n_steps = lean->n_steps;
    tsa_view_close(&v);
    st->held[st->n_held++] = pj;
    return r;
}

static void stream_release(void *ctx, tsa_rank *r)
{
    tsa_stream *st = ctx;
    for (size_t k = 0; k < st->n_held; k++)
        if (&st->held[k]->ranks[0] == r) {
            tsa_job_free(st->held[k]);
            st->held[k] = st->held[--st->n_held];
            return;
        }
}

const tsa_rank_runner *tsa_stream_runner(tsa_stream *st)
{
    st->runner = (tsa_rank_runner){.steps = stream_steps, .window = stream_window,
                                   .pass = stream_pass, .ctx = st, .hold = stream_hold,
                                   .release = stream_release, .marks_remote_steps = 1};
    return &st->runner;
}
