/* Pipelines from the send/receive pairs: workers that exchange messages
 * are neighbouring stages.  The job is a pipeline job when every worker
 * lies on exactly one chain (degree at most two, no cycle: a ring of
 * sends is not a pipeline) and all chains have the same length of two
 * stages or more.  Stage 0 is the end that sends first: the forward pass
 * runs from it.  DP rank d is the chain whose lowest global rank is the
 * d-th lowest. */
#include <stdlib.h>
#include <string.h>

#include "wi_internal.h"

#define NB 2

typedef struct adj {
    int32_t nb[NB];
    int n;
    int bad;
} adj;

static void link_to(adj *a, int32_t x, int32_t y)
{
    for (int i = 0; i < a[x].n; i++)
        if (a[x].nb[i] == y)
            return;
    if (a[x].n == NB)
        a[x].bad = 1;
    else
        a[x].nb[a[x].n++] = y;
}

int wi_topology(const wi_build *b, int32_t *stage_of, int32_t *dp_of, size_t *n_stages,
                size_t *n_dp)
{
    size_t n = b->n_ranks;
    if (!b->n_pairs || n < 2)
        return 0;
    adj *a = calloc(n, sizeof *a);
    int32_t *chain = malloc(n * sizeof *chain), *pos = malloc(n * sizeof *pos);
    int64_t *first_send = malloc(n * sizeof *first_send);
    int32_t *first_to = malloc(n * sizeof *first_to);
    int ok = 0;
    if (!a || !chain || !pos || !first_send || !first_to)
        goto out;
    for (size_t i = 0; i < n; i++) {
        first_send[i] = INT64_MAX;
        first_to[i] = -1;
        chain[i] = -1;
    }
    for (size_t p = 0; p < b->n_pairs; p++) {
        const wi_pair *q = &b->pairs[p];
        if (q->sender == q->receiver)
            goto out;
        link_to(a, q->sender, q->receiver);
        link_to(a, q->receiver, q->sender);
        if (q->send_start < first_send[q->sender]) {
            first_send[q->sender] = q->send_start;
            first_to[q->sender] = q->receiver;
        }
    }
    size_t chains = 0, len = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].bad || !a[i].n)
            goto out;
        if (chain[i] >= 0 || a[i].n != 1)
            continue;
        /* walk from this end */
        int32_t prev = -1, cur = (int32_t)i;
        size_t k = 0;
        while (cur >= 0) {
            if (chain[cur] >= 0)
                goto out;
            chain[cur] = (int32_t)chains;
            pos[cur] = (int32_t)k++;
            int32_t next = -1;
            for (int j = 0; j < a[cur].n; j++)
                if (a[cur].nb[j] != prev)
                    next = a[cur].nb[j];
            prev = cur;
            cur = next;
        }
        if (chains && k != len)
            goto out;
        len = k;
        chains++;
    }
    for (size_t i = 0; i < n; i++)
        if (chain[i] < 0)   /* on a cycle */
            goto out;
    if (len < 2)
        goto out;
    /* orientation per chain: the earliest send goes from stage s to s + 1 */
    for (size_t c = 0; c < chains; c++) {
        int64_t best = INT64_MAX;
        int flip = 0;
        for (size_t i = 0; i < n; i++) {
            if (chain[i] != (int32_t)c)
                continue;
            if (first_send[i] < best && first_to[i] >= 0) {
                best = first_send[i];
                flip = pos[first_to[i]] < pos[i];
            }
        }
        for (size_t i = 0; i < n; i++)
            if (chain[i] == (int32_t)c)
                stage_of[i] = flip ? (int32_t)(len - 1) - pos[i] : pos[i];
    }
    /* DP ranks: chains ordered by their lowest rank index (job rank order) */
    int32_t *order = malloc(chains * sizeof *order);
    if (!order)
        goto out;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < k; j++)
            seen |= order[j] == chain[i];
        if (!seen)
            order[k++] = chain[i];
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++)
            if (order[j] == chain[i])
                dp_of[i] = (int32_t)j;
    free(order);
    *n_stages = len;
    *n_dp = chains;
    ok = 1;
out:
    free(a);
    free(chain);
    free(pos);
    free(first_send);
    free(first_to);
    return ok;
}
