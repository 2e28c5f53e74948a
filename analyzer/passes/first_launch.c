#include "first_launch.h"

#include <stdlib.h>

#include "util/cmp.h"

int tsa_first_launches(const tsa_rank *r, tsa_ivset *out)
{
    tsa_ivset_clear(out);
    if (!r->n_kernels || !r->n_apis || !r->n_strings)
        return 0;
    uint8_t *seen = calloc(r->n_strings, 1);
    uint32_t *corr = malloc(r->n_kernels * sizeof *corr);
    size_t n = 0;
    int rc = 0;
    if (!seen || !corr) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < r->n_kernels; i++) {   /* sorted by start */
        const tsa_kernel *k = &r->kernels[i];
        if (k->name >= r->n_strings || seen[k->name])
            continue;
        seen[k->name] = 1;
        if (k->correlation)
            corr[n++] = k->correlation;
    }
    qsort(corr, n, sizeof *corr, tsa_cmp_u32);
    for (size_t i = 0; i < r->n_apis && !rc; i++) {
        uint32_t c = r->apis[i].correlation;
        if (c && bsearch(&c, corr, n, sizeof *corr, tsa_cmp_u32))
            rc = tsa_ivset_push(out, r->apis[i].start_ns, r->apis[i].end_ns);
    }
    tsa_ivset_normalize(out);
out:
    free(seen);
    free(corr);
    return rc ? -1 : 0;
}
