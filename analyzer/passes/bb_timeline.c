/* Step timeline of a black-box folder: see bb_timeline.h. */
#include "bb_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "util/cmp.h"

static uint64_t dur(const tsc_step_summary *s)
{
    return s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
}

/* One rank's extra of step j (what it measured of it). */
static void add_extra(tsa_bb_job_step *j, const tsc_step_summary *s, const tsc_step_extra *x,
                      int rank)
{
    if (x->flags & TSC_STEP_X_STALL) {
        if (!j->stall_ranks || x->data_stall_ns > j->stall_max_ns) {
            j->stall_max_ns = x->data_stall_ns;
            j->stall_max_rank = rank;
        }
        j->stall_ranks++;
        j->stall_ns += x->data_stall_ns;
    }
    if ((x->flags & TSC_STEP_X_GEMM) && (x->flags & TSC_STEP_X_PEAK)) {
        j->mfu_ranks++;
        j->peak_ns += x->gemm_peak_ns;
        j->mfu_step_ns += dur(s);
    }
}

/* Steps 0..n-1 of the job, merged over ranks by step number. */
static int merge(const tsa_bb_folder *f, tsa_bb_timeline *t)
{
    size_t most = 0;
    for (size_t r = 0; r < f->n_ranks; r++)
        most = f->ranks[r].n_steps > most ? f->ranks[r].n_steps : most;
    size_t cap = most * 2 + 16; /* step numbers beyond it are corrupt */
    t->steps = calloc(cap, sizeof *t->steps);
    if (!t->steps)
        return -1;
    for (size_t r = 0; r < f->n_ranks; r++) {
        for (size_t i = 0; i < f->ranks[r].n_steps; i++) {
            const tsc_step_summary *s = &f->ranks[r].steps[i];
            if (s->step >= cap)
                continue;
            tsa_bb_job_step *j = &t->steps[s->step];
            if (j->ranks && j->seq != s->opener_seq)
                j->seq_mismatch = 1;
            j->seq = s->opener_seq;
            j->ranks++;
            j->ns = dur(s) > j->ns ? dur(s) : j->ns;
            j->nccl_ns += s->nccl_ns;
            j->anomalous += (s->flags & TSC_STEP_F_ANOMALY) != 0;
            add_extra(j, s, &f->ranks[r].extras[i], f->ranks[r].rank);
            if (s->step + 1 > t->n_steps)
                t->n_steps = (size_t)s->step + 1;
        }
    }
    for (size_t s = 0; s < t->n_steps; s++) {
        t->mismatched += t->steps[s].seq_mismatch;
        t->slow += t->steps[s].anomalous > 0;
    }
    return 0;
}

static void sum_row(const tsa_bb_timeline *t, tsa_bb_row *row, uint64_t *tmp)
{
    size_t k = 0;
    for (uint64_t s = row->first; s <= row->last; s++) {
        const tsa_bb_job_step *j = &t->steps[s];
        if (!j->ranks)
            continue;
        tmp[k++] = j->ns;
        row->max_ns = j->ns > row->max_ns ? j->ns : row->max_ns;
        row->nccl_ns += j->nccl_ns;
        row->rank_steps += j->ranks;
        row->slow += j->anomalous > 0;
        if (j->stall_ranks && (!row->stall_rank_steps || j->stall_max_ns > row->max_stall_ns)) {
            row->max_stall_ns = j->stall_max_ns;
            row->max_stall_rank = j->stall_max_rank;
            row->max_stall_step = s;
        }
        row->stall_rank_steps += j->stall_ranks;
        row->stall_ns += j->stall_ns;
        row->mfu_rank_steps += j->mfu_ranks;
        row->gemm_peak_ns += j->peak_ns;
        row->mfu_step_ns += j->mfu_step_ns;
    }
    row->steps = k;
    if (k) {
        qsort(tmp, k, sizeof *tmp, tsa_cmp_u64);
        row->median_ns = tmp[k / 2];
    }
}

int tsa_bb_timeline_build(const tsa_bb_folder *f, int every, tsa_bb_timeline *out)
{
    memset(out, 0, sizeof *out);
    if (merge(f, out) < 0)
        return -1;
    size_t n = out->n_steps, per_row = every || n <= 40 ? 1 : (n + 39) / 40;
    out->n_rows = n ? (n + per_row - 1) / per_row : 0;
    out->rows = calloc(out->n_rows ? out->n_rows : 1, sizeof *out->rows);
    uint64_t *tmp = malloc((per_row ? per_row : 1) * sizeof *tmp);
    if (!out->rows || !tmp) {
        free(tmp);
        tsa_bb_timeline_free(out);
        return -1;
    }
    for (size_t i = 0; i < out->n_rows; i++) {
        tsa_bb_row *row = &out->rows[i];
        row->first = i * per_row;
        row->last = row->first + per_row - 1 < n - 1 ? row->first + per_row - 1 : n - 1;
        sum_row(out, row, tmp);
    }
    free(tmp);
    return 0;
}

void tsa_bb_timeline_free(tsa_bb_timeline *t)
{
    free(t->steps);
    free(t->rows);
    memset(t, 0, sizeof *t);
}
