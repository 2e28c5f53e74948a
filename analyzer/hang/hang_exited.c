/* RANK.EXITED_EARLY: a rank's process ended by itself (exit, _exit, a
 * crash, an abort: its END record says which) while other ranks went on,
 * i.e. some rank called a communicator they share at a higher sequence
 * number than the ended rank's last call on it.  Clock-free: only sequence
 * numbers are compared.  Ranks that ended the same way after the same last
 * call are one finding. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "load/rank_view.h"
#include "hang.h"

/* Highest seq rank r called (completed or entered) on comm, -1 none, into
 * *top; -1 on OOM.  The completed calls' part is in the rank's summary
 * (load/seq_summary.h). */
static int top_seq(const tsa_rank *r, uint64_t comm, int64_t *top)
{
    tsa_seq_summary tmp;
    const tsa_seq_summary *sum = tsa_rank_seqs(r, &tmp);
    const tsa_comm_seqs *cs = sum ? tsa_seq_summary_comm(sum, comm) : NULL;
    *top = cs ? cs->top : -1;
    tsa_seq_summary_free(&tmp);
    if (!sum)
        return -1;
    for (size_t k = 0; k < r->n_pending; k++)
        if (r->pending[k].comm_id == comm && tsa_hang_sequenced(r->pending[k].op) &&
            (int64_t)r->pending[k].seq > *top)
            *top = (int64_t)r->pending[k].seq;
    return 0;
}

/* Every rank's last sequenced call (from its summary), as a copy; has[i] =
 * 0 for a rank without one.  -1 on OOM. */
static int last_calls(const tsa_job *job, tsa_nccl_op *last, uint8_t *has)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        tsa_seq_summary tmp;
        const tsa_seq_summary *sum = tsa_rank_seqs(&job->ranks[i], &tmp);
        if (sum) {
            has[i] = (uint8_t)sum->has_last;
            last[i] = sum->last;
        }
        tsa_seq_summary_free(&tmp);
        if (!sum)
            return -1;
    }
    return 0;
}

/* Every rank's top_seq on one communicator, computed once per
 * communicator (a job's ranks usually all end on the same one). */
typedef struct top_cache {
    uint64_t comm;
    int64_t *top;
} top_cache;

static const int64_t *tops_of(const tsa_job *job, top_cache *c, uint64_t comm)
{
    if (c->top && c->comm == comm)
        return c->top;
    free(c->top);
    c->top = malloc((job->n_ranks ? job->n_ranks : 1) * sizeof *c->top);
    if (!c->top)
        return NULL;
    c->comm = comm;
    for (size_t j = 0; j < job->n_ranks; j++)
        if (top_seq(&job->ranks[j], comm, &c->top[j])) {
            free(c->top);
            c->top = NULL;
            return NULL;
        }
    return c->top;
}

/* Did another rank go past r's last call on a shared communicator?
 * Those that did are added to went_on.  -1 on OOM. */
static int others_went_on(const tsa_job *job, size_t i, const tsa_nccl_op *last,
                          top_cache *cache, tsa_rank_list *went_on)
{
    const int64_t *top = tops_of(job, cache, last->comm_id);
    if (!top)
        return -1;
    int64_t mine = top[i];
    int any = 0;
    for (size_t j = 0; j < job->n_ranks; j++)
        if (j != i && top[j] > mine) {
            any = 1;
            if (tsa_rank_list_add(went_on, tsa_hang_rank_id(job, j)))
                return -1;
        }
    return any;
}

static int end_signal(const tsa_rank_end *e)
{
    return strncmp(e->reason, "signal:", 7) ? 0 : atoi(e->reason + 7);
}

int tsa_hang_find_exits(const tsa_job *job, tsa_hang_result *h)
{
    size_t n = job->n_ranks;
    char *done = calloc(n ? n : 1, 1);
    uint8_t *has_last = calloc(n ? n : 1, 1);
    tsa_nccl_op *lasts = malloc((n ? n : 1) * sizeof *lasts);
    int rc = done && has_last && lasts ? last_calls(job, lasts, has_last) : -1;
    top_cache cache = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        const tsa_rank *r = &job->ranks[i];
        const tsa_nccl_op *last = has_last[i] ? &lasts[i] : NULL;
        if (done[i] || !last || !tsa_end_by_itself(&r->end))
            continue;
        tsa_rank_list went_on = {0}, ended = {0};
        int on = others_went_on(job, i, last, &cache, &went_on);
        if (on <= 0) {
            rc = on < 0;
            tsa_rank_list_free(&went_on);
            continue;
        }
        char how[64], last_txt[96];
        tsa_end_describe(&r->end, how, sizeof how);
        snprintf(last_txt, sizeof last_txt, "%s seq %llu", tsa_nccl_op_name(last->op),
                 (unsigned long long)last->seq);
        /* Every rank that ended the same way after the same call. */
        for (size_t j = i; j < n && !rc; j++) {
            const tsa_nccl_op *lj = has_last[j] ? &lasts[j] : NULL;
            char how_j[64];
            if (done[j] || !lj || !tsa_end_by_itself(&job->ranks[j].end) ||
                lj->comm_id != last->comm_id || lj->seq != last->seq || lj->op != last->op ||
                strcmp(tsa_end_describe(&job->ranks[j].end, how_j, sizeof how_j), how))
                continue;
            done[j] = 1;
            rc = tsa_rank_list_add(&ended, tsa_hang_rank_id(job, j));
        }
        tsa_hang_item *it = rc ? NULL : tsa_hang_new_item(h, TSA_HANG_EXITED);
        if (!it) {
            rc = -1;
        } else {
            it->ranks = ended;
            memset(&ended, 0, sizeof ended);
            it->op = last->op;
            it->comm_id = last->comm_id;
            it->seq = last->seq;
            it->has_exit_code = r->end.has_exit_code && !strcmp(r->end.reason, "exit");
            it->exit_code = r->end.exit_code;
            it->signal = end_signal(&r->end);
            tsa_rank_list_sort(&went_on);
            char who[256], others[256];
            tsa_rank_list_format(&it->ranks, who, sizeof who);
            tsa_rank_list_format(&went_on, others, sizeof others);
            rc = tsa_hang_add_group(it, &it->ranks, "ended (%s) after %s, %zu steps found",
                                    how, last_txt, r->n_steps) ||
                 tsa_hang_add_group(it, &went_on, "went on: called the communicator past it");
            if (!rc && asprintf(&it->title, "%s ended (%s) after %s while %s went on", who,
                                how, last_txt, others) < 0) {
                it->title = NULL;
                rc = -1;
            }
        }
        tsa_rank_list_free(&went_on);
        tsa_rank_list_free(&ended);
    }
    free(done);
    free(has_last);
    free(lasts);
    free(cache.top);
    return rc;
}
