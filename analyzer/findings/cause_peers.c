/* The cause rules' shared helpers (cause_peers.h). */
#include "cause_peers.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "crossrank/xr_internal.h"   /* medians */

const cm_rank *measure(cause_ctx *c, size_t i)
{
    if (!c->done[i]) {
        const tsa_rank *r = &c->a->job->ranks[i];
        tsa_rank *held = NULL;
        if (r->remote && !(r = held = c->runner->hold(c->runner->ctx, c->a, i)))
            return NULL;
        int rc = cm_measure(c->a, i, r, &c->m[i]);
        if (held)
            c->runner->release(c->runner->ctx, held);
        if (rc)
            return NULL;
        c->done[i] = 1;
    }
    return &c->m[i];
}

double median_of(cause_ctx *c, const size_t *idx, size_t n, figure_fn f)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double x = f(&c->m[idx[i]]);
        if (!isnan(x))
            c->scratch[k++] = x;
    }
    return k ? xr_median_d(c->scratch, k) : NAN;
}

int rel_above(double own, double peers)
{
    return !isnan(own) && !isnan(peers) && own > peers * (1 + TSA_TH_CAUSE_REL);
}

void cause_words(char *buf, size_t cap, int *at, const char *fmt, ...)
{
    if (*at < 0 || (size_t)*at >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, cap - (size_t)*at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at = (size_t)(*at + n) < cap ? *at + n : (int)cap - 1;
}
