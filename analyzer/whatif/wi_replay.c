/* Replaying one step of the what-if graph, and its critical path. */
#include "wi_graph.h"

#define GONE UINT32_MAX

int wi_fix_applies(const wi_fix *f, const wi_node *n)
{
    switch (f ? f->by : WI_FIX_NONE) {
    case WI_FIX_ALL:
    case WI_FIX_TYPICAL:
        return 1;
    case WI_FIX_WORKER:
        return n->rank == f->value;
    case WI_FIX_STAGE:
        return f->stage_of && f->stage_of[n->rank] == f->value;
    case WI_FIX_DP:
        return f->dp_of && f->dp_of[n->rank] == f->value;
    case WI_FIX_KIND:
        return n->okind == f->value;
    default:
        return 0;
    }
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t replayed_dur(const wi_fix *f, const wi_node *v)
{
    if (!wi_fix_applies(f, v))
        return v->dur;
    return f->by == WI_FIX_TYPICAL ? v->typical : v->ideal;
}

int64_t wi_replay_step(const wi_graph *g, size_t s, const wi_fix *f, wi_times *t)
{
    size_t n0 = g->step_node[s], h0 = g->step_hub[s];
    if (g->step_node[s + 1] == n0)
        return 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t k = g->step_order[s]; k < g->step_order[s + 1]; k++) {
        uint32_t it = g->order[k], i = it & (WI_MAX_ITEMS - 1);
        switch (it >> 30) {
        case 0: {
            const wi_node *v = &g->nodes[n0 + i];
            int64_t st = INT64_MIN;
            for (uint32_t d = 0; d < v->n_dep; d++) {
                uint32_t u = g->deps[v->dep_first + d];
                if (u != GONE)
                    st = max64(st, t->end[u]);
            }
            t->start[n0 + i] = st == INT64_MIN ? v->rec_start
                               : st + (f && f->raw_gaps ? v->gap : v->ideal_gap);
            if (v->rec_start < first)
                first = v->rec_start;
            break;
        }
        case 1: {
            const wi_node *v = &g->nodes[n0 + i];
            int64_t at = t->start[n0 + i];
            for (uint32_t q = 0; q < v->n_gate; q++) {
                uint32_t h = g->gates[v->gate_first + q];
                if (h != GONE)
                    at = max64(at, t->open[h]);
            }
            int64_t e = at + replayed_dur(f, v);
            t->end[n0 + i] = e;
            if (e > last)
                last = e;
            break;
        }
        default: {
            const wi_hub *h = &g->hubs[h0 + i];
            int64_t o = INT64_MIN;
            for (uint32_t m = 0; m < h->n_mem; m++)
                o = max64(o, t->start[g->members[h->mem_first + m]]);
            t->open[h0 + i] = o;
            break;
        }
        }
    }
    return last > first ? last - first : 0;
}

int64_t wi_step_recorded(const wi_graph *g, size_t s)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = g->step_node[s]; i < g->step_node[s + 1]; i++) {
        if (g->nodes[i].rec_start < first)
            first = g->nodes[i].rec_start;
        if (g->nodes[i].rec_end > last)
            last = g->nodes[i].rec_end;
    }
    return last > first ? last - first : 0;
}

size_t wi_critical_path(const wi_graph *g, size_t s, const wi_times *t, uint32_t *path,
                        uint8_t *via, size_t cap)
{
    size_t n0 = g->step_node[s], n1 = g->step_node[s + 1];
    if (n1 == n0)
        return 0;
    uint32_t v = (uint32_t)n0;
    for (size_t i = n0 + 1; i < n1; i++)
        if (t->end[i] > t->end[v])
            v = (uint32_t)i;
    /* walk back, writing from the end of a window of cap entries */
    size_t len = 0;
    uint8_t how = 0;
    for (size_t guard = 0; guard <= n1 - n0; guard++) {
        if (len < cap) {
            path[len] = v;
            if (via)
                via[len] = how;
        }
        len++;
        const wi_node *nd = &g->nodes[v];
        /* its end: a hub that opened after it started? */
        uint32_t hub = GONE;
        int64_t at = t->start[v];
        for (uint32_t q = 0; q < nd->n_gate; q++) {
            uint32_t h = g->gates[nd->gate_first + q];
            if (h != GONE && t->open[h] > at) {
                at = t->open[h];
                hub = h;
            }
        }
        if (hub != GONE) {
            const wi_hub *h = &g->hubs[hub];
            uint32_t who = GONE;
            for (uint32_t m = 0; m < h->n_mem && who == GONE; m++)
                if (t->start[g->members[h->mem_first + m]] == at)
                    who = g->members[h->mem_first + m];
            if (who != GONE && who != v) {
                v = who;
                how = 1;
                continue;
            }
        }
        /* its start: the dependency that ended last */
        uint32_t dep = GONE;
        int64_t best = INT64_MIN;
        for (uint32_t d = 0; d < nd->n_dep; d++) {
            uint32_t u = g->deps[nd->dep_first + d];
            if (u != GONE && t->end[u] > best) {
                best = t->end[u];
                dep = u;
            }
        }
        if (dep == GONE)
            break;
        v = dep;
        how = 0;
    }
    /* reverse into first-to-last order (the part that fits) */
    size_t n = len < cap ? len : cap;
    for (size_t i = 0; i < n / 2; i++) {
        uint32_t tmp = path[i];
        path[i] = path[n - 1 - i];
        path[n - 1 - i] = tmp;
        if (via) {
            uint8_t tv = via[i];
            via[i] = via[n - 1 - i];
            via[n - 1 - i] = tv;
        }
    }
    return len;
}
