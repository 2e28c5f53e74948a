#include "partial.h"

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

static void append(char *note, size_t cap, const char *text)
{
    size_t used = strlen(note);
    if (used + 1 < cap)
        snprintf(note + used, cap - used, "%s%s", used ? "; " : "", text);
}

size_t tsa_trim_cut_rank(const tsa_job *job, tsa_rank *r, char *note, size_t cap)
{
    const tsa_problem *p = problem_of(job, r);
    if (!p)
        return 0;
    const char *base = strrchr(p->file, '/');
    base = base ? base + 1 : p->file;
    char text[384];
    int64_t s, e;
    if (!tsa_rank_gpu_span(r, &s, &e)) {
        snprintf(text, sizeof text,
                 "rank %d: %s ends early (at byte %llu) before any GPU record: its GPU "
                 "time is missing",
                 r->rank, base, (unsigned long long)p->offset);
        append(note, cap, text);
        return 0;
    }
    size_t keep = 0, total = r->n_steps;
    while (keep < r->n_steps && r->steps[keep].end_ns <= e)
        keep++;
    r->n_steps = keep;
    snprintf(text, sizeof text,
             "rank %d: %s ends early (at byte %llu): GPU records stop there, so %zu of %zu "
             "steps after them are not analysed",
             r->rank, base, (unsigned long long)p->offset, total - keep, total);
    append(note, cap, text);
    return total - keep;
}
