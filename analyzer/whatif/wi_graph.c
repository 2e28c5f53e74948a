/* Building the what-if graph: nodes and hubs in step order, deps and gates
 * gathered as (owner, target) pairs and turned into per-owner lists. */
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "wi_graph.h"

#define grow tsa_grow

int wi_graph_add_node(wi_graph *g, const wi_node *n)
{
    if (g->n_nodes + 1 >= WI_MAX_ITEMS / 2 ||
        grow((void **)&g->nodes, g->n_nodes, &g->cap_nodes, sizeof *g->nodes))
        return -1;
    g->nodes[g->n_nodes] = *n;
    g->nodes[g->n_nodes].n_dep = 0;
    g->nodes[g->n_nodes].n_gate = 0;
    g->n_nodes++;
    return 0;
}

/* Pairs are kept as (owner, target) in the lists until wi_graph_finish. */
static int add_pair(uint32_t **arr, size_t *n, size_t *cap, uint32_t owner, uint32_t target)
{
    if (grow((void **)arr, *n + 1, cap, sizeof **arr))
        return -1;
    (*arr)[(*n)++] = owner;
    (*arr)[(*n)++] = target;
    return 0;
}

int wi_graph_add_dep(wi_graph *g, uint32_t node, uint32_t dep)
{
    return add_pair(&g->deps, &g->n_deps, &g->cap_deps, node, dep);
}

int wi_graph_add_gate(wi_graph *g, uint32_t node, uint32_t hub)
{
    return add_pair(&g->gates, &g->n_gates, &g->cap_gates, node, hub);
}

int wi_graph_add_hub(wi_graph *g, uint32_t step, const uint32_t *members, size_t n)
{
    if (grow((void **)&g->hubs, g->n_hubs, &g->cap_hubs, sizeof *g->hubs))
        return -1;
    while (g->n_members + n > g->cap_members) {
        size_t c = g->cap_members ? g->cap_members * 2 : 256;
        uint32_t *p = realloc(g->members, c * sizeof *p);
        if (!p)
            return -1;
        g->members = p;
        g->cap_members = c;
    }
    wi_hub *h = &g->hubs[g->n_hubs++];
    h->mem_first = (uint32_t)g->n_members;
    h->n_mem = (uint32_t)n;
    h->step = step;
    memcpy(g->members + g->n_members, members, n * sizeof *members);
    g->n_members += n;
    return 0;
}

/* (owner, target) pairs -> targets grouped by owner (counting sort, stable);
 * sets each owner's first/count through the callback's fields. */
static int to_lists(uint32_t **arr, size_t *n, size_t n_owners, wi_node *nodes, int gates)
{
    size_t pairs = *n / 2;
    uint32_t *out = malloc((pairs ? pairs : 1) * sizeof *out);
    uint32_t *pos = calloc(n_owners + 1, sizeof *pos);
    if (!out || !pos) {
        free(out);
        free(pos);
        return -1;
    }
    for (size_t i = 0; i < pairs; i++)
        pos[(*arr)[2 * i] + 1]++;
    for (size_t o = 0; o < n_owners; o++)
        pos[o + 1] += pos[o];
    for (size_t o = 0; o < n_owners; o++) {
        uint32_t cnt = pos[o + 1] - pos[o];
        if (gates) {
            nodes[o].gate_first = pos[o];
            nodes[o].n_gate = cnt;
        } else {
            nodes[o].dep_first = pos[o];
            nodes[o].n_dep = cnt;
        }
    }
    for (size_t i = 0; i < pairs; i++)
        out[pos[(*arr)[2 * i]]++] = (*arr)[2 * i + 1];
    free(pos);
    free(*arr);
    *arr = out;
    *n = pairs;
    return 0;
}

int wi_graph_finish(wi_graph *g)
{
    size_t S = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].step + 1 > S)
            S = g->nodes[i].step + 1;
    g->n_steps = S;
    g->step_node = calloc(S + 1, sizeof *g->step_node);
    g->step_hub = calloc(S + 1, sizeof *g->step_hub);
    if (!g->step_node || !g->step_hub)
        return -1;
    for (size_t i = 0; i < g->n_nodes; i++)
        g->step_node[g->nodes[i].step + 1]++;
    for (size_t h = 0; h < g->n_hubs; h++)
        if (g->hubs[h].step < S)
            g->step_hub[g->hubs[h].step + 1]++;
    for (size_t s = 0; s < S; s++) {
        g->step_node[s + 1] += g->step_node[s];
        g->step_hub[s + 1] += g->step_hub[s];
    }
    if (to_lists(&g->deps, &g->n_deps, g->n_nodes, g->nodes, 0) ||
        to_lists(&g->gates, &g->n_gates, g->n_nodes, g->nodes, 1))
        return -1;
    return 0;
}

void wi_graph_free(wi_graph *g)
{
    free(g->nodes);
    free(g->hubs);
    free(g->deps);
    free(g->gates);
    free(g->members);
    free(g->step_node);
    free(g->step_hub);
    free(g->order);
    free(g->step_order);
    memset(g, 0, sizeof *g);
}

int wi_times_alloc(wi_times *t, const wi_graph *g)
{
    t->start = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *t->start);
    t->end = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *t->end);
    t->open = malloc((g->n_hubs ? g->n_hubs : 1) * sizeof *t->open);
    if (!t->start || !t->end || !t->open) {
        wi_times_free(t);
        return -1;
    }
    return 0;
}

void wi_times_free(wi_times *t)
{
    free(t->start);
    free(t->end);
    free(t->open);
    memset(t, 0, sizeof *t);
}
