/* Evaluation order of each step's graph (Kahn's algorithm over start, end
 * and hub items).  Recorded times make the graph acyclic except where
 * operations share a timestamp; such a cycle is broken by dropping the
 * gate (or dependency) of the item that recorded time says came first. */
#include <stdlib.h>
#include <string.h>

#include "wi_graph.h"

#define GONE UINT32_MAX

typedef struct csr {
    uint32_t *first, *items;
} csr;

static void csr_free(csr *c)
{
    free(c->first);
    free(c->items);
}

/* The list an owner holds: kind 0 a node's deps, 1 its gates, 2 a hub's
 * members. */
static void owner_list(const wi_graph *g, int kind, size_t o, uint32_t *f, uint32_t *n)
{
    if (kind == 2) {
        *f = g->hubs[o].mem_first;
        *n = g->hubs[o].n_mem;
    } else {
        const wi_node *v = &g->nodes[o];
        *f = kind ? v->gate_first : v->dep_first;
        *n = kind ? v->n_gate : v->n_dep;
    }
}

/* Reverse lists for one step: owners [o0, o0+n_own), each with list
 * (first, count) into arr; targets in [t0, t0+n_t).  Result: per target,
 * its owners (local indices). */
static int reverse(csr *out, size_t n_t, size_t t0, size_t o0, size_t n_own,
                   const uint32_t *arr, const wi_graph *g, int kind)
{
    out->first = calloc(n_t + 1, sizeof *out->first);
    size_t total = 0;
    for (size_t o = 0; o < n_own; o++) {
        uint32_t f, n;
        owner_list(g, kind, o0 + o, &f, &n);
        for (uint32_t k = 0; k < n; k++)
            if (arr[f + k] != GONE && out->first) {
                out->first[arr[f + k] - t0 + 1]++;
                total++;
            }
    }
    out->items = malloc((total ? total : 1) * sizeof *out->items);
    if (!out->first || !out->items)
        return -1;
    for (size_t t = 0; t < n_t; t++)
        out->first[t + 1] += out->first[t];
    uint32_t *pos = malloc((n_t ? n_t : 1) * sizeof *pos);
    if (!pos)
        return -1;
    memcpy(pos, out->first, n_t * sizeof *pos);
    for (size_t o = 0; o < n_own; o++) {
        uint32_t f, n;
        owner_list(g, kind, o0 + o, &f, &n);
        for (uint32_t k = 0; k < n; k++)
            if (arr[f + k] != GONE)
                out->items[pos[arr[f + k] - t0]++] = (uint32_t)o;
    }
    free(pos);
    return 0;
}

/* Drops what still holds item `it` back (a cycle), so it can go. */
static void release(wi_graph *g, uint32_t it, size_t n0, size_t h0, const uint32_t *done,
                    uint32_t *indeg)
{
    uint32_t type = it >> 30, i = it & (WI_MAX_ITEMS - 1);
    wi_node *v = &g->nodes[n0 + i];
    size_t n_loc = (size_t)(g->step_node[v->step + 1] - n0);
    if (type == 1) {
        for (uint32_t k = 0; k < v->n_gate; k++) {
            uint32_t h = g->gates[v->gate_first + k];
            if (h != GONE && !done[2 * n_loc + (h - h0)]) {
                g->gates[v->gate_first + k] = GONE;
                g->cut_links++;
            }
        }
    } else {
        for (uint32_t k = 0; k < v->n_dep; k++) {
            uint32_t d = g->deps[v->dep_first + k];
            if (d != GONE && !done[n_loc + (d - n0)]) {
                g->deps[v->dep_first + k] = GONE;
                g->cut_links++;
            }
        }
    }
    indeg[it >> 30 == 1 ? n_loc + i : i] = 0;
}

static int order_step(wi_graph *g, size_t s, uint32_t *out)
{
    size_t n0 = g->step_node[s], n_loc = g->step_node[s + 1] - n0;
    size_t h0 = g->step_hub[s], h_loc = g->step_hub[s + 1] - h0;
    size_t items = 2 * n_loc + h_loc;
    csr rdep = {0}, rmem = {0}, rgate = {0};
    uint32_t *indeg = calloc(items + 1, sizeof *indeg);
    uint32_t *done = calloc(items + 1, sizeof *done);
    uint32_t *queue = malloc((items + 1) * sizeof *queue);
    int rc = -1;
    if (!indeg || !done || !queue ||
        reverse(&rdep, n_loc, n0, n0, n_loc, g->deps, g, 0) ||
        reverse(&rgate, h_loc, h0, n0, n_loc, g->gates, g, 1) ||
        reverse(&rmem, n_loc, n0, h0, h_loc, g->members, g, 2))
        goto out;
    for (size_t v = 0; v < n_loc; v++) {
        const wi_node *nd = &g->nodes[n0 + v];
        for (uint32_t k = 0; k < nd->n_dep; k++)
            indeg[v] += g->deps[nd->dep_first + k] != GONE;
        indeg[n_loc + v] = 1;
        for (uint32_t k = 0; k < nd->n_gate; k++)
            indeg[n_loc + v] += g->gates[nd->gate_first + k] != GONE;
    }
    for (size_t h = 0; h < h_loc; h++)
        indeg[2 * n_loc + h] = g->hubs[h0 + h].n_mem;
    size_t head = 0, tail = 0, placed = 0;
    for (size_t v = 0; v < n_loc; v++)
        if (!indeg[v])
            queue[tail++] = WI_ITEM(0, v);
    for (size_t h = 0; h < h_loc; h++)
        if (!indeg[2 * n_loc + h])
            queue[tail++] = WI_ITEM(2, h);
    while (placed < items) {
        if (head == tail) {
            /* a cycle: free the pending item recorded first */
            uint32_t best = GONE;
            int64_t best_t = INT64_MAX;
            for (size_t v = 0; v < n_loc; v++) {
                const wi_node *nd = &g->nodes[n0 + v];
                if (!done[v] && nd->rec_start < best_t) {
                    best_t = nd->rec_start;
                    best = WI_ITEM(0, v);
                }
                if (done[v] && !done[n_loc + v] && nd->rec_end < best_t) {
                    best_t = nd->rec_end;
                    best = WI_ITEM(1, v);
                }
            }
            if (best == GONE)
                break;
            release(g, best, n0, h0, done, indeg);
            queue[tail++] = best;
        }
        uint32_t it = queue[head++];
        uint32_t type = it >> 30, i = it & (WI_MAX_ITEMS - 1);
        size_t slot = type == 0 ? i : type == 1 ? n_loc + i : 2 * n_loc + i;
        if (done[slot])
            continue;
        done[slot] = 1;
        out[placed++] = it;
        if (type == 0) {
            if (!--indeg[n_loc + i])
                queue[tail++] = WI_ITEM(1, i);
            for (uint32_t k = rmem.first[i]; k < rmem.first[i + 1]; k++)
                if (!--indeg[2 * n_loc + rmem.items[k]])
                    queue[tail++] = WI_ITEM(2, rmem.items[k]);
        } else if (type == 1) {
            for (uint32_t k = rdep.first[i]; k < rdep.first[i + 1]; k++)
                if (!--indeg[rdep.items[k]])
                    queue[tail++] = WI_ITEM(0, rdep.items[k]);
        } else {
            for (uint32_t k = rgate.first[i]; k < rgate.first[i + 1]; k++)
                if (!--indeg[n_loc + rgate.items[k]])
                    queue[tail++] = WI_ITEM(1, rgate.items[k]);
        }
    }
    rc = placed == items ? 0 : -1;
out:
    csr_free(&rdep);
    csr_free(&rmem);
    csr_free(&rgate);
    free(indeg);
    free(done);
    free(queue);
    return rc;
}

int wi_graph_order(wi_graph *g)
{
    size_t total = 2 * g->n_nodes + g->n_hubs;
    free(g->order);
    free(g->step_order);
    g->order = malloc((total ? total : 1) * sizeof *g->order);
    g->step_order = calloc(g->n_steps + 1, sizeof *g->step_order);
    if (!g->order || !g->step_order)
        return -1;
    size_t at = 0;
    for (size_t s = 0; s < g->n_steps; s++) {
        g->step_order[s] = at;
        if (order_step(g, s, g->order + at))
            return -1;
        at += 2 * (g->step_node[s + 1] - g->step_node[s]) + (g->step_hub[s + 1] - g->step_hub[s]);
    }
    g->step_order[g->n_steps] = at;
    return 0;
}
