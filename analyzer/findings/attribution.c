#include "attribution.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif.h"

#define LINE(l) (1u << (l))
#define RECOVERABLE_LINES                                                                  \
    (LINE(TSA_BL_OVERHEAD) | LINE(TSA_BL_DATA_STALL) | LINE(TSA_BL_COMM_WAIT) |             \
     LINE(TSA_BL_COMM_TRANSFER) | LINE(TSA_BL_HOST_IDLE))

typedef enum claim_kind { CLAIM_LATE_RANK, CLAIM_LINES, CLAIM_ASKED } claim_kind;

typedef struct rule {
    const char *id;
    int order;          /* blame-chain position: lower claims first */
    claim_kind kind;
    uint32_t lines;     /* CLAIM_LINES: every nanosecond left in these lines;
                           CLAIM_LATE_RANK: where the other ranks' waiting is */
} rule;

/* Cross-rank late-rank findings take the others' measured waiting for
 * peers.  A pipeline's others wait in receives (booked as transfer: a
 * point-to-point call has no arrival split) and with the GPU idle between
 * them; the what-if's replay says their step shortens by the saving all
 * the same, so they give it from those lines too. */
#define WAITING LINE(TSA_BL_COMM_WAIT)
#define PIPE_WAITING                                                                        \
    (LINE(TSA_BL_COMM_WAIT) | LINE(TSA_BL_COMM_TRANSFER) | LINE(TSA_BL_HOST_IDLE) |         \
     LINE(TSA_BL_DATA_STALL) | LINE(TSA_BL_OTHER))

static const rule rules[] = {
    {"DIST.STRAGGLER", 0, CLAIM_LATE_RANK, WAITING},
    {"DIST.SLOW_HOST", 0, CLAIM_LATE_RANK, WAITING},
    {"DIST.IMBALANCE", 0, CLAIM_LATE_RANK, WAITING},
    {"DIST.INTERMITTENT", 0, CLAIM_LATE_RANK, WAITING},
    {"PIPE.SLOW_WORKER", 0, CLAIM_LATE_RANK, PIPE_WAITING},
    {"PIPE.SLOW_STAGE", 0, CLAIM_LATE_RANK, PIPE_WAITING},
    {"PIPE.SLOW_DP_GROUP", 0, CLAIM_LATE_RANK, PIPE_WAITING},
    {"PIPE.SPREAD", 0, CLAIM_LATE_RANK, PIPE_WAITING},
    {"DATA.STALL", 1, CLAIM_LINES, LINE(TSA_BL_DATA_STALL)},
    {"HOST.LAUNCH_BOUND", 2, CLAIM_LINES, LINE(TSA_BL_HOST_IDLE)},
    {"HOST.COLD_START", 2, CLAIM_LINES, LINE(TSA_BL_HOST_IDLE)},
    {"HOST.BLOCKING", 2, CLAIM_LINES, LINE(TSA_BL_HOST_IDLE)},
    {"HOST.CPU_BOUND", 2, CLAIM_LINES, LINE(TSA_BL_HOST_IDLE)},
    {"COMM.EXPOSED", 3, CLAIM_LINES, LINE(TSA_BL_COMM_WAIT) | LINE(TSA_BL_COMM_TRANSFER)},
    {"EFF.LOW_MFU", 4, CLAIM_LINES, LINE(TSA_BL_OVERHEAD)},
};
#define ASKED_ORDER 5

static const rule *rule_of(const char *id)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (id && !strcmp(rules[i].id, id))
            return &rules[i];
    return NULL;
}

int tsa_finding_is_late_rank(const char *id)
{
    const rule *r = rule_of(id);
    return r && r->kind == CLAIM_LATE_RANK;
}

typedef struct ledger {
    int64_t *left;      /* [rank][line]: budget ns not yet claimed */
    size_t n_ranks;
    const char *claimer[TSA_BL_COUNT]; /* first finding that took from each line */
    const char *current;               /* id of the finding claiming now */
} ledger;

/* Takes up to `want` ns from rank ri's lines, in the order given. */
static int64_t take(ledger *lg, size_t ri, const int *order, size_t n, int64_t want,
                    int64_t *by_line)
{
    int64_t got = 0;
    for (size_t k = 0; k < n && got < want; k++) {
        int64_t *left = &lg->left[ri * TSA_BL_COUNT + order[k]];
        int64_t t = *left < want - got ? *left : want - got;
        if (t <= 0)
            continue;
        *left -= t;
        got += t;
        if (!lg->claimer[order[k]])
            lg->claimer[order[k]] = lg->current;
        if (by_line)
            by_line[order[k]] += t;
    }
    return got;
}

static int rank_in(int32_t rank, const int32_t *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == rank)
            return 1;
    return 0;
}

/* Ranks a late-rank finding blames. */
static void culprits(const tsa_analysis *a, const tsa_finding *f, const int32_t **list,
                     size_t *n, int32_t *one)
{
    static _Thread_local int32_t pipe_ranks[4096];
    *one = f->rank;
    *list = one;
    *n = f->rank >= 0;
    if (!strncmp(f->id, "PIPE.", 5)) {
        size_t k = 0;
        if (!strcmp(f->id, "PIPE.SPREAD")) /* the spread blames every worker */
            for (; k < a->n_ranks && k < 4096; k++)
                pipe_ranks[k] = a->ranks[k].rank;
        else
            k = tsa_pipe_culprits(a->pipe, f->id, pipe_ranks, 4096);
        *list = pipe_ranks;
        *n = k;
        return;
    }
    if (!a->have_xrank)
        return;
    if (!strcmp(f->id, "DIST.SLOW_HOST") && a->xrank.n_slow_host_ranks) {
        *list = a->xrank.slow_host_ranks;
        *n = a->xrank.n_slow_host_ranks;
    } else if (!strcmp(f->id, "DIST.IMBALANCE") && a->xrank.n_imbalanced) {
        *list = a->xrank.imbalanced_ranks;
        *n = a->xrank.n_imbalanced;
    }
}

static void note_claimed(tsa_finding *f, const char *by)
{
    size_t len = strlen(f->title) + strlen(by) + 64;
    char *t = malloc(len);
    if (!t)
        return; /* the title stays as it was */
    snprintf(t, len, "%s; the part caused by %s is counted there", f->title, by);
    free(f->title);
    f->title = t;
}

static int64_t claim(tsa_analysis *a, ledger *lg, tsa_finding *f, const rule *ru)
{
    int64_t total = 0;
    if (ru && ru->kind == CLAIM_LATE_RANK) {
        /* The late rank's own excess, then the others' waiting for it. */
        static const int own[] = {TSA_BL_OVERHEAD, TSA_BL_DATA_STALL, TSA_BL_HOST_IDLE,
                                  TSA_BL_USEFUL};
        static const int order[] = {TSA_BL_COMM_WAIT, TSA_BL_COMM_TRANSFER, TSA_BL_HOST_IDLE,
                                    TSA_BL_DATA_STALL, TSA_BL_OTHER};
        int others[sizeof order / sizeof order[0]];
        size_t n_others = 0;
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
            if (ru->lines & LINE(order[k]))
                others[n_others++] = order[k];
        const int32_t *list;
        size_t n;
        int32_t one;
        culprits(a, f, &list, &n, &one);
        if (!n)
            return 0;
        for (size_t ri = 0; ri < lg->n_ranks; ri++) {
            int late = rank_in(a->ranks[ri].rank, list, n);
            total += take(lg, ri, late ? own : others, late ? 4 : n_others, f->recoverable_ns,
                          a->late_rank_ns);
        }
        return total;
    }
    uint32_t lines = ru ? ru->lines : (f->pools ? f->pools & RECOVERABLE_LINES : RECOVERABLE_LINES);
    int64_t want = ru ? INT64_MAX : f->recoverable_ns;
    int order[TSA_BL_COUNT];
    size_t n = 0;
    static const int pref[] = {TSA_BL_OVERHEAD, TSA_BL_DATA_STALL, TSA_BL_HOST_IDLE,
                               TSA_BL_COMM_WAIT, TSA_BL_COMM_TRANSFER};
    for (size_t k = 0; k < sizeof pref / sizeof pref[0]; k++)
        if (lines & LINE(pref[k]))
            order[n++] = pref[k];
    const char *before[TSA_BL_COUNT];
    memcpy(before, lg->claimer, sizeof before);
    for (size_t ri = 0; ri < lg->n_ranks; ri++)
        total += take(lg, ri, order, n, want, NULL);
    /* Say in the title what an earlier cause took, so the numbers in it
     * and the recoverable time do not seem to disagree. */
    for (size_t k = 0; k < n && ru; k++)
        if (before[order[k]]) {
            note_claimed(f, before[order[k]]);
            break;
        }
    return total;
}

typedef struct pending {
    size_t idx;
    int order;
} pending;

static int by_order(const void *pa, const void *pb)
{
    const pending *a = pa, *b = pb;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

int tsa_attribute_recoverable(tsa_analysis *a)
{
    memset(a->late_rank_ns, 0, sizeof a->late_rank_ns);
    size_t nf = a->findings.n;
    if (!nf)
        return 0;
    ledger lg = {.n_ranks = a->n_ranks};
    lg.left = calloc((a->n_ranks ? a->n_ranks : 1) * TSA_BL_COUNT, sizeof *lg.left);
    pending *p = malloc(nf * sizeof *p);
    if (!lg.left || !p) {
        free(lg.left);
        free(p);
        return -1;
    }
    for (size_t ri = 0; ri < a->n_ranks; ri++)
        for (int l = 0; l < TSA_BL_COUNT; l++) {
            int64_t v = a->ranks[ri].budget.line_ns[l];
            lg.left[ri * TSA_BL_COUNT + l] = v > 0 ? v : 0;
        }
    for (size_t i = 0; i < nf; i++) {
        const rule *ru = rule_of(a->findings.items[i].id);
        p[i].idx = i;
        p[i].order = ru ? ru->order : ASKED_ORDER;
    }
    qsort(p, nf, sizeof *p, by_order);
    for (size_t k = 0; k < nf; k++) {
        tsa_finding *f = &a->findings.items[p[k].idx];
        lg.current = f->id;
        if (f->recoverable_ns <= 0) {
            f->recoverable_ns = 0;
            f->recoverable_s = 0;
            continue;
        }
        int64_t total = claim(a, &lg, f, rule_of(f->id));
        f->recoverable_ns = a->n_ranks ? total / (int64_t)a->n_ranks : 0;
        f->recoverable_s = (double)f->recoverable_ns / 1e9;
    }
    free(lg.left);
    free(p);
    return 0;
}
