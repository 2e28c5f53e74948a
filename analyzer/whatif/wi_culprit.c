/* What the report and the findings say of a what-if result: the class's
 * finding id, the ranks it blames, and who they are in words. */
#include <stdio.h>
#include <string.h>

#include "wi_internal.h"

const char *tsa_pipe_class_id(tsa_pipe_class c)
{
    switch (c) {
    case TSA_PIPE_SLOW_WORKER: return "PIPE.SLOW_WORKER";
    case TSA_PIPE_SLOW_STAGE: return "PIPE.SLOW_STAGE";
    case TSA_PIPE_SLOW_DP: return "PIPE.SLOW_DP_GROUP";
    case TSA_PIPE_SPREAD: return "PIPE.SPREAD";
    default: return NULL;
    }
}

size_t tsa_pipe_culprits(const tsa_pipe_result *r, const char *id, int32_t *out, size_t cap)
{
    if (!r || !r->pipeline || !id || !tsa_pipe_class_id(r->cls) ||
        strcmp(id, tsa_pipe_class_id(r->cls)) || r->culprit < 0)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < r->n_ranks; i++) {
        int in = r->cls == TSA_PIPE_SLOW_WORKER ? (int32_t)i == r->culprit
                 : r->cls == TSA_PIPE_SLOW_DP   ? r->dp_of[i] == r->culprit
                 : r->cls == TSA_PIPE_SLOW_STAGE ? r->stage_of[i] == r->culprit
                                                 : 0;
        if (in) {
            if (n < cap)
                out[n] = r->global_rank[i];
            n++;
        }
    }
    return n < cap ? n : cap;
}

/* "ranks 6, 7" (trimmed) */
static int rank_list(const tsa_pipe_result *r, char *buf, size_t len)
{
    int32_t list[64];
    size_t n = tsa_pipe_culprits(r, tsa_pipe_class_id(r->cls), list, 64);
    int at = snprintf(buf, len, "rank%s ", n == 1 ? "" : "s");
    for (size_t i = 0; i < n && at > 0 && (size_t)at + 16 < len; i++)
        at += snprintf(buf + at, len - (size_t)at, "%s%d", i ? ", " : "", list[i]);
    if (n == 64 && at > 0 && (size_t)at + 8 < len)
        at += snprintf(buf + at, len - (size_t)at, ", ...");
    return at;
}

int tsa_pipe_culprit_text(const tsa_pipe_result *r, const char *id, char *buf, size_t len)
{
    if (!r || !r->pipeline || !id || !tsa_pipe_class_id(r->cls) ||
        strcmp(id, tsa_pipe_class_id(r->cls)))
        return 0;
    char ranks[256];
    rank_list(r, ranks, sizeof ranks);
    switch (r->cls) {
    case TSA_PIPE_SLOW_WORKER:
        snprintf(buf, len, "rank %d (DP %d, stage %d)", r->global_rank[r->culprit],
                 r->dp_of[r->culprit], r->stage_of[r->culprit]);
        break;
    case TSA_PIPE_SLOW_STAGE:
        snprintf(buf, len, "pipeline stage %d (%s)", r->culprit, ranks);
        break;
    case TSA_PIPE_SLOW_DP:
        snprintf(buf, len, "DP rank %d (%s)", r->culprit, ranks);
        break;
    default:
        snprintf(buf, len, "every worker (spread; stage %d worst)", r->worst_stage);
        break;
    }
    return 1;
}

/* What the blamed fix gives back over the analysed steps (the spread: the
 * whole gap to the ideal); -1 when nothing is blamed.  The finding's
 * recoverable time and the text's share both come from here. */
int64_t tsa_pipe_blamed_ns(const tsa_pipe_result *r)
{
    if (!r || !r->pipeline || !tsa_pipe_class_id(r->cls) || !r->steps)
        return -1;
    int64_t saved = r->cls == TSA_PIPE_SLOW_WORKER ? r->saved_worker_ns[r->culprit]
                    : r->cls == TSA_PIPE_SLOW_STAGE ? r->saved_stage_ns[r->culprit]
                    : r->cls == TSA_PIPE_SLOW_DP    ? r->saved_dp_ns[r->culprit]
                                                    : r->actual_ns - r->ideal_ns;
    /* cannot happen: a replay is never slower than the record */
    return saved > r->actual_ns ? r->actual_ns : saved;
}
