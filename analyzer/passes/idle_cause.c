#include "idle_cause.h"

#include <string.h>

static int spans_of(const tsa_rank *r, int kind, int64_t w0, int64_t w1, tsa_ivset *out)
{
    tsa_ivset_clear(out);
    for (size_t i = 0; i < r->n_host_spans; i++) {
        const tsa_host_span *h = &r->host_spans[i];
        if (h->kind != kind || h->end_ns <= w0 || h->start_ns >= w1)
            continue;
        if (tsa_ivset_push(out, h->start_ns, h->end_ns))
            return -1;
    }
    tsa_ivset_normalize(out);
    return 0;
}

int tsa_idle_split(const tsa_rank *r, tsa_ivset *rest, int first, int last,
                   tsa_ivset out[TSA_HOST_KINDS])
{
    int rc = 0;
    tsa_ivset spans, left;
    tsa_ivset_init(&spans);
    tsa_ivset_init(&left);
    int64_t w0 = rest->n ? rest->v[0].s : 0, w1 = rest->n ? rest->v[rest->n - 1].e : 0;
    for (int k = first; k <= last && k < TSA_HOST_KINDS && !rc; k++) {
        tsa_ivset_clear(&out[k]);
        if (!rest->n || !r->n_host_spans)
            continue;
        rc = spans_of(r, k, w0, w1, &spans) || tsa_ivset_intersect(rest, &spans, &out[k]) ||
             tsa_ivset_subtract(rest, &out[k], &left) || tsa_ivset_copy(&left, rest);
    }
    tsa_ivset_free(&spans);
    tsa_ivset_free(&left);
    return rc ? -1 : 0;
}

int tsa_host_data_wait(const tsa_rank *r, int64_t w0, int64_t w1, const tsa_ivset *comm,
                       tsa_ivset *out)
{
    tsa_ivset spans;
    tsa_ivset_init(&spans);
    int rc = spans_of(r, TSA_HOST_DATA, w0, w1, &spans);
    if (!rc) {
        tsa_ivset_clip(&spans, w0, w1);
        tsa_ivset_clear(out);
        rc = tsa_ivset_subtract(&spans, comm, out);
    }
    tsa_ivset_free(&spans);
    return rc;
}

static const char *const labels[TSA_IDLE_COUNT][2] = {
    {"data_step_start", "GPU idle at step start"},
    {"data_loading", "data loading (DataLoader)"},
    {"sync", "synchronisation (.item(), stream sync, blocking copy)"},
    {"allocator", "allocator calls (cudaFree/cudaMalloc)"},
    {"cpu_ops", "CPU operators"},
    {"launch", "kernel launches"},
    {"first_launch", "first launches of kernels (module loading)"},
    {"python", "Python (no operator running)"},
    {"untraced", "nothing traced on the host"},
};

const char *tsa_idle_cause_label(tsa_idle_cause c)
{
    return (unsigned)c < TSA_IDLE_COUNT ? labels[c][1] : "?";
}

const char *tsa_idle_cause_key(tsa_idle_cause c)
{
    return (unsigned)c < TSA_IDLE_COUNT ? labels[c][0] : "?";
}
