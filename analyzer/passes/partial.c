#include "partial.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu_span.h"

static const tsa_problem *problem_of(const tsa_job *job, const tsa_rank *r)
{
    if (r->clean_end || !r->file)
        return NULL;
    for (size_t i = 0; i < job->n_problems; i++)
        if (job->problems[i].file && !strcmp(job->problems[i].file, r->file))
            return &job->problems[i];
    return NULL;
}

void tsa_note_append(char *note, size_t cap, const char *text)
{
    size_t used = strlen(note);
    if (used + 1 < cap)
        snprintf(note + used, cap - used, "%s%s", used ? "; " : "", text);
}

/* The job's size: the world size the inputs state, or the largest
 * communicator a recorded collective ran on, whichever is larger (a trace
 * without distributedInfo still says "Group size": 4 on each collective,
 * so one of its files is one rank of at least four). */
int32_t tsa_missing_ranks_world(const tsa_job *job)
{
    int32_t world = 0;
    size_t nccl = 0;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        if (r->world_size > world)
            world = r->world_size;
        nccl += r->n_nccl;
        for (size_t k = 0; r->nccl && k < r->n_nccl; k++)
            if (r->nccl[k].comm_size <= INT32_MAX && (int32_t)r->nccl[k].comm_size > world)
                world = (int32_t)r->nccl[k].comm_size;
    }
    if (!nccl || world <= 0 || (size_t)world <= job->n_ranks)
        return 0; /* without communication nothing depends on the others */
    return world;
}

void tsa_note_missing_ranks(const tsa_job *job, char *note, size_t cap)
{
    int32_t world = tsa_missing_ranks_world(job);
    if (!world)
        return;
    char text[256];
    snprintf(text, sizeof text,
             "inputs of %zu of %d ranks: exposed communication cannot be split into "
             "waiting for peers and transfer, and no straggler can be named",
             job->n_ranks, world);
    tsa_note_append(note, cap, text);
}

ssize_t tsa_trim_cut_rank(const tsa_job *job, tsa_rank *r, char *note, size_t cap)
{
    const tsa_problem *p = problem_of(job, r);
    if (!p)
        return -1;
    const char *base = strrchr(p->file, '/');
    base = base ? base + 1 : p->file;
    char text[384];
    int64_t s, e;
    if (!tsa_rank_gpu_span(r, &s, &e)) {
        snprintf(text, sizeof text,
                 "%s ends early (at byte %llu) before any GPU record: its GPU time is "
                 "missing",
                 base, (unsigned long long)p->offset);
        tsa_note_append(note, cap, text);
        return 0;
    }
    if (r->n_steps && r->steps[r->n_steps - 1].end_ns <= e)
        return 0; /* every step has its GPU records: nothing is missing */
    size_t keep = 0, total = r->n_steps;
    while (keep < r->n_steps && r->steps[keep].end_ns <= e)
        keep++;
    r->n_steps = keep;
    snprintf(text, sizeof text,
             "%s ends early (at byte %llu): GPU records stop there, so %zu of %zu steps "
             "after them are not analysed",
             base, (unsigned long long)p->offset, total - keep, total);
    tsa_note_append(note, cap, text);
    return (ssize_t)(total - keep);
}
