/* Ideal durations: what each operation takes when it runs like its peers.
 *
 * Communication: peers share (operation, bytes, communicator size); the
 * typical transfer is their median over all workers and steps.  GPU
 * compute: kernel by kernel, each against the same kernel (by name) on
 * every worker and step, so a node that ran a forward and a backward pass
 * back to back (the last stage, or any stage when the trace cannot say
 * which kernels are backward) is compared as well as one that ran either;
 * the node keeps its recorded gaps between kernels.  A kernel's typical
 * duration is its peers' mean, not their median, because work is
 * conserved: repartitioning a heavy stage or balancing tokens per
 * micro-batch (the fixes the findings give) moves work to the others and
 * leaves each at the mean; a median would promise the heavy stage's extra
 * work away (on the study's slow-stage job, 24% of the step instead of its
 * 15%: tests/whatif).  A single slow worker among N peers raises the mean
 * by its excess / N.  Host compute (no GPU records: only the time between
 * calls is known, and a stage's micro-batches cannot be told apart): each
 * worker's compute in a step is compared with the median worker-step, and
 * its pieces are scaled down by that ratio.  The gap an operation leaves
 * after its dependencies (a launch delay) is set to its peers' median (peers
 * by role signature), in every replay: a gap far beyond its peers' is a
 * wait for something the records do not show (a barrier, a host thread).
 *
 * Two durations come out: the typical one (for S: the job as its peers run
 * it, where an operation that was luckily fast takes its usual time too)
 * and the ideal one (never longer than the record, for the fixes: fixing a
 * worker makes nothing of it slower).  A kernel or signature seen fewer
 * than WI_MIN_PEERS times keeps its own durations. */
#include <stdlib.h>
#include <string.h>

#include "wi_internal.h"

#define WI_MIN_PEERS 3

typedef struct keyed {
    uint64_t sig;
    uint32_t node;
} keyed;

static int by_sig(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->sig != y->sig)
        return x->sig < y->sig ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static int per_signature(wi_build *b)
{
    wi_graph *g = &b->g;
    keyed *k = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *k);
    int64_t *vals = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *vals);
    if (!k || !vals) {
        free(k);
        free(vals);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const wi_node *v = &g->nodes[i];
        if (v->kind == WI_COMM || !b->host_mode[v->rank])
            k[n++] = (keyed){v->sig ^ ((uint64_t)v->kind << 63), (uint32_t)i};
    }
    if (n > 1)
        qsort(k, n, sizeof *k, by_sig);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && k[j].sig == k[i].sig)
            j++;
        if (j - i >= WI_MIN_PEERS) {
            for (size_t q = i; q < j; q++)
                vals[q - i] = g->nodes[k[q].node].dur;
            int64_t med = wi_median_i64(vals, j - i);
            for (size_t q = i; q < j; q++)
                vals[q - i] = g->nodes[k[q].node].gap;
            int64_t med_gap = wi_median_i64(vals, j - i);
            for (size_t q = i; q < j; q++) {
                wi_node *v = &g->nodes[k[q].node];
                v->typical = med;
                v->ideal = v->dur < med ? v->dur : med;
                v->ideal_gap = v->gap < med_gap ? v->gap : med_gap;
            }
        }
        i = j;
    }
    free(k);
    free(vals);
    return 0;
}

typedef struct name_mean {
    uint64_t name;
    double mean;
    size_t n;
} name_mean;

static int by_name(const void *a, const void *b)
{
    uint64_t x = ((const wi_kern *)a)->name, y = ((const wi_kern *)b)->name;
    return (x > y) - (x < y);
}

static int cmp_name_mean(const void *key, const void *elem)
{
    uint64_t x = *(const uint64_t *)key, y = ((const name_mean *)elem)->name;
    return (x > y) - (x < y);
}

/* GPU compute nodes: typical and ideal kernel by kernel (file comment). */
static int per_kernel(wi_build *b)
{
    size_t n = b->n_kerns;
    if (!n)
        return 0;
    wi_kern *sorted = malloc(n * sizeof *sorted);
    name_mean *t = malloc(n * sizeof *t);
    if (!sorted || !t) {
        free(sorted);
        free(t);
        return -1;
    }
    memcpy(sorted, b->kerns, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_name);
    size_t nt = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double sum = 0;
        for (; j < n && sorted[j].name == sorted[i].name; j++)
            sum += (double)sorted[j].dur;
        t[nt++] = (name_mean){sorted[i].name, sum / (double)(j - i), j - i};
        i = j;
    }
    free(sorted);
    wi_graph *g = &b->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        wi_node *v = &g->nodes[i];
        if (v->kind != WI_COMPUTE || b->host_mode[v->rank] || !v->n_k)
            continue;
        double typ = (double)v->dur, ideal = (double)v->dur;
        for (uint32_t q = 0; q < v->n_k; q++) {
            const wi_kern *kk = &b->kerns[v->k_first + q];
            const name_mean *m = bsearch(&kk->name, t, nt, sizeof *t, cmp_name_mean);
            if (!m || m->n < WI_MIN_PEERS)
                continue;
            typ += m->mean - (double)kk->dur;
            if (m->mean < (double)kk->dur)
                ideal += m->mean - (double)kk->dur;
        }
        v->typical = typ > 0 ? (int64_t)(typ + 0.5) : 0;
        v->ideal = ideal > 0 ? (int64_t)(ideal + 0.5) : 0;
        if (v->ideal > v->dur)
            v->ideal = v->dur;
    }
    free(t);
    return 0;
}

static int host_compute(wi_build *b)
{
    wi_graph *g = &b->g;
    size_t R = b->n_ranks, S = g->n_steps, cells = R * S;
    int64_t *w = calloc(cells ? cells : 1, sizeof *w);
    int64_t *vals = malloc((cells ? cells : 1) * sizeof *vals);
    if (!w || !vals) {
        free(w);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const wi_node *v = &g->nodes[i];
        if (v->kind == WI_COMPUTE && b->host_mode[v->rank])
            w[(size_t)v->rank * S + v->step] += v->dur;
    }
    size_t n = 0;
    for (size_t c = 0; c < cells; c++)
        if (w[c] > 0)
            vals[n++] = w[c];
    if (n >= WI_MIN_PEERS) {
        double med = (double)wi_median_i64(vals, n);
        for (size_t i = 0; i < g->n_nodes; i++) {
            wi_node *v = &g->nodes[i];
            if (v->kind != WI_COMPUTE || !b->host_mode[v->rank])
                continue;
            int64_t cell = w[(size_t)v->rank * S + v->step];
            if (cell <= 0)
                continue;
            v->typical = (int64_t)((double)v->dur * med / (double)cell);
            if (v->typical < v->dur)
                v->ideal = v->typical;
        }
    }
    free(w);
    free(vals);
    return 0;
}

int wi_set_ideal(wi_build *b)
{
    for (size_t i = 0; i < b->g.n_nodes; i++) {
        b->g.nodes[i].ideal = b->g.nodes[i].typical = b->g.nodes[i].dur;
        b->g.nodes[i].ideal_gap = b->g.nodes[i].gap;
    }
    if (per_signature(b) || per_kernel(b) || host_compute(b))
        return -1;
    return 0;
}
